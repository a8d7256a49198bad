"""Data types: PyTorch's names over the backend's (numpy/cupy) dtypes.

numpy has no bfloat16; the ``ml-dtypes`` package adds it to numpy (on the CPU). cupy has
none at all, so bfloat16 tensors live on the CPU only (``.to("cuda")`` says so). ml-dtypes
takes about half a second to import, and most programs never touch bfloat16, so it is
imported the first time ``bfloat16.np`` is read.
Mixed-dtype operands are promoted as in PyTorch (``result_type``).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

#: The package name dtypes (and ``Size``) print with: ``minitorch.float32``, or
#: ``torch.float32`` when PyTorch code runs on minitorch (``minitorch.as_torch``).
display_name = "minitorch"


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
        return is_floating(self.np)

    #: True for the quantized types (``qint8``, ``quint8``), which no ordinary tensor has.
    is_quantized = False

    def __repr__(self) -> str:
        return f"{display_name}.{self.name}"

    def __reduce__(self):  # dtypes are singletons; copying one gives the same object
        return (_by_name, (self.name,))


class _LazyDtype(dtype):
    """A dtype whose numpy type comes from a package imported on first use (ml-dtypes)."""

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        self._module = module
        self._np: np.dtype | None = None

    @property
    def np(self) -> np.dtype:  # type: ignore[override]
        if self._np is None:
            import importlib

            self._np = np.dtype(getattr(importlib.import_module(self._module), self.name))
            _BY_NP[self._np] = self
        return self._np


class _QuantizedDtype(dtype):
    """``qint8`` / ``quint8``: the element types of quantized tensors, 8-bit integers that
    stand for real numbers (``minitorch.quantization``); no ordinary tensor has them."""

    is_quantized = True


float16 = dtype("float16", np.float16)
bfloat16 = _LazyDtype("bfloat16", "ml_dtypes")
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name

qint8 = _QuantizedDtype("qint8", np.int8)
quint8 = _QuantizedDtype("quint8", np.uint8)

# PyTorch's other names of the same types (``torch.float`` is ``torch.float32``).
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

_ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool)
_BY_NP = {d.np: d for d in _ALL if d is not bfloat16}  # bfloat16's is added on first use
_default_float = float32
_NAMES = {d.name: d for d in _ALL}


def is_floating(np_dtype: np.dtype) -> builtins.bool:
    """Whether a backend dtype is floating (numpy calls ml-dtypes' bfloat16 kind "V")."""
    return np_dtype.kind == "f" or (np_dtype.kind == "V" and np_dtype.name == "bfloat16")


def _by_name(name: str) -> dtype:
    return next(d for d in (*_ALL, qint8, quint8) if d.name == name)


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The minitorch dtype for a backend array's dtype (float64 arrays stay float64)."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        if np.dtype(np_dtype).name == "bfloat16" and np.dtype(np_dtype) == bfloat16.np:
            return bfloat16
        names = ", ".join(d.name for d in _ALL)
        raise TypeError(
            f"unsupported element type {np_dtype}; minitorch supports {names}"
        ) from None


def as_dtype(value: object, op: str = "dtype") -> dtype:
    """Accept a minitorch dtype, a numpy dtype, a Python type or a name like ``"float32"``;
    anything else is a TypeError naming ``op``."""
    if isinstance(value, dtype):
        if value.is_quantized:
            raise TypeError(
                f"{op}: {value!r} is a quantized dtype: quantized tensors are made by "
                "minitorch.quantization (quantize_per_tensor, quantize_dynamic), not by "
                "tensor creation or .to()"
            )
        return value
    if value is builtins.float:
        return _default_float
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool
    if isinstance(value, str) and value in _NAMES:
        return _NAMES[value]
    if value is None or isinstance(value, (builtins.int, builtins.float, list, tuple, dict)):
        raise TypeError(
            f"{op}: {type(value).__name__} {value!r} is not a dtype; use e.g. minitorch.float32"
        )
    try:
        return from_numpy_dtype(np.dtype(value))
    except (TypeError, ValueError):
        raise TypeError(
            f"{op}: {type(value).__name__} {value!r} is not a dtype; use e.g. minitorch.float32"
        ) from None


def get_default_dtype() -> dtype:
    """The floating dtype used when none is given (float32, as in PyTorch)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Change the default floating dtype (``minitorch.float32`` or ``minitorch.float64``)."""
    global _default_float
    d = as_dtype(d, "set_default_dtype")
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating dtypes can be the default, got {d}")
    _default_float = d


# --- type promotion, as PyTorch does it ---------------------------------------------------
def _category(d: dtype) -> builtins.int:
    """0 for bool, 1 for integers, 2 for floating types."""
    return 0 if d is bool else 2 if d.is_floating_point else 1


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to without losing their kind:
    bool < integers < floats; float16 with bfloat16 is float32 (neither holds the other)."""
    a, b = as_dtype(a, "promote_types"), as_dtype(b, "promote_types")
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    return from_numpy_dtype(np.promote_types(a.np, b.np))


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Operands of a lower priority group change the result only by raising its category."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if _category(higher) == 2:
        return higher
    if higher is bool or _category(lower) == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: object) -> dtype:
    """The dtype of a binary op's result, by PyTorch's rules.

    Operands rank in three groups: tensors with dims, zero-dim tensors, Python numbers.
    Within a group dtypes promote (``promote_types``); a lower group matters only when its
    category (bool < int < float) is higher: ``float16 tensor + float32 0-d tensor`` is
    float16, ``int64 tensor + 2.5`` is the default float dtype.
    """
    groups: list[dtype | None] = [None, None, None]  # dims, zero-dim, Python numbers
    for x in operands:
        if isinstance(x, builtins.bool):
            d, g = bool, 2
        elif isinstance(x, builtins.int):
            d, g = int64, 2
        elif isinstance(x, builtins.float):
            d, g = _default_float, 2
        else:
            d = x.dtype if isinstance(x.dtype, dtype) else from_numpy_dtype(x.dtype)
            g = 0 if x.ndim else 1
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    result = _combine(groups[0], _combine(groups[1], groups[2]))
    if result is None:
        raise TypeError("result_type: expected at least one tensor or number")
    return result


class finfo:  # noqa: N801 - PyTorch's spelling
    """Machine limits of a floating dtype: ``minitorch.finfo(minitorch.float16).max``.

    ``bits``, ``eps`` (the gap after 1.0), ``max``, ``min``, ``tiny`` / ``smallest_normal``
    (below it numbers lose precision) and ``smallest_subnormal`` (below it they flush to 0).
    """

    def __init__(self, d: dtype = None) -> None:
        d = _default_float if d is None else as_dtype(d, "finfo")
        if not d.is_floating_point:
            raise TypeError(f"finfo: {d} is not a floating dtype; use a float dtype")
        if d is bfloat16:
            import ml_dtypes

            info = ml_dtypes.finfo(d.np)
        else:
            info = np.finfo(d.np)
        self.dtype = d
        self.bits = d.itemsize * 8
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.smallest_subnormal = builtins.float(info.smallest_subnormal)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.nmant = builtins.int(info.nmant)  # stored mantissa bits

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype.name})"
        )


class iinfo:  # noqa: N801 - PyTorch's spelling
    """Limits of an integer dtype: ``minitorch.iinfo(minitorch.int8).min`` (``bits``,
    ``min``, ``max``)."""

    def __init__(self, d: dtype) -> None:
        d = as_dtype(d, "iinfo")
        if d.is_floating_point or d is bool:
            raise TypeError(f"iinfo: {d} is not an integer dtype; use finfo for floats")
        info = np.iinfo(d.np)
        self.dtype = d
        self.bits = builtins.int(info.bits)
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype.name})"  # (as torch)
