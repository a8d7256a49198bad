"""Storage: the flat, 1-d block of memory that one or more tensors look into."""

from __future__ import annotations

from typing import Any

from . import backend
from .device import device
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
        self.device: device = backend.of_array(array).device_of(array)
        self.version = 0

    @property
    def dtype(self) -> dtype:
        return from_numpy_dtype(self.array.dtype)

    def __len__(self) -> int:
        return self.array.shape[0]

    def data_ptr(self) -> int:
        """Address of the first element (two tensors share memory when these agree)."""
        return backend.of_array(self.array).data_ptr(self.array)

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
    if 0 in shape:  # an empty view reads nothing, wherever its offset points
        offset, strides = 0, (0,) * len(shape)
    array = storage.array
    return backend.of_array(array).strided_view(array, shape, strides, offset)
