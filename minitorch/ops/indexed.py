"""The rest of PyTorch's indexing family, as compositions of indexing (``t[index]``) and
``IndexPut`` (``t[index] = values``, accumulating where asked), so each is differentiable
through them: ``take``, ``take_along_dim``, ``index_add``, ``index_copy``, ``index_fill``,
``scatter_add``, ``masked_scatter``; and the pieces ``tensor_split``, ``unbind``, ``msort``.

Indices follow ``checks.check_indices`` as PyTorch's ops do: ``take``, ``take_along_dim``
and ``index_fill`` read a negative index from the end, the others refuse it.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import as_tensor, check_fill_value, check_indices, describe
from ..shape import normalize_dim
from ..tensor import Tensor
from .compose import _check_gather, _grid, _size, scatter_source, sort
from .indexing import IndexPut


def _wrapped(index: Tensor, size: int) -> Tensor:
    """``index`` with negative entries counted from the end (checked in range first)."""
    return index + (index < 0).to(index.dtype) * size


def _integer_index(op: str, index: Any, vector: bool = False) -> Tensor:
    as_tensor(index, op, "index")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, but got {index.dtype}")
    if vector and index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got shape {index.shape}")
    return index


def take(input: Tensor, index: Tensor) -> Tensor:
    """``input`` read as 1-D at ``index`` (any shape; negative counts from the end)."""
    as_tensor(input, "take")
    index = _integer_index("take", index)
    n = input.numel()
    check_indices(index, n, 0, "take", IndexError, negative=True)
    return input.reshape(-1)[_wrapped(index, n)]


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with broadcasting (and negative indices from the end); with no ``dim``,
    ``take`` of the flattened input."""
    as_tensor(input, "take_along_dim")
    indices = _integer_index("take_along_dim", indices)
    if dim is None:
        return take(input.reshape(-1), indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            f"take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} and {indices.ndim} (shapes {input.shape} and {indices.shape})"
        )
    d = normalize_dim(dim, builtins.max(input.ndim, 1), "take_along_dim")
    size = _size(input, d)
    check_indices(indices, size, d, "take_along_dim", negative=True)
    if input.ndim:
        from ..shape import broadcast_shapes

        rest = [1 if k == d else n for k, n in enumerate(input.shape)]
        other = [1 if k == d else n for k, n in enumerate(indices.shape)]
        common = list(broadcast_shapes(tuple(rest), tuple(other), op="take_along_dim"))
        input = input.expand(tuple(size if k == d else n for k, n in enumerate(common)))
        grown = tuple(indices.shape[d] if k == d else n for k, n in enumerate(common))
        indices = indices.expand(grown)
    return input.gather(d, _wrapped(indices, size))


def _index_along(op: str, t: Any, dim: int, index: Any, negative: bool = False) -> tuple:
    """The checked dim and the full index ``(:, ..., index)`` of the index_* ops."""
    as_tensor(t, op)
    index = _integer_index(op, index, vector=True)
    d = normalize_dim(dim, builtins.max(t.ndim, 1), op)
    size = _size(t, d)
    error = IndexError if op in ("index_copy", "index_fill") else RuntimeError
    check_indices(index, size, d, op, error, negative=negative)
    flat = _wrapped(index.reshape(-1), size)
    if t.ndim == 0:
        return d, (flat,)
    return d, (slice(None),) * d + (flat,)


def _check_source(op: str, t: Tensor, d: int, index: Tensor, source: Any) -> None:
    as_tensor(source, op, "source")
    if source.dtype != t.dtype:
        raise RuntimeError(
            f"{op}(): self ({t.dtype}) and source ({source.dtype}) must have the same scalar type"
        )
    want = tuple(index.numel() if k == d else n for k, n in enumerate(t.shape))
    if t.ndim and tuple(source.shape) != want:
        raise RuntimeError(
            f"{op}(): source must have shape {want} (self's, with index's {index.numel()} "
            f"entries along dim {d}), but got {tuple(source.shape)}"
        )


def index_add(t: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``t`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up)."""
    d, where = _index_along("index_add", t, dim, index)
    _check_source("index_add", t, d, index, source)
    values = source if alpha == 1 else source * alpha
    return IndexPut.apply(t, values.reshape(-1) if t.ndim == 0 else values, where, True)


def index_copy(t: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``t`` with ``source``'s slices written at ``index`` along ``dim``."""
    d, where = _index_along("index_copy", t, dim, index)
    _check_source("index_copy", t, d, index, source)
    return IndexPut.apply(t, source.reshape(-1) if t.ndim == 0 else source, where, False)


def index_fill(t: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``t`` with ``value`` written into the slices at ``index`` along ``dim`` (negative
    indices count from the end, as in PyTorch)."""
    d, where = _index_along("index_fill", t, dim, index, negative=True)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            f"index_fill(): only supports a 0-dimensional value tensor, but got shape {value.shape}"
        )
    if not isinstance(value, (Tensor, int, float, np.number, np.bool_)):
        raise TypeError(f"index_fill(): value must be a number, but got {describe(value)}")
    check_fill_value(value, t.dtype, "index_fill")
    if isinstance(value, Tensor):
        value = value.to(t.dtype)
    return IndexPut.apply(t, value, where, False)


def scatter_add(t: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``t`` with ``src[i][j]`` added at ``[i][index[i][j]]`` (for dim 1); repeats add up."""
    d = _check_gather("scatter_add", t, dim, index)
    as_tensor(src, "scatter_add", "src")
    values = scatter_source("scatter_add", t, index, src)
    if t.ndim == 0:
        return IndexPut.apply(t.reshape(1), values.reshape(1), (index.reshape(1),), True).reshape(
            ()
        )
    return IndexPut.apply(t, values, _grid(index, d), True)


def masked_scatter(t: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``t`` with the first elements of ``source``, in order, written where the bool
    ``mask`` (broadcast to ``t``'s shape) is True."""
    as_tensor(t, "masked_scatter"), as_tensor(mask, "masked_scatter", "mask")
    as_tensor(source, "masked_scatter", "source")
    if mask.dtype.name != "bool":
        raise RuntimeError(
            f"masked_scatter: only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if source.dtype != t.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got {t.dtype} "
            f"and {source.dtype}"
        )
    from ..shape import broadcast_shapes

    if broadcast_shapes(t.shape, mask.shape, op="masked_scatter") != tuple(t.shape):
        raise RuntimeError(
            f"masked_scatter: mask of shape {tuple(mask.shape)} does not broadcast to self's "
            f"shape {tuple(t.shape)}"
        )
    where = mask.expand(t.shape) if t.ndim else mask
    n = int(where.sum().item())
    if source.numel() < n:
        raise RuntimeError(
            f"masked_scatter: expected source to have at least {n} elements (one per True in "
            f"mask), but got {source.numel()}"
        )
    values = source.reshape(-1)[:n]
    if t.ndim == 0:
        return IndexPut.apply(t.reshape(1), values, (where.reshape(1),), False).reshape(())
    return IndexPut.apply(t, values, (where,), False)


# --- pieces ---------------------------------------------------------------------------------
def tensor_split(t: Tensor, indices_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
    """Views of ``t`` along ``dim``: ``n`` sections as equal as can be (the first
    ``size % n`` one longer), or the pieces between the given indices (negative ones
    from the end; a later index before an earlier one gives an empty piece)."""
    as_tensor(t, "tensor_split")
    if t.ndim == 0:
        raise RuntimeError("tensor_split: expected at least a 1-dimensional tensor, got a 0-d one")
    d = normalize_dim(dim, t.ndim, "tensor_split")
    size = t.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        spec = spec.tolist()
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, (bool, np.bool_)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {n}")
        lengths = [size // n + (1 if k < size % n else 0) for k in range(n)]
        bounds = np.cumsum([0, *lengths]).tolist()
    elif isinstance(spec, (list, tuple)) and all(
        isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in spec
    ):
        cuts = [
            builtins.min(builtins.max(int(i) + size if i < 0 else int(i), 0), size) for i in spec
        ]
        bounds = [0, *cuts, size]
    else:
        raise TypeError(
            f"tensor_split: indices_or_sections must be an int or a list of ints, but got "
            f"{describe(indices_or_sections)}"
        )
    lead = (slice(None),) * d
    return tuple(
        t[lead + (slice(start, builtins.max(start, end)),)]
        for start, end in zip(bounds[:-1], bounds[1:], strict=True)
    )


def unbind(t: Tensor, dim: int = 0) -> tuple:
    """The slices of ``t`` along ``dim``, each without that dim (views)."""
    as_tensor(t, "unbind")
    if t.ndim == 0:
        raise IndexError("unbind: Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, t.ndim, "unbind")
    return tuple(t[(slice(None),) * d + (i,)] for i in range(t.shape[d]))


def msort(t: Tensor) -> Tensor:
    """``t`` sorted along dim 0 (NaN last)."""
    as_tensor(t, "msort")
    return sort(t, dim=0).values
