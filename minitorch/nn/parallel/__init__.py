"""``nn.parallel``, as ``torch.nn.parallel``: ``DataParallel`` and (chapter 06's)
``DistributedDataParallel``, by PyTorch's path."""

from typing import Any

from .data_parallel import DataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


def __getattr__(name: str) -> Any:
    """``DistributedDataParallel`` on first use (it imports ``minitorch.distributed``)."""
    if name == "DistributedDataParallel":
        from ...distributed import DistributedDataParallel

        return DistributedDataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
