"""Map-style datasets: anything with ``__getitem__(index)`` and ``__len__()``."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from ..creation import randperm
from ..random import Generator
from ..tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from indices ``0 .. len-1`` to samples; subclasses define both methods."""

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are rows of tensors sharing a first dim: ``ds[i] == (x[i], y[i])``."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"TensorDataset: argument {i} is a {type(t).__name__}, not a Tensor "
                    "(wrap numpy arrays with minitorch.from_numpy)"
                )
            if t.ndim == 0:
                raise ValueError(f"TensorDataset: argument {i} is a 0-d tensor; it has no rows")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) > 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(
                f"TensorDataset: all tensors must have the same size in dim 0, but got sizes "
                f"{sizes} (shapes {shapes})"
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = [operator.index(i) for i in indices]
        n = len(dataset) if hasattr(dataset, "__len__") else None
        bad = [i for i in self.indices if n is not None and not -n <= i < n]
        if bad:
            raise IndexError(
                f"Subset: indices {bad[:5]} are out of range for a dataset of {n} samples"
            )

    def __getitem__(self, index: int) -> T_co:
        if isinstance(index, list):
            return self.dataset[[self.indices[_within(i, len(self.indices))] for i in index]]
        return self.dataset[self.indices[_within(index, len(self.indices))]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T_co],
    lengths: Sequence[int | float],
    generator: Generator | None = None,
) -> list[Subset[T_co]]:
    """Split ``dataset`` at random into non-overlapping subsets of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (the
    counts are floored and the remainder handed out one by one from the first subset on,
    as in PyTorch). Pass a seeded ``generator`` to get the same split every time.
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _counts_from_fractions(lengths, n)
    if any(isinstance(length, float) for length in lengths):
        raise ValueError(
            f"random_split: fractional lengths must sum to 1, but {list(lengths)} sum to "
            f"{sum(lengths)}"
        )
    lengths = [operator.index(length) for length in lengths]
    if sum(lengths) != n:
        raise ValueError(
            f"random_split: the lengths {list(lengths)} sum to {sum(lengths)}, but the dataset "
            f"has {n} samples"
        )
    if any(length < 0 for length in lengths):
        raise ValueError(f"random_split: lengths must be non-negative, got {list(lengths)}")
    order = randperm(n, generator=generator).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start : start + length]))
        start += length
    return subsets


def _counts_from_fractions(fractions: Sequence[float], n: int) -> list[int]:
    for f in fractions:
        if not 0 <= f <= 1:
            raise ValueError(f"random_split: fraction {f} is not between 0 and 1")
    counts = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    return counts


def _within(index: Any, n: int) -> int:
    """A sample index of a dataset of ``n`` samples, checked (negative counts from the end)."""
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"Subset: index {i} is out of range for a subset of {n} samples")
    return i
