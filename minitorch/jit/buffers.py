"""Output arrays handed out again once nobody holds them.

Fresh memory is not free: a new array of a megabyte or more is mapped from the operating
system page by page as it is first written, and that costs about as much as the work of a
cheap op on it (this machine: 1-2 ms of a 9 ms training step of the MLP block, in eager
mode). A kernel of a compiled graph makes arrays of the same shapes call after call, so
it keeps the ones it made (a few per thread) and hands one out again as soon as nothing
else refers to it: no Tensor, no view, no saved value of autograd. CPython counts the
references to every object, so "nothing else" is known exactly, not guessed.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

#: Arrays smaller than this come fresh from numpy (malloc reuses small blocks itself).
REUSE_BYTES = 64 * 1024
#: How many arrays each kernel keeps per thread.
DEPTH = 4


def _first_free(arrays: list, shape: tuple, dtype: Any, free: int) -> Any:
    """The first array in ``arrays`` of this shape and dtype that only ``arrays`` holds
    (``free``: what ``sys.getrefcount`` says here of such an array)."""
    for a in arrays:
        if sys.getrefcount(a) == free and a.shape == shape and a.dtype == dtype:
            return a
    return None


def _count_of_a_free_array() -> int:
    """``free`` for ``_first_free``, found by asking it about an array nothing else holds
    (so it holds whatever the interpreter's version counts)."""
    probe = np.empty(1)
    for free in range(1, 16):
        if _first_free([probe], probe.shape, probe.dtype, free + 1) is probe:
            return free  # (the name ``probe`` here is one reference more)
    raise RuntimeError("buffers: could not tell a free array by its reference count")


_FREE = _count_of_a_free_array()
#: Only where references are counted (CPython); elsewhere every array is fresh.
ENABLED = sys.implementation.name == "cpython"


class Reuse:
    """The arrays one kernel made, per thread; ``empty`` hands out a free one or a new one."""

    def __init__(self) -> None:
        self._local = threading.local()

    def empty(self, shape: tuple, dtype: Any) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype`` (like ``np.empty``)."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        if not ENABLED or int(np.prod(shape)) * dtype.itemsize < REUSE_BYTES:
            return np.empty(shape, dtype)
        arrays = getattr(self._local, "arrays", None)
        if arrays is None:
            arrays = self._local.arrays = []
        found = _first_free(arrays, shape, dtype, _FREE)
        if found is not None:
            return found
        found = np.empty(shape, dtype)
        arrays.append(found)
        if len(arrays) > DEPTH:
            del arrays[0]
        return found

    def clear(self) -> None:
        """Forget this thread's arrays (their memory goes once nothing holds them)."""
        self._local.arrays = []
