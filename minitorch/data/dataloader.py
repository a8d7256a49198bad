"""DataLoader: iterate over a dataset in (shuffled) batches, in the main process or in
worker processes (``num_workers > 0``: ``minitorch.data.worker``)."""

from __future__ import annotations

import warnings
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
    samples. ``num_workers > 0`` loads batches in that many worker processes, seeded as
    PyTorch's (see ``minitorch.data.worker``: ``worker_init_fn``, ``get_worker_info``,
    ``prefetch_factor``, ``persistent_workers``, ``timeout``). ``pin_memory`` pins nothing
    (numpy has no page-locked host memory); without a GPU it warns, as PyTorch does.
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
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], Any] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
    ) -> None:
        _check_workers(num_workers, prefetch_factor, persistent_workers, timeout)
        if worker_init_fn is not None:
            as_callable(worker_init_fn, "DataLoader", "worker_init_fn")
        if as_bool(pin_memory, "DataLoader", "pin_memory") and not _accelerator():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                UserWarning,
                stacklevel=2,
            )
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
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers else prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator
        self._workers: Any = None  # the persistent workers' iterator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers:
            if self.persistent_workers and self._workers is not None:
                return self._workers.reset()
            from .worker import MultiProcessIter

            it = MultiProcessIter(self)
            if self.persistent_workers:
                self._workers = it
            return it
        return self._single_process()

    def _single_process(self) -> Iterator[Any]:
        if self.batch_sampler is None:  # batching off: one sample at a time
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        """Batches per epoch (samples per epoch when batching is off)."""
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _check_workers(
    num_workers: int, prefetch_factor: int | None, persistent_workers: bool, timeout: float
) -> None:
    """The worker options, checked with PyTorch's messages."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError(
            f"DataLoader: num_workers option should be a non-negative integer, got "
            f"{num_workers!r}; use num_workers=0 to load in the main process"
        )
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing. let "
            "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if prefetch_factor is not None and (
        isinstance(prefetch_factor, bool)
        or not isinstance(prefetch_factor, int)
        or prefetch_factor < 1
    ):
        raise ValueError(
            f"DataLoader: prefetch_factor should be a positive integer, got {prefetch_factor!r}"
        )
    if as_bool(persistent_workers, "DataLoader", "persistent_workers") and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise ValueError(f"timeout option should be non-negative, got {timeout!r}")


def _accelerator() -> bool:
    from .. import cuda

    return cuda.is_available()
