"""DataLoader: iterate over a dataset in (shuffled) batches, in the main process."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..checks import as_bool, as_callable, describe
from ..random import Generator
from .collate import default_collate, default_convert
from .dataset import Dataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class DataLoader:
    """Batches of samples from a map-style ``dataset``, with PyTorch's options.

    Indices come from ``sampler`` (sequential, or random when ``shuffle=True``, drawn
    from ``generator``) and are grouped by a ``BatchSampler`` of ``batch_size`` (or by
    your own ``batch_sampler``); each group of samples goes through ``collate_fn``
    (``default_collate``). ``batch_size=None`` turns batching off and yields single
    samples. Loading is single-process: ``num_workers`` must be 0.
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        drop_last: bool = False,
        generator: Generator | None = None,
    ) -> None:
        _check_workers(num_workers)
        if not hasattr(dataset, "__getitem__"):
            raise TypeError(
                f"DataLoader: dataset must support indexing (a Dataset, list or tensor), but got "
                f"{describe(dataset)}"
            )
        if collate_fn is not None:
            as_callable(collate_fn, "DataLoader", "collate_fn")
        as_bool(drop_last, "DataLoader", "drop_last")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self.batch_sampler is None:  # batching off: one sample at a time
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        """Batches per epoch (samples per epoch when batching is off)."""
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _check_workers(num_workers: int) -> None:
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError(
            f"DataLoader: num_workers option should be a non-negative integer, got "
            f"{num_workers!r}; use num_workers=0 to load in the main process"
        )
    if num_workers > 0:
        raise NotImplementedError(
            f"DataLoader: num_workers={num_workers} is not supported; minitorch loads data in "
            "the main process only (num_workers=0). Worker processes speed up slow, "
            "disk-bound datasets, which the course does not need."
        )
