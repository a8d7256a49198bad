"""Tensors made from host data: the three constructors under every factory function.

``from_host`` casts a numpy array, moves it to the device and wraps it; ``full`` is the
checked fill behind ``zeros``, ``ones``, ``empty`` and ``Tensor.new_*``; ``tensor`` copies
Python or numpy data. ``minitorch.creation`` builds the public factory functions on them, and
the random ops (``ops/random.py``) wrap their draws with ``from_host``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..checks import check_fill_value, describe
from ..device import as_device
from ..dtypes import as_dtype, get_default_dtype
from ..shape import as_sizes
from ..tensor import Tensor


def from_host(
    array: np.ndarray, dtype: Any, device: Any, requires_grad: bool, op: str = "tensor"
) -> Tensor:
    """Cast, move to the device and wrap a host array (``op`` names the caller in errors)."""
    target = as_dtype(dtype, op).np if dtype is not None else array.dtype
    dev = as_device(device, op)
    out = backend.get(dev).from_host(array, dev, target)  # a copy, even for 0-d arrays
    t = Tensor._from_array(out)
    t.requires_grad = requires_grad
    return t


def infer_dtype(data: Any, array: np.ndarray) -> Any:
    """Python floats become the default float dtype; numpy inputs keep their dtype."""
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        return array.dtype
    if array.dtype.kind == "f":
        return get_default_dtype().np
    if array.dtype.kind in "iu":
        return np.int64
    return array.dtype


def full(size: Any, fill_value: Any, dtype: Any, device: Any, requires_grad: Any, op: str):
    """A tensor of ``size`` holding ``fill_value``, which must fit ``dtype``."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if np.asarray(fill_value).dtype.kind not in "biuf" or np.ndim(fill_value) != 0:
        raise TypeError(f"{op}: fill_value must be a number, got {type(fill_value).__name__}")
    if dtype is None:
        dtype = infer_dtype(fill_value, np.asarray(fill_value))
    check_fill_value(fill_value, as_dtype(dtype, op), op)
    array = np.full(as_sizes((size,), op), fill_value)
    return from_host(array, dtype, device, requires_grad, op=op)


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
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise TypeError(
            f"tensor: cannot make a tensor from data of mixed or unsupported types "
            f"(numpy makes it {array.dtype}): {describe(data)}"
        )
    if dtype is None:
        dtype = infer_dtype(data, array)
    return from_host(
        array,
        dtype,
        device or (data.device if isinstance(data, Tensor) else None),
        requires_grad,
        op="tensor",
    )


def _plain(data: Any) -> Any:
    """Lists of tensors (e.g. ``tensor([a, b])``) become lists of their values."""
    if isinstance(data, Tensor):
        return data.cpu()._data
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data
