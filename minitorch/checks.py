"""Checking what users pass in: one helper per kind of argument, each naming the op.

Every public entry point that takes a hyper-parameter, a flag, a callable or a tensor
checks it here, so a bad value fails at the call that took it (``SGD(lr="0.1")``), with
the op and the value in the message, rather than later and elsewhere (``'<' not supported
between 'str' and 'int'`` inside ``step``). Sizes and shapes are ``shape.as_size`` and
``shape.as_sizes``; dims are ``shape.normalize_dim``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "as_bool",
    "as_callable",
    "as_number",
    "as_reduction",
    "as_tensor",
    "check_fill_value",
    "check_indices",
    "describe",
]


def describe(value: Any) -> str:
    """``str 'x'``, ``list [1, 2]``: a value's type and a short repr for messages."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def as_number(
    value: Any,
    op: str,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    finite: bool = True,
) -> float:
    """A real hyper-parameter (``lr``, ``eps``, ``p``...), checked: a number (not a bool or a
    string), finite, inside ``[low, high]`` (ends open where asked). Returns it unchanged
    (an int stays an int), so state dicts and reprs keep what the user wrote."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        if _is_scalar_tensor(value):
            value = value.item()
        else:
            kind = "an int" if integer else "a number"
            raise TypeError(f"{op}: {name} must be {kind}, but got {describe(value)}")
    if integer and not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, but got {describe(value)}")
    if math.isnan(value) or (finite and math.isinf(value)):
        raise ValueError(f"{op}: {name} must be a finite number, but got {name}={value}")
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if below or above:
        raise ValueError(
            f"{op}: {name} must be {_interval(low, high, low_open, high_open)}, but got "
            f"{name}={value}"
        )
    return value


def _interval(low: Any, high: Any, low_open: bool, high_open: bool) -> str:
    if high is None:
        return f"{'>' if low_open else '>='} {low}"
    if low is None:
        return f"{'<' if high_open else '<='} {high}"
    return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"


class _NoTensorYet:
    """What ``tensor_class`` is until tensor.py defines ``Tensor``."""


#: ``minitorch.Tensor``, which tensor.py registers (``register_tensor_class``) right after
#: defining it: this module sits below tensor.py, which imports it, so it can't import Tensor.
tensor_class: type = _NoTensorYet


def register_tensor_class(cls: type) -> None:
    """Let the checks here recognize tensors (tensor.py calls this once)."""
    global tensor_class
    tensor_class = cls


def _is_scalar_tensor(value: Any) -> bool:
    return isinstance(value, tensor_class) and value.numel() == 1 and value.dtype.name != "bool"


def as_bool(value: Any, op: str, name: str) -> bool:
    """A flag: a bool (numpy's too), refusing ``"no"``, which Python would call true."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be a bool, but got {describe(value)}")
    return bool(value)


def as_callable(value: Any, op: str, name: str) -> Callable:
    """A function argument, refused at once rather than when first called."""
    if not callable(value):
        raise TypeError(f"{op}: {name} must be callable, but got {describe(value)}")
    return value


def as_tensor(value: Any, op: str, name: str = "input") -> Any:
    """A Tensor argument, as PyTorch's ``argument 'input' must be Tensor, not list``."""
    if not isinstance(value, tensor_class):
        raise TypeError(f"{op}: argument '{name}' must be a Tensor, but got {describe(value)}")
    return value


REDUCTIONS = ("mean", "sum", "none")


def as_reduction(value: Any, op: str) -> str:
    """A loss's ``reduction``: 'mean', 'sum' or 'none'."""
    if not isinstance(value, str) or value not in REDUCTIONS:
        raise ValueError(
            f"{op}: reduction must be 'mean', 'sum' or 'none', but got {describe(value)}"
        )
    return value


def check_indices(
    index: Any, size: int, dim: int, op: str, error: type = RuntimeError, negative: bool = False
) -> None:
    """Every entry of the integer tensor ``index`` lies in ``0 .. size - 1``: the one index
    rule of every indexing op (gather, scatter, index_select, index_add, embedding...). As in
    PyTorch, a negative index is out of bounds there, never read from the end; the few ops
    that read it from the end (take, take_along_dim, index_fill) pass ``negative=True``,
    which allows ``-size .. -1`` too."""
    if not index.numel():
        return
    values = index.detach().cpu().numpy()
    low, high = int(values.min()), int(values.max())
    if low < (-size if negative else 0) or high >= size:
        bad = high if high >= size else low
        raise error(f"{op}: index {bad} is out of bounds for dimension {dim} with size {size}")


def check_fill_value(value: Any, dtype: Any, op: str) -> None:
    """A number written into a tensor of ``dtype`` (fill, full, masked_fill, scatter's value)
    must fit it, as PyTorch's checked conversion: an integer dtype takes no NaN/inf and no
    value outside its range, a float dtype no finite value past its largest; bool takes any.
    The message names ``op``; the caller writes the value with numpy's wrapping cast."""
    if isinstance(value, tensor_class):
        if value.numel() != 1:
            return
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if dtype.name == "bool" or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if dtype.is_floating_point:
        largest = float(np.finfo(dtype.np).max)
        overflow = math.isfinite(value) and abs(value) > largest
    else:  # an unsigned dtype also takes -max..-1, wrapping them (c10's checked_convert)
        info = np.iinfo(dtype.np)
        low = info.min if info.min else -int(info.max)
        overflow = not math.isfinite(value) or not low <= math.trunc(value) <= info.max
    if overflow:
        raise RuntimeError(
            f"{op}: value {value!r} cannot be converted to type {dtype.name} without overflow"
        )
