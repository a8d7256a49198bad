"""Data types: PyTorch's names over the backend's (numpy/cupy) dtypes."""

from __future__ import annotations

import builtins

import numpy as np


class dtype:  # noqa: N801 - PyTorch's spelling
    """A tensor element type such as ``minitorch.float32``; wraps a numpy dtype."""

    def __init__(self, name: str, np_dtype: np.dtype) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.np.kind == "f"

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):  # dtypes are singletons; copying one gives the same object
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name

half, float, double = float16, float32, float64  # noqa: A001
long, int = int64, int32  # noqa: A001

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool)
_BY_NP = {d.np: d for d in _ALL}
_default_float = float32


def _by_name(name: str) -> dtype:
    return next(d for d in _ALL if d.name == name)


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The minitorch dtype for a backend array's dtype (float64 arrays stay float64)."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        names = ", ".join(d.name for d in _ALL)
        raise TypeError(
            f"unsupported element type {np_dtype}; minitorch supports {names}"
        ) from None


def as_dtype(value: object) -> dtype:
    """Accept a minitorch dtype, a numpy dtype, a Python type or a name like ``"float32"``."""
    if isinstance(value, dtype):
        return value
    if value is builtins.float:
        return _default_float
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool
    try:
        return from_numpy_dtype(np.dtype(value))
    except TypeError:
        raise TypeError(f"{value!r} is not a dtype; use e.g. minitorch.float32") from None


def get_default_dtype() -> dtype:
    """The floating dtype used when none is given (float32, as in PyTorch)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Change the default floating dtype (``minitorch.float32`` or ``minitorch.float64``)."""
    global _default_float
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating dtypes can be the default, got {d}")
    _default_float = d
