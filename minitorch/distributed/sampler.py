"""``DistributedSampler``: each rank its own share of the dataset, the same size for all.

Every epoch all ranks draw the *same* permutation (seeded by ``seed + epoch``), pad it by
repeating its first indices until it divides evenly (or, with ``drop_last``, cut the
tail), and rank r takes every N-th index from position r. Call ``set_epoch(epoch)``
before each epoch: without it every epoch repeats the order of epoch 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from ..checks import as_bool, as_number
from ..creation import randperm
from ..data.sampler import Sampler
from ..random import Generator


def shard_indices(indices: list[int], num_replicas: int, rank: int, drop_last: bool) -> list[int]:
    """Rank ``rank``'s share of one epoch's ``indices``: padded (by repeating from the
    start) or cut to a multiple of ``num_replicas``, then every ``num_replicas``-th."""
    n = len(indices)
    if drop_last and n % num_replicas:
        total = (n // num_replicas) * num_replicas
        indices = indices[:total]
    else:
        total = math.ceil(n / num_replicas) * num_replicas
        padding = total - n
        if padding:
            repeats = math.ceil(padding / n)
            indices = indices + (indices * repeats)[:padding]
    return indices[rank:total:num_replicas]


class DistributedSampler(Sampler[int]):
    """Indices of ``dataset`` for one rank, as ``torch.utils.data.DistributedSampler``."""

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from .group import get_rank, get_world_size, is_initialized

            if not is_initialized():
                raise RuntimeError(
                    "DistributedSampler: pass num_replicas and rank, or call "
                    "minitorch.distributed.init_process_group() first"
                )
            num_replicas = get_world_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(
                f"DistributedSampler: num_replicas must be a positive int, got {num_replicas!r}"
            )
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(
                f"DistributedSampler: Invalid rank {rank}, rank should be in the interval "
                f"[0, {num_replicas - 1}]"
            )
        if not hasattr(dataset, "__len__"):
            raise TypeError(
                f"DistributedSampler: the dataset must have a length (a Sized), but got "
                f"{type(dataset).__name__} {dataset!r:.40}"
            )
        as_bool(shuffle, "DistributedSampler", "shuffle")
        as_bool(drop_last, "DistributedSampler", "drop_last")
        as_number(seed, "DistributedSampler", "seed", integer=True)
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = n // num_replicas
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        return iter(shard_indices(indices, self.num_replicas, self.rank, self.drop_last))

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        as_number(epoch, "DistributedSampler.set_epoch", "epoch", integer=True)
        """Use the order of ``epoch``: call it at the start of every epoch."""
        self.epoch = epoch
