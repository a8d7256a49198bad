"""Samplers decide which indices a DataLoader visits, and in what order.

A sampler is any iterable of dataset indices with a ``__len__``; ``BatchSampler`` groups
one sampler's indices into lists. Write your own (chapter 06's ``DistributedSampler``
is one) by subclassing ``Sampler`` and defining ``__iter__`` and ``__len__``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from typing import Generic, TypeVar

from ..creation import randint, randperm
from ..random import Generator

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: yields indices (or, for batch samplers, lists of indices)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, every epoch."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A fresh random order every epoch, drawn from ``generator``.

    Without replacement each epoch is a permutation (repeated permutations if
    ``num_samples`` exceeds the dataset); with ``replacement=True`` indices are drawn
    independently, lazily, ``CHUNK`` at a time as PyTorch draws them (minGPT and makemore
    ask for ``num_samples=10**10``: an endless stream, never a list). With no
    ``generator`` the default one is used, so ``minitorch.manual_seed`` makes runs repeat.
    """

    #: How many indices a sampler with replacement draws at once (PyTorch's 32).
    CHUNK = 32

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a bool, got {replacement!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(
                f"RandomSampler: num_samples should be a positive integer, got num_samples={n}"
            )

    @property
    def num_samples(self) -> int:
        """Indices per epoch: ``len(data_source)`` unless given."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, total = len(self.data_source), self.num_samples
        if self.replacement:
            for _ in range(total // self.CHUNK):
                yield from randint(n, (self.CHUNK,), generator=self.generator).tolist()
            yield from randint(n, (total % self.CHUNK,), generator=self.generator).tolist()
            return
        for _ in range(total // n):
            yield from randperm(n, generator=self.generator).tolist()
        yield from randperm(n, generator=self.generator).tolist()[: total % n]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    The last batch may be smaller, unless ``drop_last`` drops it.
    ``list(BatchSampler(SequentialSampler(range(10)), 3, False))`` is
    ``[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]``.
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"BatchSampler: batch_size should be a positive integer, got "
                f"batch_size={batch_size!r}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last should be a bool, got {drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
