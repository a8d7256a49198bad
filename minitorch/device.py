"""Devices and their array backends: numpy for ``cpu``, cupy for ``cuda``."""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType

import numpy as np


class device:  # noqa: N801 - PyTorch's spelling
    """Where a tensor's storage lives: ``device("cpu")`` or ``device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | device, index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        kind, _, idx = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'cuda' or 'cuda:N'")
        if idx:
            index = int(idx)
        if kind == "cuda" and index is None:
            index = 0
        self.type = kind
        self.index = index if kind == "cuda" else None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}'"
            + ("" if self.index is None else f", index={self.index}")
            + ")"
        )


CPU = device("cpu")


@lru_cache(maxsize=1)
def _cupy() -> ModuleType | None:
    try:
        import cupy
    except Exception:  # not installed, or installed without a working CUDA runtime
        return None
    try:
        return cupy if cupy.cuda.is_available() else None
    except Exception:
        return None


class cuda:  # noqa: N801 - mirrors torch.cuda as a namespace
    """``minitorch.cuda.is_available()`` as in PyTorch."""

    @staticmethod
    def is_available() -> bool:
        return _cupy() is not None

    @staticmethod
    def device_count() -> int:
        cp = _cupy()
        return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def as_device(spec: str | device | None) -> device:
    """Normalise ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a device (None means cpu)."""
    if spec is None:
        return CPU
    return spec if isinstance(spec, device) else device(spec)


def array_module(dev: device) -> ModuleType:
    """The array library that computes on ``dev``: numpy or cupy."""
    if dev.type == "cpu":
        return np
    cp = _cupy()
    if cp is None:
        raise RuntimeError(
            f"device {dev} is not available: minitorch uses cupy for CUDA, and "
            "cupy with a working GPU was not found. Install the 'cuda' extra on a "
            "machine with an NVIDIA GPU, or stay on device='cpu'."
        )
    return cp


def device_of_array(array: object) -> device:
    """The device a backend array lives on."""
    if isinstance(array, np.ndarray):
        return CPU
    return device("cuda", array.device.id)  # a cupy array


def array_module_of(*arrays: object) -> ModuleType:
    """numpy, unless one of ``arrays`` is a cupy array (Python scalars count as neither)."""
    for a in arrays:
        if hasattr(a, "__cuda_array_interface__"):
            return _cupy() or np
    return np
