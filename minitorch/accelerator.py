"""``minitorch.accelerator``: PyTorch's device-neutral view of the machine's accelerator
(newer tutorials write ``if torch.accelerator.is_available(): x.to(
torch.accelerator.current_accelerator())``). The accelerator here is CUDA when a GPU is
there; without one there is none: ``current_accelerator()`` is None, as in PyTorch."""

from __future__ import annotations

from typing import Any

from . import cuda
from .device import device as _device

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "is_available",
    "synchronize",
]


def is_available() -> bool:
    """Is there an accelerator (a GPU)?"""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Any:
    """``device(type='cuda')`` on a machine with a GPU, else None."""
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices there are (0 without a GPU)."""
    return cuda.device_count() if cuda.is_available() else 0


def _require(op: str) -> None:
    if not cuda.is_available():
        raise RuntimeError(
            f"accelerator.{op}: Cannot access accelerator device when none is available."
        )


def current_device_index() -> int:
    """The index of the accelerator in use (an error without one, as in PyTorch)."""
    _require("current_device_index")
    return cuda.current_device()


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator's queued work (an error without one, as in PyTorch)."""
    _require("synchronize")
    cuda.synchronize()
