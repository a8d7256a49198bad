"""Observers: watch a tensor's values and choose its ``scale`` and ``zero_point``.

An observer is called on tensors (``observer(weight)``) and keeps their running minimum
and maximum; ``calculate_qparams()`` turns that range into quantization parameters, with
PyTorch's formulas (``torch.ao.quantization.observer``) in float32:

- symmetric: ``scale = max(|min|, |max|) / ((quant_max - quant_min) / 2)``, zero point 0
  (128 for quint8), so that 0.0 is exactly representable and the range is centred on it;
- affine: ``scale = (max - min) / (quant_max - quant_min)``,
  ``zero_point = quant_min - round(min / scale)``: the whole range ``[min, max]``
  (widened to contain 0) maps onto ``[quant_min, quant_max]``.

Either way ``scale`` is at least ``eps``, so a tensor of zeros still gets a usable scale.
``Observer.with_args(...)`` makes a factory (what a ``QConfig`` holds), because each
module needs its own observer.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..creation import tensor
from ..dtypes import float16, float32, int64
from ..tensor import Tensor
from .qtypes import (
    is_qdtype,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    qscheme,
    quint8,
    range_of,
)

_EPS = float(np.finfo(np.float32).eps)


class _PartialWrapper:
    """``Observer.with_args(**kwargs)``: calling it makes a new observer with those arguments."""

    def __init__(self, cls: type, kwargs: dict) -> None:
        self.cls, self.kwargs = cls, kwargs

    def __call__(self, **kwargs: Any) -> Any:
        return self.cls(**{**self.kwargs, **kwargs})

    def with_args(self, **kwargs: Any) -> _PartialWrapper:
        return _PartialWrapper(self.cls, {**self.kwargs, **kwargs})

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.cls.__name__}.with_args({args})"


class ObserverBase:
    """Base of observers: ``dtype`` is what the observed tensor is quantized to."""

    def __init__(self, dtype: Any, is_dynamic: bool = False) -> None:
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @classmethod
    def with_args(cls, **kwargs: Any) -> _PartialWrapper:
        """A factory of observers with these constructor arguments (for a ``QConfig``)."""
        return _PartialWrapper(cls, kwargs)

    def __call__(self, x: Tensor) -> Tensor:
        return self.forward(x)

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        raise NotImplementedError


class PlaceholderObserver(ObserverBase):
    """Records nothing: it only says which dtype to use. Dynamic quantization's activation
    observer is one (``is_dynamic=True``): the input's range is measured at every call."""

    def __init__(
        self,
        dtype: Any = float32,
        quant_min: int | None = None,
        quant_max: int | None = None,
        qscheme: qscheme | None = None,
        eps: float | None = None,
        is_dynamic: bool = False,
    ) -> None:
        super().__init__(dtype, is_dynamic)
        self.quant_min, self.quant_max = quant_min, quant_max
        self.qscheme, self.eps = qscheme, eps

    def forward(self, x: Tensor) -> Tensor:
        return x

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        raise RuntimeError("calculate_qparams should not be called for PlaceholderObserver")

    def __repr__(self) -> str:
        return f"PlaceholderObserver(dtype={self.dtype!r}, is_dynamic={self.is_dynamic})"


class _UniformObserver(ObserverBase):
    """Min/max observers: scale and zero point from the observed range (see the module)."""

    _SCHEMES: tuple[qscheme, ...] = ()

    def __init__(
        self,
        dtype: Any = quint8,
        qscheme: qscheme = per_tensor_affine,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
    ) -> None:
        name = type(self).__name__
        if not is_qdtype(dtype):
            raise ValueError(
                f"{name}: dtype must be minitorch.qint8 or minitorch.quint8, got {dtype!r}"
            )
        if qscheme not in self._SCHEMES:
            allowed = ", ".join(repr(s) for s in self._SCHEMES)
            raise NotImplementedError(f"{name}: qscheme must be one of {allowed}, got {qscheme!r}")
        if qscheme.symmetric and reduce_range and is_qdtype(dtype, "quint8"):
            raise NotImplementedError(
                f"{name}: cannot reduce range for symmetric quantization for quint8"
            )
        if not (isinstance(eps, (int, float)) and eps > 0):
            raise ValueError(f"{name}: eps must be a positive number, got {eps!r}")
        super().__init__(dtype, is_dynamic)
        self.qscheme = qscheme
        self.reduce_range = bool(reduce_range)
        self.eps = float(eps)
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _quant_range(
            name, dtype, quant_min, quant_max, self.reduce_range
        )

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        """``(scale, zero_point)`` for the range seen so far: float32 and int64 tensors, of
        shape (1,) per tensor or (channels,) per channel."""
        low = self.min_val.cpu().numpy().astype(np.float32).reshape(-1)
        high = self.max_val.cpu().numpy().astype(np.float32).reshape(-1)
        device = self.min_val.device
        if low.size == 0 or (not self.qscheme.per_channel and low[0] == np.inf):
            warnings.warn(
                f"{type(self).__name__}: must run observer before calling calculate_qparams. "
                "Returning default values.",
                stacklevel=2,
            )
            return tensor([1.0], device=device), tensor([0], dtype=int64, device=device)
        scale, zero_point = self._qparams(low, high)
        return tensor(scale, device=device), tensor(zero_point, dtype=int64, device=device)

    def _qparams(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        qmin, qmax = self.quant_min, self.quant_max
        eps = np.float32(self.eps)
        min_neg = np.minimum(low, np.float32(0))
        max_pos = np.maximum(high, np.float32(0))
        if self.qscheme.symmetric:
            max_pos = np.maximum(-min_neg, max_pos)
            scale = np.maximum(max_pos / np.float32((qmax - qmin) / 2), eps)
            middle = (qmin + qmax) // 2 if self.has_customized_qrange else 128
            zero = middle if is_qdtype(self.dtype, "quint8") else 0
            zero_point = np.full(scale.shape, zero, dtype=np.int64)
        else:
            scale = np.maximum((max_pos - min_neg) / np.float32(qmax - qmin), eps)
            zero_point = qmin - np.rint(min_neg / scale).astype(np.int64)
            zero_point = np.clip(zero_point, qmin, qmax)
        return scale.astype(np.float32), zero_point

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


class MinMaxObserver(_UniformObserver):
    """Scale and zero point from the running min and max of everything observed."""

    _SCHEMES = (per_tensor_affine, per_tensor_symmetric)

    def __init__(self, dtype: Any = quint8, qscheme: qscheme = per_tensor_affine, **kwargs: Any):
        super().__init__(dtype, qscheme, **kwargs)
        self.min_val = tensor(float("inf"))
        self.max_val = tensor(float("-inf"))

    def forward(self, x_orig: Tensor) -> Tensor:
        x = _observed(type(self).__name__, x_orig)
        if x.numel() == 0:
            return x_orig
        self.min_val = x.min().minimum(self.min_val.to(device=x.device))
        self.max_val = x.max().maximum(self.max_val.to(device=x.device))
        return x_orig


class PerChannelMinMaxObserver(_UniformObserver):
    """A min and max per slice along ``ch_axis`` (a Linear weight's output rows, axis 0)."""

    _SCHEMES = (per_channel_affine, per_channel_symmetric)

    def __init__(
        self,
        ch_axis: int = 0,
        dtype: Any = quint8,
        qscheme: qscheme = per_channel_affine,
        **kwargs: Any,
    ) -> None:
        super().__init__(dtype, qscheme, **kwargs)
        if isinstance(ch_axis, bool) or not isinstance(ch_axis, int):
            raise TypeError(f"PerChannelMinMaxObserver: ch_axis must be an int, got {ch_axis!r}")
        self.ch_axis = ch_axis
        self.min_val = tensor([])
        self.max_val = tensor([])

    def forward(self, x_orig: Tensor) -> Tensor:
        x = _observed(type(self).__name__, x_orig)
        if not -x.ndim <= self.ch_axis < x.ndim:
            raise IndexError(
                f"PerChannelMinMaxObserver: ch_axis {self.ch_axis} is out of range for an input "
                f"of shape {x.shape}"
            )
        rows = x.transpose(0, self.ch_axis).flatten(1) if x.ndim > 1 else x.reshape(-1, 1)
        low, high = rows.min(dim=1).values, rows.max(dim=1).values
        if self.min_val.numel() == low.numel():
            low = low.minimum(self.min_val.to(device=x.device))
            high = high.maximum(self.max_val.to(device=x.device))
        elif self.min_val.numel():
            raise RuntimeError(
                f"PerChannelMinMaxObserver: observed {self.min_val.numel()} channels before, "
                f"got {low.numel()} now (input shape {x.shape}, ch_axis {self.ch_axis})"
            )
        self.min_val, self.max_val = low, high
        return x_orig


def _observed(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating point tensor, got {x.dtype.name}")
    return x.detach().float()


def _quant_range(
    name: str, dtype: Any, quant_min: int | None, quant_max: int | None, reduce_range: bool
) -> tuple[int, int]:
    """PyTorch's ``calculate_qmin_qmax``: the dtype's range (one bit less with
    ``reduce_range``), or the user's ``[quant_min, quant_max]``, which must contain 0."""
    low, high = range_of(dtype)
    if quant_min is None and quant_max is None:
        return (low // 2, high // 2) if reduce_range else (low, high)
    if quant_min is None or quant_max is None:
        raise ValueError(f"{name}: give both quant_min and quant_max, or neither")
    if not quant_min <= 0 <= quant_max or quant_min >= quant_max:
        raise ValueError(
            f"{name}: the range [quant_min, quant_max] must contain 0 and quant_min < quant_max, "
            f"got [{quant_min}, {quant_max}]"
        )
    if quant_min < low or quant_max > high:
        raise ValueError(
            f"{name}: [{quant_min}, {quant_max}] is outside the range of {dtype!r}, [{low}, {high}]"
        )
    return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=qint8, qscheme=per_channel_symmetric
)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=quint8, quant_min=0, quant_max=255, is_dynamic=True
)
default_placeholder_observer = PlaceholderObserver
float16_weight_observer = PlaceholderObserver.with_args(dtype=float16)
