"""``torch.utils.data.distributed``: ``DistributedSampler`` (``minitorch.distributed``'s)."""

from ...distributed.sampler import DistributedSampler

__all__ = ["DistributedSampler"]
