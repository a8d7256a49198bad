"""``minitorch.utils``, as ``torch.utils``: ``utils.data`` is ``minitorch.data``."""

from . import data

__all__ = ["data"]
