"""``minitorch.cuda.amp``: PyTorch's older spellings of mixed precision on the GPU.

``torch.cuda.amp.autocast(...)`` and ``torch.cuda.amp.GradScaler(...)`` are deprecated in
PyTorch in favour of ``torch.amp.autocast("cuda", ...)`` and ``torch.amp.GradScaler("cuda",
...)``; here, as there, they are exactly those, and say so with a ``FutureWarning``. On a
machine without a GPU both warn that CUDA is not available and disable themselves.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..amp import autocast_mode, grad_scaler
from ..dtypes import float16

__all__ = ["GradScaler", "autocast"]


class autocast(autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """``minitorch.amp.autocast("cuda", ...)``, by its deprecated name."""

    def __init__(
        self, enabled: bool = True, dtype: Any = float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`minitorch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`minitorch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``minitorch.amp.GradScaler("cuda", ...)``, by its deprecated name."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`minitorch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`minitorch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
