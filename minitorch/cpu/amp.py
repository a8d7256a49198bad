"""``minitorch.cpu.amp``: the deprecated ``torch.cpu.amp.autocast(...)`` spelling of
``minitorch.amp.autocast("cpu", ...)`` (it warns, as PyTorch's does)."""

from __future__ import annotations

import warnings
from typing import Any

from ..amp import autocast_mode
from ..dtypes import bfloat16

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """``minitorch.amp.autocast("cpu", ...)``, by its deprecated name."""

    def __init__(
        self, enabled: bool = True, dtype: Any = bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`minitorch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`minitorch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
