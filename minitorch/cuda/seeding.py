"""``torch.cuda``'s seeding and device-choice functions, as PyTorch has them.

minitorch draws the random numbers of every device from the one CPU generator and moves
them (``minitorch.manual_seed`` seeds CUDA tensors' draws too), so ``cuda.manual_seed``
and its relatives only check the seed, on a GPU or not: PyTorch's are silent no-ops without
a GPU, and programs call them next to ``manual_seed`` either way. What needs a device
(``set_device(0)``, ``get_device_capability``) raises without one, naming the call, as
``current_device`` does (:mod:`minitorch.cuda.memory`); ``is_bf16_supported()`` is False.
"""

from __future__ import annotations

from typing import Any

from ..device import as_device
from .memory import _cupy


def _check_seed(seed: Any, op: str) -> int:
    """A seed PyTorch takes: anything ``int()`` reads (it raises ValueError otherwise)."""
    try:
        return int(seed)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{op}: the seed must be an int, but got {seed!r:.40}") from err


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: minitorch's GPU draws come from the CPU generator
    (``minitorch.manual_seed``), so this only checks ``seed``."""
    _check_seed(seed, "cuda.manual_seed")


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: see :func:`manual_seed`."""
    _check_seed(seed, "cuda.manual_seed_all")


def seed() -> None:
    """Seed the GPU generator from entropy: nothing to do (see :func:`manual_seed`)."""


seed_all = seed


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the GPU computes in bfloat16: False without a GPU, as PyTorch's; on one,
    True from compute capability 8.0 (Ampere) on, or emulated on older ones."""
    if _cupy() is None:
        return False
    return including_emulation or get_device_capability() >= (8, 0)


def _index(device: Any, op: str) -> int:
    """The GPU index of ``device`` (an int, ``'cuda:1'``, a device); -1 for 'none'."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    dev = as_device(device, op)
    if dev.type != "cuda":
        raise ValueError(f"{op}: expected a cuda device, but got: {dev}")
    return dev.index or 0


def set_device(device: Any) -> None:
    """Make ``device`` the current GPU. A negative index is a no-op (as in PyTorch); any
    other needs a GPU."""
    index = _index(device, "cuda.set_device")
    if index < 0:
        return
    cp = _cupy("cuda.set_device")
    cp.cuda.Device(index).use()


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability as (major, minor), e.g. (9, 0) for an H100."""
    cp = _cupy("cuda.get_device_capability")
    index = cp.cuda.Device().id if device is None else _index(device, "get_device_capability")
    capability = cp.cuda.Device(index).compute_capability  # e.g. "90"
    return int(capability[:-1]), int(capability[-1])
