"""``minitorch.cpu``: PyTorch's ``torch.cpu`` (the CPU as a device module, like
``torch.cuda``): ``is_available``, ``device_count``, ``current_device``, ``synchronize``
(nothing to wait for), and ``cpu.amp.autocast``, the older spelling of
``amp.autocast("cpu", ...)``."""

from __future__ import annotations

from typing import Any

from . import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """The CPU is always there."""
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """CPU ops finish before they return: there is nothing to wait for."""
