"""Shapes and strides: the arithmetic that turns a flat storage into an n-d tensor.

A tensor element at index ``(i0, i1, ..., ik)`` lives at storage position
``offset + i0*s0 + i1*s1 + ... + ik*sk`` where ``(s0, ..., sk)`` are the strides.
Everything a view does (transpose, expand, slice, view) is a new
``(shape, strides, offset)`` over the same storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

Shape = tuple[int, ...]


class Layout(NamedTuple):
    """How a tensor reads its storage: element ``i`` sits at ``offset + sum(i_k * strides[k])``."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def numel(shape: Sequence[int]) -> int:
    """Number of elements of a tensor of this shape."""
    n = 1
    for size in shape:
        n *= size
    return n


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides: the last dim steps by 1, earlier dims by the product of later sizes."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def index_to_position(index: Sequence[int], strides: Sequence[int], offset: int = 0) -> int:
    """Storage position of the element at ``index``."""
    return offset + sum(i * s for i, s in zip(index, strides, strict=True))


def unravel_index(position: int, shape: Sequence[int]) -> Shape:
    """The index of the ``position``-th element in row-major order (undoes a contiguous layout)."""
    index = []
    for size in reversed(shape):
        index.append(position % size)
        position //= size
    return tuple(reversed(index))


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast_shapes") -> Shape:
    """The shape that all ``shapes`` broadcast to, or a RuntimeError naming ``op`` and the shapes.

    Shapes are aligned at their last dim; two sizes are compatible when equal or when one is 1.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        size = 1
        for s in shapes:
            if -axis > len(s):
                continue
            d = s[axis]
            if d == size or d == 1:
                continue
            if size != 1:
                listed = " and ".join(str(tuple(x)) for x in shapes)
                raise RuntimeError(
                    f"{op}: shapes {listed} cannot be broadcast together: at dim {axis} the "
                    f"sizes are {size} and {d} (sizes must be equal, or one of them 1)"
                )
            size = d
        out.append(size)
    return tuple(out)


def broadcast_index(
    out_index: Sequence[int], out_shape: Sequence[int], in_shape: Sequence[int]
) -> Shape:
    """Map an index of the broadcast output back to the input it came from.

    Leading dims the input lacks are dropped; dims where the input has size 1 read index 0.
    """
    skip = len(out_shape) - len(in_shape)
    return tuple(0 if size == 1 else i for i, size in zip(out_index[skip:], in_shape, strict=True))


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    """Turn a possibly negative dim into ``0 <= dim < ndim``; name the op when out of range
    or not an int (``dim=0.5`` is refused, not truncated)."""
    if type(dim) is int and 0 <= dim < ndim:  # (the common case, decided quickly)
        return dim
    if type(dim) is not int:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"{op}: dim must be an int, but got {type(dim).__name__} {dim!r}")
        dim = int(dim)
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(
            f"{op}: dim {dim} is out of range for a {ndim}-d tensor (expected {lo} to {hi})"
        )
    return dim % max(ndim, 1)


def infer_size(shape: Sequence[int], total: int, op: str) -> Shape:
    """Resolve one ``-1`` in a requested shape so that it holds ``total`` elements."""
    shape = tuple(int(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred (-1), got shape {shape}")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{op}: invalid shape {shape}: sizes must be non-negative")
    known = numel(s for s in shape if s != -1)
    if unknown:
        if known == 0 or total % known:
            raise RuntimeError(f"{op}: shape {shape} is invalid for input of size {total}")
        i = unknown[0]
        shape = shape[:i] + (total // known,) + shape[i + 1 :]
    elif known != total:
        raise RuntimeError(f"{op}: shape {shape} is invalid for input of size {total}")
    return shape


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> Shape | None:
    """Strides that show the same elements as ``new_shape`` without copying, or None if impossible.

    Splitting a dim is always possible; merging dims is possible only where they are laid out
    back to back in storage (``stride[i] == stride[i+1] * size[i+1]``). That is why ``view``
    of a transposed tensor fails while ``reshape`` (which may copy) succeeds.
    """
    if numel(shape) == 0:
        return contiguous_strides(new_shape)
    if not shape:
        shape, strides = (1,), (1,)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    # Walk old dims from the last, in "chunks" of dims that are back to back in storage;
    # the new dims must exactly tile each chunk.
    chunk_base_stride = strides[-1]
    chunk_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        chunk_ends = d == 0 or (
            shape[d - 1] != 1 and strides[d - 1] != chunk_numel * chunk_base_stride
        )
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
            new_strides[view_d] = view_numel * chunk_base_stride
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            chunk_base_stride = strides[d - 1]
            chunk_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def as_size(value: Any, op: str, what: str = "size", allow_negative: bool = False) -> int:
    """One size (a dim's length, a count) given by the user, checked: an int, not negative.

    Floats are refused rather than truncated (``zeros(2.5)`` is an error, as in PyTorch);
    numpy integers and one-element integer tensors count as ints.
    """
    if isinstance(value, bool) or not _is_integer(value):
        raise TypeError(f"{op}: {what} must be an int, but got {type(value).__name__} {value!r}")
    n = int(value)
    if n < 0 and not allow_negative:
        raise RuntimeError(f"{op}: {what} must be non-negative, but got {n}")
    return n


def as_sizes(args: Sequence[Any], op: str, allow_infer: bool = False) -> Shape:
    """A shape given as ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])``, each size checked.

    With ``allow_infer`` one ``-1`` may stand for a size to infer (``view``, ``reshape``).
    """
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    if all(type(a) is int and a >= 0 for a in args):  # (the common case, decided quickly)
        return tuple(args)
    sizes = []
    for i, a in enumerate(args):
        if isinstance(a, bool) or not _is_integer(a):
            raise TypeError(
                f"{op}: size must be a tuple of ints, but found element of type "
                f"{type(a).__name__} ({a!r}) at position {i} in {tuple(args)!r}"
            )
        n = int(a)
        if n < 0 and not (allow_infer and n == -1):
            raise RuntimeError(f"{op}: negative dimension {n} in size {tuple(args)!r}")
        sizes.append(n)
    return tuple(sizes)


def _is_integer(value: Any) -> bool:
    if isinstance(value, (int, np.integer)):
        return True
    shape = getattr(value, "shape", None)  # a one-element integer tensor or array
    dtype = getattr(value, "dtype", None)
    kind = getattr(getattr(dtype, "np", dtype), "kind", None)
    return shape is not None and kind in ("i", "u") and int(np.prod(shape)) == 1
