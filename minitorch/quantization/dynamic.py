"""``DynamicQuantizedLinear``: an ``nn.Linear`` whose weight is stored as int8, for inference.

PyTorch's ``torch.ao.nn.quantized.dynamic.Linear``. The weight is quantized once, when
the module is made from a float ``nn.Linear`` (``from_float``, which ``quantize_dynamic``
calls); the input is quantized at every call from its own range ("dynamic"), the matmul
runs on the integers and the result comes back as float32 (``linear_dynamic.py``).
With ``dtype=minitorch.float16`` the weight is stored in float16 instead and the matmul
runs in float32.

The module's state (``state_dict()``, ``minitorch.save``) is the quantized weight itself:
``_packed_params.weight`` (int8), ``_packed_params.weight_scale`` (float64) and
``_packed_params.weight_zero_point`` (int64), each 0-d for one scale per tensor or one per
output channel, and ``_packed_params.bias`` (float32): about a quarter of the float
model's bytes.
"""

from __future__ import annotations

from typing import Any

from ..creation import zeros
from ..dtypes import float16, float32
from ..nn import functional as F
from ..nn.linear import Linear as FloatLinear
from ..nn.module import Module
from ..shape import as_size
from ..tensor import Tensor
from .linear_dynamic import LinearDynamic
from .qconfig import QConfig, default_dynamic_qconfig
from .qtensor import QuantizedTensor, quantize_in_range, quantize_per_tensor
from .qtypes import dtype_name, is_qdtype, per_channel_affine, per_tensor_affine, qint8


def _check_dtype(op: str, dtype: Any) -> None:
    if not (is_qdtype(dtype, "qint8") or dtype is float16):
        raise RuntimeError(
            f"{op}: the only supported dtypes for dynamic quantized linear are minitorch.qint8 "
            f"and minitorch.float16, got: {dtype!r}"
        )


class LinearPackedParams(Module):
    """The weight and bias of a dynamically quantized Linear, held as buffers (see the
    module docstring), so that ``state_dict()``, ``to()`` and ``minitorch.save`` see them."""

    def __init__(self, dtype: Any = qint8) -> None:
        super().__init__()
        _check_dtype("LinearPackedParams", dtype)
        self.dtype = dtype

    def set_weight_bias(self, weight: QuantizedTensor | Tensor, bias: Tensor | None) -> None:
        """Store ``weight`` (a qint8 QuantizedTensor, per tensor or per output channel; a
        float tensor for dtype float16) and ``bias``; checked before anything changes."""
        op = "set_weight_bias"
        quantized = is_qdtype(self.dtype)
        qint8_weight = isinstance(weight, QuantizedTensor) and is_qdtype(weight.dtype, "qint8")
        if quantized and not qint8_weight:
            raise TypeError(f"{op}: expected a qint8 quantized weight, got {_describe(weight)}")
        if not quantized and not (isinstance(weight, Tensor) and weight.is_floating_point()):
            raise TypeError(f"{op}: expected a float weight, got {_describe(weight)}")
        if weight.ndim != 2:
            raise ValueError(f"{op}: expected a 2-d weight, got shape {tuple(weight.shape)}")
        if quantized and weight.qscheme().per_channel and weight.q_per_channel_axis() != 0:
            raise ValueError(
                f"{op}: a per-channel weight must be quantized along axis 0 (one scale per "
                f"output feature), got axis {weight.q_per_channel_axis()}"
            )
        if bias is not None and tuple(bias.shape) != (weight.shape[0],):
            raise ValueError(
                f"{op}: expected a bias of shape ({weight.shape[0]},) for a weight of shape "
                f"{tuple(weight.shape)}, got {tuple(bias.shape)}"
            )
        if quantized:
            self.register_buffer("weight", weight.int_repr())
            self.register_buffer("weight_scale", weight._scale)
            self.register_buffer("weight_zero_point", weight._zero_point)
        else:
            self.register_buffer("weight", weight.detach().to(float16))
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def _weight_bias(self) -> tuple[QuantizedTensor | Tensor, Tensor | None]:
        if not is_qdtype(self.dtype):
            return self.weight, self.bias
        scheme = per_channel_affine if self.weight_scale.ndim else per_tensor_affine
        weight = QuantizedTensor(self.weight, self.weight_scale, self.weight_zero_point, scheme, 0)
        return weight, self.bias

    def forward(self, x: Any) -> Any:
        return x

    def __repr__(self) -> str:
        return repr(self._weight_bias())


class Linear(Module):
    """A dynamically quantized ``nn.Linear`` (printed as ``DynamicQuantizedLinear``): make
    one with ``quantize_dynamic`` or ``Linear.from_float``; ``weight()`` and ``bias()``
    return the stored weight (a ``QuantizedTensor``) and bias."""

    _FLOAT_MODULE = FloatLinear

    def __init__(
        self, in_features: int, out_features: int, bias_: bool = True, dtype: Any = qint8
    ) -> None:
        super().__init__()
        _check_dtype("DynamicQuantizedLinear", dtype)
        self.in_features = as_size(in_features, "DynamicQuantizedLinear", "in_features")
        self.out_features = as_size(out_features, "DynamicQuantizedLinear", "out_features")
        weight = zeros(out_features, in_features)
        if is_qdtype(dtype):
            weight = quantize_per_tensor(weight, 1.0, 0, qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, zeros(out_features) if bias_ else None)

    def forward(self, x: Tensor) -> Tensor:
        params = self._packed_params
        if not isinstance(x, Tensor):
            raise TypeError(
                f"DynamicQuantizedLinear: expected a Tensor input, got {type(x).__name__}"
            )
        if is_qdtype(params.dtype):
            return LinearDynamic.apply(
                x, params.weight, params.weight_scale, params.weight_zero_point, params.bias
            )
        if x.dtype is not float32:
            raise RuntimeError(
                f"linear_dynamic_fp16: expected a float32 input, but got {x.dtype.name} (shape "
                f"{x.shape}); convert it with .float()"
            )
        return F.linear(x, params.weight.float(), params.bias)

    def weight(self) -> QuantizedTensor | Tensor:
        return self._packed_params._weight_bias()[0]

    def bias(self) -> Tensor | None:
        return self._packed_params.bias

    def _weight_bias(self) -> tuple[QuantizedTensor | Tensor, Tensor | None]:
        return self._packed_params._weight_bias()

    def set_weight_bias(self, weight: QuantizedTensor | Tensor, bias: Tensor | None) -> None:
        self._packed_params.set_weight_bias(weight, bias)

    def extra_repr(self) -> str:
        dtype = self._packed_params.dtype
        text = f"in_features={self.in_features}, out_features={self.out_features}, dtype={dtype!r}"
        if is_qdtype(dtype):
            text += f", qscheme={self.weight().qscheme()!r}"
        return text

    def __repr__(self) -> str:  # one line, as PyTorch prints it: the packed params hidden
        return f"DynamicQuantizedLinear({self.extra_repr()})"

    @classmethod
    def from_float(cls, mod: Module, qconfig: QConfig | None = None) -> Linear:
        """Quantize a float ``nn.Linear``: its weight with ``qconfig.weight``'s observer
        (``qconfig`` defaults to ``mod.qconfig``, then ``default_dynamic_qconfig``)."""
        if type(mod) is not FloatLinear:
            raise TypeError(
                f"DynamicQuantizedLinear.from_float only works for nn.Linear, got "
                f"{type(mod).__name__}"
            )
        qconfig = qconfig or getattr(mod, "qconfig", None) or default_dynamic_qconfig
        factory = qconfig.weight if qconfig.weight is not None else default_dynamic_qconfig.weight
        observer = factory()
        _check_dtype("DynamicQuantizedLinear.from_float", observer.dtype)
        weight = mod.weight.detach().float()
        if is_qdtype(observer.dtype):
            observer(weight)
            weight = quantize_weight(weight, observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(weight, mod.bias)
        return qlinear


def quantize_weight(weight: Tensor, observer: Any) -> QuantizedTensor:
    """``weight`` quantized with the scale(s) and zero point(s) ``observer`` chose, clamped
    to the observer's range (PyTorch's ``_quantize_weight``)."""
    scale, zero_point = observer.calculate_qparams()
    low, high = observer.quant_min, observer.quant_max
    if observer.qscheme.per_channel:
        axis = observer.ch_axis % weight.ndim
        return quantize_in_range(
            weight, scale.double(), zero_point, per_channel_affine, axis, low, high
        )
    return quantize_in_range(
        weight, scale.double().reshape(()), zero_point.reshape(()), per_tensor_affine, 0, low, high
    )


def _describe(value: Any) -> str:
    if isinstance(value, (Tensor, QuantizedTensor)):
        return f"a {dtype_name(value.dtype)} tensor of shape {tuple(value.shape)}"
    return type(value).__name__
