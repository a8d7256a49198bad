"""Ops PyTorch programs use that are compositions of other ops: each is differentiable
through its parts (``gather`` is an index, ``var`` a mean of squares), so it needs no
Function of its own and every layer of ``apply`` sees the parts.

``mm``/``bmm``/``mv``/``dot`` (``matmul`` with PyTorch's shape checks), ``var``/``std``,
``chunk``, ``repeat``, ``index_select``, ``gather``, ``scatter``, ``sort``/``argsort``,
``hstack``/``vstack``, the ``new_*`` constructors and ``Tensor.type()``.
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..checks import as_tensor, check_fill_value, check_indices, describe
from ..function import check_dtypes
from ..shape import as_sizes, normalize_dim
from ..tensor import Tensor
from .factory import full


# --- PyTorch's named results: torch.return_types.max(values=..., indices=...) ------------------
def return_type(name: str) -> type:
    """A (values, indices) named tuple that prints as ``torch.return_types.<name>``."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self: Any) -> str:  # noqa: N807
        return (
            f"{dtypes.display_name}.return_types.{name}(\nvalues={self.values!r},"
            f"\nindices={self.indices!r})"
        )

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__})


sort_result = return_type("sort")


# --- matrix products with PyTorch's shape checks -------------------------------------------
def _check_dims(op: str, **tensors: tuple[Any, int]) -> None:
    """Each operand a tensor of the given number of dims; all of one dtype (the matmul
    family's one rule, ``check_dtypes(..., "same", ...)``, named for ``op``)."""
    for what, (t, ndim) in tensors.items():
        as_tensor(t, op, what)
        if t.ndim != ndim:
            kind = {1: "1D tensor", 2: "a matrix", 3: "a 3D tensor"}[ndim]
            raise RuntimeError(f"{op}: {what} must be {kind}, but got shape {tuple(t.shape)}")
    check_dtypes(op, "same", tuple(t for t, _ in tensors.values()))


def mm(a: Any, b: Any) -> Any:
    """The product of two matrices (no broadcasting: ``matmul`` for 2-D only)."""
    _check_dims("mm", self=(a, 2), mat2=(b, 2))
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mm: mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    return a @ b


def bmm(a: Any, b: Any) -> Any:
    """Batched matrix products of two 3-D tensors with the same batch size."""
    _check_dims("bmm", self=(a, 3), mat2=(b, 3))
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"bmm: expected batch1 and batch2 to be [b, n, m] and [b, m, p], but got shapes "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    return a @ b


def mv(a: Any, v: Any) -> Any:
    """A matrix times a vector."""
    _check_dims("mv", self=(a, 2), vec=(v, 1))
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"mv: size mismatch, got input ({a.shape[0]}x{a.shape[1]}) and vec ({v.shape[0]})"
        )
    return a @ v


def dot(a: Any, b: Any) -> Any:
    """The inner product of two 1-D tensors of the same length."""
    _check_dims("dot", self=(a, 1), tensor=(b, 1))
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"dot: inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
            f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
            f"{b.shape[0]} elements respectively"
        )
    return a @ b


# --- variance and standard deviation --------------------------------------------------------
def var(
    t: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Any:
    """``sum((x - mean)^2) / (N - correction)`` over ``dim`` (all dims by default, and for
    ``dim=()``); ``correction`` defaults to 1 (Bessel's), ``unbiased=False`` means 0.
    ``t.var(False)`` (PyTorch's old positional ``unbiased``) is accepted too."""
    return _variance(t, dim, unbiased, keepdim, correction, "var")


def std(
    t: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Any:
    """The square root of ``var`` (same arguments)."""
    return _variance(t, dim, unbiased, keepdim, correction, "std").sqrt()


def _variance(t: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any, op: str) -> Any:
    from . import _dims, mean, sum  # noqa: A004 - the ops, not the builtins

    as_tensor(t, op)
    if isinstance(dim, (builtins.bool, np.bool_)):  # var(unbiased) of the old signature
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{op}: pass either unbiased or correction, not both")
    c = (0 if unbiased is not None and not unbiased else 1) if correction is None else correction
    if not t.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: expected a floating point input, but got dtype {t.dtype} (std and var "
            "only support floating point and complex dtypes)"
        )
    dims = _dims(t, dim, op)
    dims = tuple(range(t.ndim)) if dims is None else dims
    n = math.prod(t.shape[d] for d in dims)
    centred = t - mean(t, dim=dims, keepdim=True)
    return sum(centred * centred, dim=dims, keepdim=keepdim) / builtins.max(n - c, 0)


# --- pieces and copies ----------------------------------------------------------------------
def chunk(t: Any, chunks: int, dim: int = 0) -> tuple:
    """``chunks`` views of (nearly) equal size along ``dim``: each ``ceil(size / chunks)``
    long, so there may be fewer than ``chunks`` of them, as in PyTorch (an empty dim gives
    ``chunks`` empty views)."""
    from .selection import split

    as_tensor(t, "chunk")
    if isinstance(chunks, builtins.bool) or not isinstance(chunks, (int, np.integer)):
        raise TypeError(f"chunk(): argument 'chunks' must be int, not {describe(chunks)}")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if t.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor, got a 0-d one")
    size = t.shape[normalize_dim(dim, t.ndim, "chunk")]
    if size == 0:  # as PyTorch: `chunks` empty pieces (a split would give one)
        return split(t, [0] * int(chunks), dim)
    return split(t, -(-size // chunks), dim)


def repeat(t: Any, *sizes: Any) -> Any:
    """``t`` tiled ``sizes[i]`` times along each dim (extra leading sizes add dims)."""
    as_tensor(t, "repeat")
    reps = as_sizes(sizes, "repeat")
    if len(reps) < t.ndim:
        raise RuntimeError(
            "repeat: Number of dimensions of repeat dims can not be smaller than number of "
            f"dimensions of tensor (repeat dims {list(reps)}, tensor shape {list(t.shape)})"
        )
    shape = (1,) * (len(reps) - t.ndim) + tuple(t.shape)
    # (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then merged pairwise
    grown = t.reshape(tuple(x for s in shape for x in (1, s)))
    tiled = grown.expand(tuple(x for r, s in zip(reps, shape, strict=True) for x in (r, s)))
    return tiled.reshape(tuple(r * s for r, s in zip(reps, shape, strict=True)))


def index_select(t: Any, dim: int, index: Any) -> Any:
    """The entries at ``index`` (a 1-D integer tensor) along ``dim``."""
    as_tensor(t, "index_select")
    as_tensor(index, "index_select", "index")
    if index.ndim > 1 or index.dtype.np.kind not in "iu":
        raise RuntimeError(
            f"index_select(): index must be a 1-D integer tensor, but got shape "
            f"{tuple(index.shape)} and dtype {index.dtype}"
        )
    d = normalize_dim(dim, builtins.max(t.ndim, 1), "index_select")
    check_indices(index, _size(t, d), d, "index_select", IndexError)
    if t.ndim == 0:  # a 0-d tensor is one entry along dim 0, and so is the result
        picked = t.reshape(1)[index.reshape(-1)]
        return picked.reshape(()) if picked.numel() == 1 else picked
    return t[(slice(None),) * d + (index.reshape(-1),)]


def _size(t: Any, dim: int) -> int:
    """``t``'s size along ``dim``; a 0-d tensor counts as one entry, as in PyTorch."""
    return t.shape[dim] if t.ndim else 1


def _grid(index: Tensor, dim: int) -> tuple:
    """Index arrays that pick ``out[i][j][k] = t[i][index[i][j][k]][k]`` (for dim 1)."""
    grids = np.indices(tuple(index.shape), sparse=True)
    return tuple(index if k == dim else g for k, g in enumerate(grids))


def _check_gather(op: str, t: Any, dim: int, index: Any) -> int:
    as_tensor(t, op)
    as_tensor(index, op, "index")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, but got {index.dtype}")
    d = normalize_dim(dim, builtins.max(t.ndim, 1), op)
    if index.ndim != t.ndim:
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index shape {tuple(index.shape)}, input shape {tuple(t.shape)})"
        )
    for k in range(t.ndim):
        if k != d and index.shape[k] > t.shape[k]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {k}: index shape "
                f"{tuple(index.shape)} is larger than input shape {tuple(t.shape)} outside "
                f"dimension {d}"
            )
    check_indices(index, _size(t, d), d, op)
    return d


def gather(t: Any, dim: int, index: Any) -> Any:
    """``out[i][j] = t[i][index[i][j]]`` for dim 1 (and likewise for other dims)."""
    d = _check_gather("gather", t, dim, index)
    if t.ndim == 0:
        return t.reshape(1)[index.reshape(1)].reshape(())
    return t[_grid(index, d)]


def scatter_source(op: str, t: Tensor, index: Tensor, src: Tensor) -> Tensor:
    """The part of ``src`` that ``index`` reads, for ``op`` (scatter, scatter_add): of
    ``t``'s dtype, with as many dims as ``index`` and no dim smaller (PyTorch's checks)."""
    if src.dtype != t.dtype:
        raise RuntimeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype (self {t.dtype}, "
            f"src {src.dtype})"
        )
    if src.ndim != index.ndim or builtins.any(
        i > s for i, s in zip(index.shape, src.shape, strict=True)
    ):
        raise RuntimeError(
            f"{op}(): Expected index {list(index.shape)} to be no larger size than src "
            f"{list(src.shape)}"
        )
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter_(t: Any, dim: int, index: Any, src: Any = None, *, value: Any = None) -> Any:
    """Write ``src`` (a tensor of ``t``'s dtype, at least ``index``'s size, or a number) into
    ``t`` at ``index`` along ``dim``: ``t[i][index[i][j]] = src[i][j]`` for dim 1; in place,
    returns ``t``."""
    d = _check_gather("scatter", t, dim, index)
    src = value if src is None else src
    if isinstance(src, Tensor):
        src = scatter_source("scatter", t, index, src)
    else:
        check_fill_value(src, t.dtype, "scatter")
    if t.ndim == 0:
        t.reshape(1)[index.reshape(1)] = src.reshape(1) if isinstance(src, Tensor) else src
        return t
    t[_grid(index, d)] = src
    return t


def scatter(t: Any, dim: int, index: Any, src: Any = None, *, value: Any = None) -> Any:
    """``scatter_`` into a copy of ``t``."""
    return scatter_(t.clone(), dim, index, src, value=value)


def argsort(t: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """The indices that sort ``t`` along ``dim`` (ties keep their order; NaN is the largest)."""
    as_tensor(t, "argsort")
    d = normalize_dim(dim, builtins.max(t.ndim, 1), "argsort")
    data = t.detach().cpu().numpy()
    if data.ndim == 0:
        return Tensor._from_array(np.zeros((), dtype=np.int64)).to(t.device)
    if descending:  # the stable ascending order of the reversed data, reversed: ties keep
        # their order and NaN, which numpy sorts last, comes first (the largest, as in PyTorch)
        backwards = np.argsort(np.flip(data, d), axis=d, kind="stable")
        order = (data.shape[d] - 1 - np.flip(backwards, d)).astype(np.int64)
    else:
        order = np.argsort(data, axis=d, kind="stable").astype(np.int64)
    return Tensor._from_array(order).to(t.device)


def sort(t: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)``: ``t`` sorted along ``dim``; values are differentiable."""
    indices = argsort(t, dim, descending, stable)
    if t.ndim == 0:
        return sort_result(t.clone(), indices)
    return sort_result(gather(t, dim, indices), indices)


def _at_least(tensors: Sequence[Any], ndim: int, op: str) -> list:
    """Each tensor viewed with at least ``ndim`` dims, as numpy's ``atleast_Nd``: a 0-d
    tensor becomes ``(1,)``/``(1, 1)``/``(1, 1, 1)``, a 1-d ``(n,)`` a row ``(1, n)`` and
    then ``(1, n, 1)``, a 2-d ``(m, n)`` becomes ``(m, n, 1)``."""
    from . import _check_join

    def grown(t: Tensor) -> Tensor:
        if t.ndim >= ndim:
            return t
        if ndim < 3:
            return t.reshape((1,) * (ndim - 1) + (-1,))
        return t.reshape((1, -1, 1) if t.ndim < 2 else (*t.shape, 1))

    return [grown(t) for t in _check_join(tensors, op)]


def hstack(tensors: Sequence[Any]) -> Any:
    """Join along dim 1 (dim 0 for 1-D tensors; 0-D tensors count as 1-D)."""
    from . import join

    tensors = _at_least(tensors, 1, "hstack")
    return join(tensors, 0 if tensors[0].ndim == 1 else 1, "hstack")


def vstack(tensors: Sequence[Any], *, _op: str = "vstack") -> Any:
    """Join along dim 0, 0-D and 1-D tensors first made rows."""
    from . import join

    return join(_at_least(tensors, 2, _op), 0, _op)


def row_stack(tensors: Sequence[Any]) -> Any:
    """``vstack`` (PyTorch's other name for it)."""
    return vstack(tensors, _op="row_stack")


def dstack(tensors: Sequence[Any]) -> Any:
    """Join along dim 2, 0-D, 1-D and 2-D tensors first made 3-D."""
    from . import join

    return join(_at_least(tensors, 3, "dstack"), 2, "dstack")


def column_stack(tensors: Sequence[Any]) -> Any:
    """Join along dim 1, 0-D and 1-D tensors first made columns ``(n, 1)``."""
    from . import _check_join, join

    columns = [t.reshape(-1, 1) if t.ndim < 2 else t for t in _check_join(tensors, "column_stack")]
    return join(columns, 1, "column_stack")


# --- torch.* spellings of questions asked of a tensor ------------------------------------------
def is_tensor(obj: Any) -> builtins.bool:
    """Is ``obj`` a tensor (a Parameter counts)?"""
    return isinstance(obj, Tensor)


def numel(t: Any) -> int:
    """How many elements ``t`` holds."""
    return as_tensor(t, "numel").numel()


def is_floating_point(t: Any) -> builtins.bool:
    return as_tensor(t, "is_floating_point").is_floating_point()


# --- constructors from a tensor, and the legacy type names -----------------------------------
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def type_name(t: Tensor) -> str:
    """``t.type()``: ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``, ..."""
    where = "" if t.device.type == "cpu" else f"{t.device.type}."
    return f"{dtypes.display_name}.{where}{_TYPE_NAMES[t.dtype.name]}"


def to_type(t: Tensor, dtype: Any = None) -> Any:
    """``t.type()`` (its type's name) or ``t.type(dtype)`` (a copy as ``dtype``, which may
    also be a name such as ``'torch.DoubleTensor'``)."""
    if dtype is None:
        return type_name(t)
    if isinstance(dtype, str):
        short = dtype.split(".")[-1]
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if short not in names:
            raise ValueError(f"type(): invalid type {dtype!r}")
        device = "cuda" if ".cuda." in dtype else t.device
        return t.to(device=device, dtype=dtypes.as_dtype(names[short], "type"))
    return t.to(dtype)


def new_like(
    t: Tensor, fill_value: Any, size: Any, dtype: Any, device: Any, requires_grad: bool, op: str
) -> Tensor:
    """``t.new_ones(size)`` and friends: filled with ``fill_value``, in ``t``'s dtype and on
    its device unless given."""
    dtype = t.dtype if dtype is None else dtype
    device = t.device if device is None else device
    return full(as_sizes(size, op), fill_value, dtype, device, requires_grad, op)
