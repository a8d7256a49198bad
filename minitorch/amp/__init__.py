"""``minitorch.amp``: automatic mixed precision (chapter 04).

``autocast`` runs each op in the precision that suits it; ``GradScaler`` keeps float16
gradients from underflowing; ``memory_report`` shows where a step's bytes go.
"""

from .autocast_mode import (
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_enabled,
)
from .grad_scaler import GradScaler, OptState, non_finite_check_and_unscale_, update_scale
from .memory import MemoryReport, memory_report, saved_tensor_bytes

__all__ = [
    "GradScaler",
    "MemoryReport",
    "OptState",
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "memory_report",
    "non_finite_check_and_unscale_",
    "saved_tensor_bytes",
    "update_scale",
]

# ``minitorch.cuda.amp`` (PyTorch's deprecated ``torch.cuda.amp`` spellings) is reachable as
# an attribute once loaded, as ``torch.cuda.amp`` is: it builds on this package, so it is
# imported here, after the names it uses.
from ..cuda import amp as _cuda_amp  # noqa: E402, F401
