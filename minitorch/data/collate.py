"""Collating: turning a list of samples into one batch, with PyTorch's rules.

``default_collate`` looks at the first sample and recurses:

- Tensors are stacked along a new dim 0; numpy arrays too (keeping their dtype);
- Python ints become an int64 tensor, bools a bool tensor, floats a **float64** tensor
  (as in PyTorch: Python floats are double precision); numpy scalars keep their dtype;
- strings and bytes are returned as a list;
- dicts give a dict of batches, namedtuples a namedtuple of batches, and tuples and lists
  a **list** of batches (PyTorch returns a list for tuples too), so a dataset of
  ``(x, y)`` pairs gives ``[xs, ys]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..creation import from_numpy, tensor
from ..dtypes import float64
from ..ops import stack
from ..tensor import Tensor

_HINT = "give samples equal shapes (pad or crop them) or pass a collate_fn to the DataLoader"


def default_collate(batch: Sequence[Any]) -> Any:
    """Combine a list of samples into a batch (see the module docstring for the rules)."""
    batch = list(batch)
    if not batch:
        raise ValueError("default_collate: the batch is empty")
    return _collate(batch, "sample")


def _collate(batch: list, path: str) -> Any:
    elem = batch[0]
    if isinstance(elem, Tensor):
        _check_same_kind(batch, Tensor, path)
        _check_shapes(batch, path)
        return stack(batch)
    if isinstance(elem, np.ndarray):
        _check_same_kind(batch, np.ndarray, path)
        _check_numeric(elem, path)
        _check_shapes(batch, path)
        return from_numpy(np.stack(batch))
    if isinstance(elem, np.generic):
        _check_numeric(elem, path)
        return from_numpy(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bools too: tensor() gives bool for all-bool batches
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return _collate_mapping(batch, path)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        _check_lengths(batch, path)
        fields = zip(elem._fields, zip(*batch, strict=True), strict=True)
        return type(elem)(*(_collate(list(s), f"{path}.{name}") for name, s in fields))
    if isinstance(elem, Sequence):
        _check_lengths(batch, path)
        return [_collate(list(s), f"{path}[{i}]") for i, s in enumerate(zip(*batch, strict=True))]
    raise TypeError(
        f"default_collate: {path} is a {type(elem).__name__}; batches can only be made of "
        "tensors, numpy arrays, numbers, strings, dicts, lists and tuples (pass a collate_fn "
        "to the DataLoader for anything else)"
    )


def _collate_mapping(batch: list, path: str) -> Any:
    keys = list(batch[0])
    for i, sample in enumerate(batch):
        if not isinstance(sample, Mapping) or set(sample) != set(keys):
            got = list(sample) if isinstance(sample, Mapping) else type(sample).__name__
            raise RuntimeError(
                f"default_collate: {path} of batch item 0 has keys {keys}, but batch item {i} "
                f"has {got}"
            )
    out = {k: _collate([sample[k] for sample in batch], f"{path}[{k!r}]") for k in keys}
    try:
        return type(batch[0])(out)
    except TypeError:  # a mapping type that can't be built from a dict
        return out


def _check_same_kind(batch: list, kind: type, path: str) -> None:
    for i, x in enumerate(batch):
        if not isinstance(x, kind):
            raise TypeError(
                f"default_collate: {path} is a {kind.__name__} in batch item 0 but a "
                f"{type(x).__name__} in batch item {i}"
            )


def _check_shapes(batch: list, path: str) -> None:
    first = tuple(batch[0].shape)
    for i, x in enumerate(batch):
        if tuple(x.shape) != first:
            raise RuntimeError(
                f"default_collate: can't stack {path} into a batch: it has shape {first} in "
                f"batch item 0 but shape {tuple(x.shape)} in batch item {i}; {_HINT}"
            )


def _check_lengths(batch: list, path: str) -> None:
    first = len(batch[0])
    for i, x in enumerate(batch):
        if not isinstance(x, Sequence) or len(x) != first:
            got = f"length {len(x)}" if isinstance(x, Sequence) else f"a {type(x).__name__}"
            raise RuntimeError(
                f"default_collate: each {path} in a batch should have the same length, but "
                f"batch item 0 has length {first} and batch item {i} has {got}"
            )


def _check_numeric(elem: np.ndarray | np.generic, path: str) -> None:
    if elem.dtype.kind in "SaUOV":
        raise TypeError(
            f"default_collate: {path} is a numpy {type(elem).__name__} of dtype {elem.dtype}; "
            "only numeric and bool arrays can be made into tensors"
        )


def default_convert(data: Any) -> Any:
    """What a DataLoader with ``batch_size=None`` does to each sample: numpy becomes tensors."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUOV":
        return from_numpy(np.ascontiguousarray(data))
    if isinstance(data, np.generic) and data.dtype.kind not in "SaUOV":
        return from_numpy(np.array(data))
    if isinstance(data, Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data
