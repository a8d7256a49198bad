"""Quantized tensors: 8-bit integers with a scale and a zero point.

``quantize_per_tensor(x, scale, zero_point, qint8)`` maps each value to the nearest
integer to ``x / scale + zero_point``, clamped into the type's range; ``dequantize`` maps
back, ``(q - zero_point) * scale``, so each value comes back within ``scale / 2`` of
where it was (when it was inside the representable range). Per-channel quantization
(``quantize_per_channel``) gives every slice along ``axis`` its own scale and zero point.

The rounding is PyTorch's on x86 (fbgemm's), so the integers are the ones
``torch.quantize_per_tensor(...).int_repr()`` holds: ``x * (1 / scale) + zero_point``
with the reciprocal in float32, rounded half to even once the zero point is added (a
value halfway between two integers goes to the even one: 81.5 -> 82, where rounding
before adding an odd zero point would give 81). Per tensor the product and the sum are
rounded together (a fused multiply-add, as fbgemm's vector code does); per channel the
product is rounded to float32 first (ATen's loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import array_module_of
from ..creation import tensor as as_tensor_data
from ..dtypes import float32, float64, int64
from ..function import Context, Function
from ..ops.registry import register
from ..tensor import Tensor
from .qtypes import (
    is_qdtype,
    per_channel_affine,
    per_tensor_affine,
    qint8,
    qscheme,
    quint8,
    range_of,
)


def round_to_grid(
    x: Any, inverse: Any, zero_point: Any, low: int, high: int, fused: bool = True
) -> Any:
    """``clamp(round(x * inverse + zero_point), low, high)``, as float32 integers: with
    ``fused`` the product and sum are rounded once (computed in float64, where the product
    of two float32s is exact), else the product is rounded to float32 first."""
    xp = array_module_of(x)
    if fused:
        t = (x.astype(xp.float64) * inverse.astype(xp.float64) + zero_point).astype(xp.float32)
    else:
        t = x * inverse + xp.asarray(zero_point, dtype=xp.float32)
    return xp.clip(xp.rint(t), low, high)


class Quantize(Function):
    """``clamp(round(x / scale + zero_point), quant_min, quant_max)`` as 8-bit integers
    (rounded as the module docstring says); ``scale`` and ``zero_point`` broadcast
    against ``x``: one per tensor, or one per channel (``per_channel``)."""

    differentiable = False

    @staticmethod
    def forward(
        ctx: Context,
        x: Any,
        scale: Any,
        zero_point: Any,
        quant_min: int,
        quant_max: int,
        per_channel: bool = False,
    ) -> Any:
        xp = array_module_of(x)
        inverse = xp.float32(1) / xp.asarray(scale, dtype=xp.float32)
        zero_point = xp.asarray(zero_point, dtype=xp.float32)
        q = round_to_grid(x, inverse, zero_point, quant_min, quant_max, fused=not per_channel)
        return q.astype(xp.int8 if quant_min < 0 else xp.uint8)


register(Quantize)


class QuantizedTensor:
    """What ``quantize_per_tensor`` / ``quantize_per_channel`` return (PyTorch's quantized
    tensor, reduced to what dynamic quantization needs): the integers (``int_repr()``),
    the scale(s) and zero point(s), ``dequantize()``. It is not a ``Tensor``: ops don't
    take it; dequantize it first."""

    is_quantized = True

    def __init__(
        self, int_repr: Tensor, scale: Tensor, zero_point: Tensor, scheme: qscheme, axis: int
    ) -> None:
        self._int_repr = int_repr
        self._scale = scale  # float64, 0-d per tensor, (channels,) per channel
        self._zero_point = zero_point  # int64, the same shape
        self._qscheme = scheme
        self._axis = axis
        self.dtype = qint8 if int_repr.dtype.name == "int8" else quint8

    @property
    def shape(self) -> Any:
        return self._int_repr.shape

    @property
    def ndim(self) -> int:
        return self._int_repr.ndim

    @property
    def device(self) -> Any:
        return self._int_repr.device

    def size(self, dim: int | None = None) -> Any:
        return self._int_repr.size(dim) if dim is not None else self._int_repr.size()

    def dim(self) -> int:
        return self._int_repr.ndim

    def numel(self) -> int:
        return self._int_repr.numel()

    def qscheme(self) -> qscheme:
        return self._qscheme

    def int_repr(self) -> Tensor:
        """The stored integers, as an int8 (qint8) or uint8 (quint8) tensor."""
        return self._int_repr

    def q_scale(self) -> float:
        self._need_per_tensor("q_scale")
        return self._scale.item()

    def q_zero_point(self) -> int:
        self._need_per_tensor("q_zero_point")
        return int(self._zero_point.item())

    def q_per_channel_scales(self) -> Tensor:
        self._need_per_channel("q_per_channel_scales")
        return self._scale

    def q_per_channel_zero_points(self) -> Tensor:
        self._need_per_channel("q_per_channel_zero_points")
        return self._zero_point

    def q_per_channel_axis(self) -> int:
        self._need_per_channel("q_per_channel_axis")
        return self._axis

    def dequantize(self) -> Tensor:
        """``(q - zero_point) * scale`` as float32."""
        scale, zero_point = (
            _along(self._scale.float(), self._axis, self.ndim),
            _along(self._zero_point.float(), self._axis, self.ndim),
        )
        return (self._int_repr.float() - zero_point) * scale

    def _refuse(self, op: str) -> RuntimeError:
        return RuntimeError(
            f"{op}: not supported on a quantized tensor (shape {tuple(self.shape)}, "
            f"{self.dtype}); compute on qt.dequantize() (a float Tensor) instead"
        )

    def __getattr__(self, name: str) -> Any:
        """A Tensor method that a quantized tensor lacks: an error naming it, in PyTorch's
        manner, rather than Python's bare AttributeError."""
        if not name.startswith("_") and callable(getattr(Tensor, name, None)):

            def refused(*args: Any, **kwargs: Any) -> Any:
                raise self._refuse(name)

            return refused
        raise AttributeError(f"'QuantizedTensor' object has no attribute {name!r}")

    def _need_per_tensor(self, method: str) -> None:
        if self._qscheme.per_channel:
            raise RuntimeError(
                f"{method}: the tensor is quantized {self._qscheme.name}; use "
                f"q_per_channel_{'scales' if method == 'q_scale' else 'zero_points'}()"
            )

    def _need_per_channel(self, method: str) -> None:
        if not self._qscheme.per_channel:
            raise RuntimeError(
                f"{method}: the tensor is quantized {self._qscheme.name}; use "
                f"{'q_zero_point' if 'zero' in method else 'q_scale'}()"
            )

    def __repr__(self) -> str:
        values = repr(self.dequantize())[:-1]  # "tensor([...])" without its ")"
        indent = " " * len("tensor(")
        if self._qscheme.per_channel:
            params = f"scale={self._scale!r}, zero_point={self._zero_point!r}, axis={self._axis}"
        else:
            params = f"scale={self.q_scale()}, zero_point={self.q_zero_point()}"
        return (
            f"{values}, size={tuple(self.shape)}, dtype={self.dtype!r},\n{indent}"
            f"quantization_scheme={self._qscheme!r}, {params})"
        )


def _along(values: Tensor, axis: int, ndim: int) -> Tensor:
    """Per-channel values shaped to broadcast along ``axis`` of an ``ndim``-d tensor."""
    if values.ndim == 0:
        return values
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return values.reshape(shape)


def quantize_per_tensor(
    input: Tensor,  # noqa: A002 - PyTorch's name
    scale: float,
    zero_point: int,
    dtype: Any,
) -> QuantizedTensor:
    """Quantize ``input`` with one ``scale`` and ``zero_point`` (PyTorch's function)."""
    op = "quantize_per_tensor"
    low, high = _check_quantize_args(op, input, dtype)
    scale = _as_scale(op, scale)
    zero_point = _as_zero_point(op, zero_point, low, high)
    return quantize_in_range(
        input,
        as_tensor_data(scale, dtype=float64, device=input.device),
        as_tensor_data(zero_point, dtype=int64, device=input.device),
        per_tensor_affine, 0, low, high,
    )  # fmt: skip


def quantize_per_channel(
    input: Tensor,  # noqa: A002 - PyTorch's name
    scales: Tensor,
    zero_points: Tensor,
    axis: int,
    dtype: Any,
) -> QuantizedTensor:
    """Quantize each slice of ``input`` along ``axis`` with its own scale and zero point."""
    op = "quantize_per_channel"
    low, high = _check_quantize_args(op, input, dtype)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -input.ndim <= axis < input.ndim:
        raise ValueError(
            f"{op}: axis must be an int in [{-input.ndim}, {input.ndim - 1}] for an input of "
            f"shape {input.shape}, got {axis!r}"
        )
    axis %= input.ndim
    channels = input.shape[axis]
    scales = _channel_values(op, "scales", scales, channels, float64, input)
    zero_points = _channel_values(op, "zero_points", zero_points, channels, int64, input)
    s, z = scales.cpu().numpy(), zero_points.cpu().numpy()
    if not _usable_scales(s).all():
        raise ValueError(
            f"{op}: every scale must be positive and finite (and not so small that 1/scale "
            f"overflows float32), got {s.tolist()}"
        )
    if ((z < low) | (z > high)).any():
        raise ValueError(
            f"{op}: zero_points must lie in [{low}, {high}] for {dtype!r}, got {z.tolist()}"
        )
    return quantize_in_range(input, scales, zero_points, per_channel_affine, axis, low, high)


def quantize_in_range(
    x: Tensor, scale: Tensor, zero_point: Tensor, scheme: qscheme, axis: int, low: int, high: int
) -> QuantizedTensor:
    """Quantize ``x`` (checked already) into ``[low, high]``: a narrower range than the
    dtype's when an observer asks for one (``quant_min``/``quant_max``, ``reduce_range``)."""
    q = Quantize.apply(
        x.detach(), _along(scale, axis, x.ndim), _along(zero_point, axis, x.ndim), low, high,
        scheme.per_channel,
    )  # fmt: skip
    return QuantizedTensor(q, scale, zero_point, scheme, axis)


def _check_quantize_args(op: str, input: Any, dtype: Any) -> tuple[int, int]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype is not float32:
        raise RuntimeError(
            f"{op}: quantizing takes a float32 tensor, got {input.dtype.name} (shape "
            f"{input.shape}); convert it with .float()"
        )
    if not is_qdtype(dtype):
        raise RuntimeError(
            f"{op}: dtype must be minitorch.qint8 or minitorch.quint8, got {dtype!r}"
        )
    return range_of(dtype)


def _as_scale(op: str, scale: Any) -> float:
    if isinstance(scale, Tensor) and scale.numel() == 1:
        scale = scale.item()
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)):
        raise TypeError(f"{op}: scale must be a number, got {type(scale).__name__}")
    scale = float(scale)
    if not _usable_scales(np.array(scale)):
        raise ValueError(
            f"{op}: scale must be positive and finite (and not so small that 1/scale "
            f"overflows float32), got {scale}"
        )
    return scale


def _usable_scales(scales: np.ndarray) -> np.ndarray:
    """Scales that quantizing can use: positive and finite in float32, with a finite
    reciprocal (at least float32's smallest normal number)."""
    with np.errstate(over="ignore"):
        as_float32 = scales.astype(np.float32)
    return np.isfinite(as_float32) & (as_float32 >= np.finfo(np.float32).tiny)


def _as_zero_point(op: str, zero_point: Any, low: int, high: int) -> int:
    if isinstance(zero_point, Tensor) and zero_point.numel() == 1:
        zero_point = zero_point.item()
    if isinstance(zero_point, bool) or not isinstance(zero_point, (int, np.integer)):
        raise TypeError(f"{op}: zero_point must be an int, got {type(zero_point).__name__}")
    if not low <= zero_point <= high:
        raise ValueError(f"{op}: zero_point must lie in [{low}, {high}], got {zero_point}")
    return int(zero_point)


def _channel_values(
    op: str, name: str, values: Any, channels: int, dtype: Any, like: Tensor
) -> Tensor:
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}: {name} must be a 1-d Tensor, got {type(values).__name__}")
    if tuple(values.shape) != (channels,):
        raise ValueError(
            f"{op}: expected {channels} {name} (one per channel along axis), got shape "
            f"{values.shape}"
        )
    return values.detach().to(dtype=dtype, device=like.device)


def _refusing(op: str) -> Any:
    def method(self: QuantizedTensor, *args: Any) -> Any:
        raise self._refuse(op)

    method.__name__ = f"__{op}__"
    return method


#: Arithmetic on a QuantizedTensor is refused by name (``qt + 1`` says 'add: not supported
#: on a quantized tensor'), as PyTorch refuses most ops on quantized tensors.
for _dunder, _op in {
    "add": "add", "radd": "add", "sub": "sub", "rsub": "sub", "mul": "mul", "rmul": "mul",
    "truediv": "div", "rtruediv": "div", "floordiv": "floor_divide", "mod": "remainder",
    "pow": "pow", "rpow": "pow", "matmul": "matmul", "rmatmul": "matmul", "neg": "neg",
    "abs": "abs", "getitem": "getitem", "setitem": "setitem", "lt": "lt", "le": "le",
    "gt": "gt", "ge": "ge", "iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_",
}.items():  # fmt: skip
    setattr(QuantizedTensor, f"__{_dunder}__", _refusing(_op))
