"""Creating tensors: from data, filled with a value, ranges, and random numbers.

Random numbers are drawn on the CPU from a seedable generator and then moved, so the
same seed gives the same values on every device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .device import as_device
from .dtypes import as_dtype, get_default_dtype, int64
from .random import Generator, rng_of
from .tensor import Tensor


def _sizes(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _finish(array: np.ndarray, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """Cast, move to the device and wrap a host array."""
    target = as_dtype(dtype).np if dtype is not None else array.dtype
    dev = as_device(device)
    out = backend.get(dev).from_host(array, dev, target)  # a copy, even for 0-d arrays
    t = Tensor._from_array(out)
    t.requires_grad = requires_grad
    return t


def _infer_dtype(data: Any, array: np.ndarray) -> Any:
    """Python floats become the default float dtype; numpy inputs keep their dtype."""
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        return array.dtype
    if array.dtype.kind == "f":
        return get_default_dtype().np
    if array.dtype.kind in "iu":
        return np.int64
    return array.dtype


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays, tensors)."""
    if isinstance(data, Tensor):
        array = data.cpu()._data
    else:
        try:
            array = np.array(_plain(data))
        except ValueError as err:
            raise ValueError(
                f"tensor: cannot make a tensor from {type(data).__name__}: {err}"
            ) from err
    if array.dtype == object:
        raise TypeError(
            f"tensor: cannot make a tensor from data of mixed or unsupported types: {data!r}"
        )
    if dtype is None:
        dtype = _infer_dtype(data, array)
    return _finish(
        array, dtype, device or (data.device if isinstance(data, Tensor) else None), requires_grad
    )


def _plain(data: Any) -> Any:
    """Lists of tensors (e.g. ``tensor([a, b])``) become lists of their values."""
    if isinstance(data, Tensor):
        return data.cpu()._data
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a C-contiguous numpy array (changes show in both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError(
            f"from_numpy: the array (shape {array.shape}, strides {array.strides}) is not "
            "C-contiguous; pass np.ascontiguousarray(array)"
        )
    return Tensor._from_array(array)


def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if dtype is None:
        dtype = _infer_dtype(fill_value, np.asarray(fill_value))
    array = np.full(_sizes((size,)), fill_value)
    return _finish(array, dtype, device, requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full(_sizes(size), 0.0, dtype=dtype, device=device, requires_grad=requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full(_sizes(size), 1.0, dtype=dtype, device=device, requires_grad=requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uninitialised in PyTorch; zeros here, so that nothing depends on leftover memory."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None) -> Tensor:
    return _finish(np.eye(n, m), dtype or get_default_dtype(), device, False)


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """``arange(5)`` is 0..4; integers give int64, any float argument gives the default float."""
    if end is None:
        start, end = 0, start
    array = np.arange(start, end, step)
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if floats else int64
    return _finish(array, dtype, device, False)


def linspace(
    start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None
) -> Tensor:
    return _finish(np.linspace(start, end, steps), dtype or get_default_dtype(), device, False)


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform on [0, 1)."""
    array = rng_of(generator).random(_sizes(size))
    return _finish(array, dtype or get_default_dtype(), device, requires_grad)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal."""
    array = rng_of(generator).standard_normal(_sizes(size))
    return _finish(array, dtype or get_default_dtype(), device, requires_grad)


def randint(
    low: int,
    high: int,
    size: Any,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """Integers uniform on [low, high)."""
    array = rng_of(generator).integers(low, high, _sizes((size,)))
    return _finish(array, dtype or int64, device, False)


def randperm(n: int, *, generator: Generator | None = None, device: Any = None) -> Tensor:
    return _finish(rng_of(generator).permutation(n), int64, device, False)


def _like(fn: Any, t: Tensor, dtype: Any, device: Any, **kwargs: Any) -> Tensor:
    return fn(t.shape, dtype=dtype or t.dtype, device=device or t.device, **kwargs)


def zeros_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad=requires_grad)


def ones_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad=requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    return _like(zeros, t, dtype, device)


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device)


def rand_like(
    t: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    return _like(rand, t, dtype, device, generator=generator)


def randn_like(
    t: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    return _like(randn, t, dtype, device, generator=generator)
