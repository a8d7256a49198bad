"""``minitorch.utils.data``: PyTorch's path (``torch.utils.data``) to ``minitorch.data``.

Everything here is ``minitorch.data``'s; ``utils.data.distributed.DistributedSampler`` is
``minitorch.distributed.DistributedSampler``.
"""

from ...data import *  # noqa: F403 - the same names, by PyTorch's path
from ...data import __all__ as _data_names

__all__ = list(_data_names)


def __getattr__(name: str) -> object:
    """``utils.data.distributed`` on first use (it imports ``minitorch.distributed``)."""
    if name == "distributed":
        import importlib

        return importlib.import_module(f"{__name__}.distributed")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
