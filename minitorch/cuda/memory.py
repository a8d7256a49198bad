"""``torch.cuda``'s memory and device functions, as PyTorch has them.

On a GPU (cupy) they ask cupy's memory pool: ``memory_allocated()`` is the bytes in use,
``memory_reserved()`` the bytes the pool holds, ``empty_cache()`` gives the unused blocks
back to the driver. Without a GPU they behave as PyTorch's do on such a machine: there is
nothing to free and nothing allocated (0 bytes), and what needs a device
(``synchronize``, ``current_device``, ``memory_summary``) raises.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .. import backend as _backend

_NO_GPU = (
    "{op}: CUDA is not available (no NVIDIA GPU, or cupy is not installed); minitorch runs "
    "on the CPU here"
)


def _cupy(op: str | None = None) -> Any:
    """cupy when a GPU is there; None (or an error naming ``op``) when it is not."""
    cp = _backend._cupy()
    if cp is None and op is not None:
        raise RuntimeError(_NO_GPU.format(op=op))
    return cp


def empty_cache() -> None:
    """Give the memory pool's unused blocks back to the GPU (nothing to do without one)."""
    cp = _cupy()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on the GPU (0 without one)."""
    cp = _cupy()
    return 0 if cp is None else int(cp.get_default_memory_pool().used_bytes())


def memory_reserved(device: Any = None) -> int:
    """Bytes the memory pool holds, in use or cached (0 without a GPU)."""
    cp = _cupy()
    return 0 if cp is None else int(cp.get_default_memory_pool().total_bytes())


def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated``: 0 without a GPU. cupy keeps no peak, so on a GPU
    this is refused rather than guessed."""
    if _cupy() is None:
        return 0
    raise NotImplementedError(
        "max_memory_allocated: cupy's memory pool does not track its peak; sample "
        "memory_allocated() where you want to know it"
    )


def max_memory_reserved(device: Any = None) -> int:
    """The peak of ``memory_reserved``: 0 without a GPU (refused on one, as above)."""
    if _cupy() is None:
        return 0
    raise NotImplementedError("max_memory_reserved: cupy's memory pool does not track its peak")


def reset_peak_memory_stats(device: Any = None) -> None:
    """Nothing to reset: minitorch keeps no peak statistics."""


reset_max_memory_allocated = reset_peak_memory_stats


def memory_stats(device: Any = None) -> OrderedDict:
    """The pool's counters (empty without a GPU, as in PyTorch)."""
    cp = _cupy()
    if cp is None:
        return OrderedDict()
    pool = cp.get_default_memory_pool()
    return OrderedDict(
        [
            ("allocated_bytes.all.current", int(pool.used_bytes())),
            ("reserved_bytes.all.current", int(pool.total_bytes())),
        ]
    )


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A short table of the memory pool (needs a GPU: PyTorch fails without one too)."""
    _cupy("memory_summary")
    stats = memory_stats()
    lines = ["minitorch CUDA memory summary (cupy's default memory pool)"]
    lines += [f"  {name:32s} {value:>14,d} bytes" for name, value in stats.items()]
    return "\n".join(lines)


def synchronize(device: Any = None) -> None:
    """Wait for the GPU to finish everything queued on it."""
    _cupy("synchronize").cuda.Device().synchronize()


def current_device() -> int:
    """The index of the GPU cupy uses now."""
    return int(_cupy("current_device").cuda.Device().id)


def get_device_name(device: Any = None) -> str:
    """The GPU's name, e.g. ``NVIDIA H200``."""
    cp = _cupy("get_device_name")
    index = 0 if device is None else getattr(device, "index", device) or 0
    props = cp.cuda.runtime.getDeviceProperties(int(index))
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)
