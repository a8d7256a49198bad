"""``minitorch.cuda``: the GPU, as in ``torch.cuda``, and chapter 07's kernels.

- ``is_available()`` / ``device_count()``: is there a GPU (cupy with a working device)?
- ``jit``: the kernel language (cupy's ``cupyx.jit``) whose kernels run on the GPU and,
  on any machine, in a faithful CPU simulator (``simulator``);
- ``kernels``: elementwise, reduction, softmax and matmul kernels written in it;
- ``fusion``: one generated kernel for a chain of elementwise ops;
- ``autotune``: pick tile sizes per shape once, cache the best (as ``cudnn.benchmark``);
- ``compile``: compile kernels for a GPU architecture (sm_90) on any machine, GPU or not, and
  report their registers, shared memory and ``occupancy``
  (``python -m minitorch.cuda.cross_compile [NOTEBOOK...]``);
- ``enable()`` / ``disable()``: route the matching ops of a device to these kernels through
  the backend seam (``minitorch.backend.get("cuda").register_kernel``).
"""

from __future__ import annotations

from .. import backend as _backend
from ..device import as_device
from . import gpu, jit
from .errors import (
    BarrierDivergenceError,
    GlobalMemoryRaceError,
    KernelError,
    KernelLanguageError,
    KernelOutOfBoundsError,
    LaunchConfigError,
    SharedMemoryRaceError,
    UninitializedReadError,
    WarpDivergenceError,
)
from .memory import (  # torch.cuda's memory and device functions
    current_device,
    empty_cache,
    get_device_name,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    synchronize,
)
from .seeding import (  # torch.cuda's seeding and device choice
    get_device_capability,
    is_bf16_supported,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_device,
)

jit.gpu_launcher = gpu.launch  # kernels launched on cupy arrays run on the GPU


def is_available() -> bool:
    """True when cupy is installed and finds a working GPU."""
    return _backend.BACKENDS["cuda"].is_available()


def device_count() -> int:
    """How many GPUs cupy sees (0 without cupy)."""
    return _backend.BACKENDS["cuda"].device_count()


def enable(device: str = "cuda") -> None:
    """Route ``device``'s elementwise, softmax, sum and matmul ops to this package's kernels."""
    from .dispatch import enable as _enable

    _enable(as_device(device, "cuda.enable").type)


def disable(device: str = "cuda") -> None:
    """Undo :func:`enable`: the ops' own forwards run again."""
    from .dispatch import disable as _disable

    _disable(as_device(device, "cuda.disable").type)
