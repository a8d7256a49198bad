"""The backend seam: one ``Backend`` per device type, chosen in one place.

A backend knows its array module (numpy for ``cpu``, cupy for ``cuda``), whether its
device is there, how to view and move its arrays, and which *kernels* it provides. An op's
``forward`` is its default kernel, written once against the array API that numpy and cupy
share; a backend may register a faster kernel for an op (chapter 07 does, for ``cuda``)
and ``Function.apply`` will call it instead, without the op changing::

    minitorch.backend.get("cuda").register_kernel(ops.Add, my_add_kernel)  # (a, b) -> array

Everything cupy-specific in minitorch lives in this module.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from .device import CPU, device


class Backend:
    """What one device type computes with: an array module, device detection, kernels."""

    type: str = ""

    def __init__(self) -> None:
        self.kernels: dict[type, Callable] = {}

    # --- detection ------------------------------------------------------------------------
    def is_available(self) -> bool:
        raise NotImplementedError

    def device_count(self) -> int:
        raise NotImplementedError

    @property
    def xp(self) -> ModuleType:
        """The array module (numpy-compatible) that computes on this device."""
        raise NotImplementedError

    # --- kernels ----------------------------------------------------------------------------
    def register_kernel(self, op: type, kernel: Callable) -> None:
        """Run ``kernel(*arrays, **params)`` instead of ``op.forward`` on this device.

        The kernel is a pure array function, as the op's forward is: only ops written in the
        pure style (with ``setup_context``) take kernels, so what backward needs is set up
        by the op itself whichever kernel ran."""
        if getattr(op, "setup_context", None) is None:
            raise TypeError(
                f"register_kernel: {getattr(op, '__name__', op)!r} has no setup_context, so its "
                "forward also fills ctx and can't be swapped for a pure kernel; write the op "
                "as forward(*arrays) + setup_context(ctx, inputs, output)"
            )
        if not callable(kernel):
            raise TypeError(f"register_kernel: the kernel must be callable, got {kernel!r}")
        self.kernels[op] = kernel
        _registered.add(self.type)

    def unregister_kernel(self, op: type) -> None:
        self.kernels.pop(op, None)
        if not self.kernels:
            _registered.discard(self.type)

    # --- arrays -----------------------------------------------------------------------------
    def strided_view(self, flat: Any, shape: tuple, strides: tuple, offset: int) -> Any:
        """An array reading the 1-d ``flat`` with ``shape``, element ``strides`` and ``offset``."""
        raise NotImplementedError

    def scatter_add(self, out: Any, index: tuple, values: Any) -> None:
        """``out[index] += values`` where repeated positions each add."""
        raise NotImplementedError

    def to_host(self, array: Any) -> np.ndarray:
        raise NotImplementedError

    def from_host(self, array: Any, dev: device, dtype: Any = None) -> Any:
        raise NotImplementedError

    def device_of(self, array: Any) -> device:
        raise NotImplementedError

    def data_ptr(self, array: Any) -> int:
        raise NotImplementedError


class NumpyBackend(Backend):
    """The CPU: numpy arrays, always available."""

    type = "cpu"

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    @property
    def xp(self) -> ModuleType:
        return np

    def strided_view(self, flat: Any, shape: tuple, strides: tuple, offset: int) -> Any:
        size = flat.itemsize
        return np.ndarray(
            shape,
            dtype=flat.dtype,
            buffer=flat,
            offset=offset * size,
            strides=tuple(s * size for s in strides),
        )

    def scatter_add(self, out: Any, index: tuple, values: Any) -> None:
        np.add.at(out, index, values)

    def to_host(self, array: Any) -> np.ndarray:
        return array

    def from_host(self, array: Any, dev: device, dtype: Any = None) -> Any:
        return np.array(array, dtype=dtype, order="C")

    def device_of(self, array: Any) -> device:
        return CPU

    def data_ptr(self, array: Any) -> int:
        return array.__array_interface__["data"][0]


class CupyBackend(Backend):
    """NVIDIA GPUs through cupy, when it is installed and finds a working GPU."""

    type = "cuda"

    def is_available(self) -> bool:
        return _cupy() is not None

    def device_count(self) -> int:
        cp = _cupy()
        return 0 if cp is None else cp.cuda.runtime.getDeviceCount()

    @property
    def xp(self) -> ModuleType:
        cp = _cupy()
        if cp is None:
            raise RuntimeError(f"device cuda is not available: {MISSING_CUPY}")
        return cp

    def strided_view(self, flat: Any, shape: tuple, strides: tuple, offset: int) -> Any:
        size = flat.itemsize
        return self.xp.ndarray(
            shape,
            dtype=flat.dtype,
            memptr=flat.data + offset * size,
            strides=tuple(s * size for s in strides),
        )

    def scatter_add(self, out: Any, index: tuple, values: Any) -> None:
        import cupyx  # only on a machine with cupy (this backend is in use)

        cupyx.scatter_add(out, index, values)

    def to_host(self, array: Any) -> np.ndarray:
        return array.get()

    def from_host(self, array: Any, dev: device, dtype: Any = None) -> Any:
        cp = array_module(dev)
        with cp.cuda.Device(dev.index):
            return cp.array(array, dtype=dtype, order="C")

    def device_of(self, array: Any) -> device:
        return device("cuda", array.device.id)

    def data_ptr(self, array: Any) -> int:
        return array.data.ptr


MISSING_CUPY = (
    "minitorch uses cupy for CUDA, and cupy with a working GPU was not found. Install the "
    "'cuda' extra on a machine with an NVIDIA GPU, or stay on device='cpu'."
)


@lru_cache(maxsize=1)
def _cupy() -> ModuleType | None:
    try:
        import cupy  # optional: the 'cuda' extra
    except Exception:  # not installed, or installed without a working CUDA runtime
        return None
    try:
        return cupy if cupy.cuda.is_available() else None
    except Exception:
        return None


BACKENDS: dict[str, Backend] = {"cpu": NumpyBackend(), "cuda": CupyBackend()}
_registered: set[str] = set()  # device types with at least one registered kernel


def get(device_type: str | device) -> Backend:
    """The backend of a device type (``"cpu"``, ``"cuda"``) or of a device."""
    key = device_type.type if isinstance(device_type, device) else str(device_type)
    try:
        return BACKENDS[key.partition(":")[0]]
    except KeyError:
        raise ValueError(f"no backend for device type {device_type!r}") from None


def kernel_for(op: type, device_type: str) -> Callable | None:
    """The kernel a backend registered for ``op``, or None (then ``op.forward`` runs)."""
    if device_type not in _registered:
        return None
    return BACKENDS[device_type].kernels.get(op)


def of_array(array: Any) -> Backend:
    """The backend an array belongs to."""
    if isinstance(array, np.ndarray):
        return BACKENDS["cpu"]
    return BACKENDS["cuda"] if hasattr(array, "__cuda_array_interface__") else BACKENDS["cpu"]


def array_module(dev: device) -> ModuleType:
    """The array library that computes on ``dev``: numpy or cupy."""
    b = get(dev.type)
    if not b.is_available():
        raise RuntimeError(f"device {dev} is not available: {MISSING_CUPY}")
    return b.xp


def array_module_of(*arrays: object) -> ModuleType:
    """numpy, unless one of ``arrays`` is a cupy array (Python scalars count as neither)."""
    for a in arrays:
        if hasattr(a, "__cuda_array_interface__"):
            return _cupy() or np
    return np


class cuda:  # noqa: N801 - mirrors torch.cuda as a namespace
    """``minitorch.cuda.is_available()`` as in PyTorch."""

    @staticmethod
    def is_available() -> bool:
        return BACKENDS["cuda"].is_available()

    @staticmethod
    def device_count() -> int:
        return BACKENDS["cuda"].device_count()
