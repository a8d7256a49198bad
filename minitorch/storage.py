"""Storage: the flat, 1-d block of memory that one or more tensors look into."""

from __future__ import annotations

from typing import Any

import numpy as np

from .device import device, device_of_array
from .dtypes import dtype, from_numpy_dtype


class Storage:
    """A 1-d contiguous backend array (numpy or cupy) shared by a tensor and all its views.

    ``version`` counts in-place writes; autograd uses it to notice that a tensor saved
    for backward was modified afterwards.
    """

    __slots__ = ("array", "device", "version")

    def __init__(self, array: Any) -> None:
        if array.ndim != 1:
            raise ValueError(f"Storage: expected a 1-d array, got shape {array.shape}")
        self.array = array
        self.device: device = device_of_array(array)
        self.version = 0

    @property
    def dtype(self) -> dtype:
        return from_numpy_dtype(self.array.dtype)

    def __len__(self) -> int:
        return self.array.shape[0]

    def data_ptr(self) -> int:
        """Address of the first element (two tensors share memory when these agree)."""
        if isinstance(self.array, np.ndarray):
            return self.array.__array_interface__["data"][0]
        return self.array.data.ptr

    def tolist(self) -> list:
        return self.array.tolist()

    def __repr__(self) -> str:
        items = self.array[:8].tolist()
        more = ", ..." if len(self) > 8 else ""
        body = ", ".join(repr(x) for x in items)
        return (
            f"Storage([{body}{more}], size={len(self)}, dtype={self.dtype}, device='{self.device}')"
        )


def strided_view(storage: Storage, shape: tuple, strides: tuple, offset: int) -> Any:
    """A backend array over ``storage`` that reads it with ``shape``, ``strides`` and ``offset``.

    Strides and offset count elements (as in PyTorch); numpy and cupy count bytes.
    """
    array = storage.array
    size = array.itemsize
    if 0 in shape:  # an empty view reads nothing, wherever its offset points
        offset, strides = 0, (0,) * len(shape)
    if isinstance(array, np.ndarray):
        return np.ndarray(
            shape,
            dtype=array.dtype,
            buffer=array,
            offset=offset * size,
            strides=tuple(s * size for s in strides),
        )
    import cupy

    return cupy.ndarray(
        shape,
        dtype=array.dtype,
        memptr=array.data + offset * size,
        strides=tuple(s * size for s in strides),
    )
