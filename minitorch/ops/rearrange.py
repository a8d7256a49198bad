"""``narrow``, ``roll`` and ``meshgrid``: existing elements in a new arrangement.

Each is composed of views and joins (slices, ``cat``, ``expand``), so their gradients,
autocast and tracing come from those ops: nothing new passes ``Function.apply`` here.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..checks import as_tensor
from ..shape import as_size, normalize_dim
from ..tensor import Tensor


def narrow(t: Any, dim: int, start: Any, length: int) -> Tensor:
    """A view of ``t`` holding ``length`` elements of ``dim`` from ``start`` (negative
    ``start`` counts from the end; a 0-d integer tensor is accepted)."""
    from . import getitem

    as_tensor(t, "narrow")
    if t.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, t.ndim, "narrow")
    size = t.shape[dim]
    start = as_size(start, "narrow", "start", allow_negative=True)
    length = as_size(length, "narrow", "length")
    if not -size <= start <= size:
        raise IndexError(
            f"narrow: start out of range (expected to be in range of [{-size}, {size}], "
            f"but got {start}) for dim {dim} of a tensor of shape {tuple(t.shape)}"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(
            f"narrow: start ({start}) + length ({length}) exceeds dimension size ({size}) "
            f"of dim {dim} of a tensor of shape {tuple(t.shape)}"
        )
    return getitem(t, (slice(None),) * dim + (slice(start, start + length),))


def roll(t: Any, shifts: Any, dims: Any = None) -> Tensor:
    """``t`` with its elements shifted ``shifts`` places along ``dims`` (those that fall
    off the end come back at the start); without ``dims``, over the flattened tensor."""
    from . import cat, reshape

    as_tensor(t, "roll")
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(
                f"roll: with no dims, shifts must be a single int, but got shifts={shifts}"
            )
        return reshape(roll(reshape(t, (-1,)), shifts, 0), t.shape)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}"
        )
    out = t
    for shift, dim in zip(shifts, dims, strict=True):
        dim = normalize_dim(dim, t.ndim, "roll")
        size = t.shape[dim]
        shift = as_size(shift, "roll", "shift", allow_negative=True) % max(size, 1)
        if shift:
            out = cat(
                [narrow(out, dim, size - shift, shift), narrow(out, dim, 0, size - shift)], dim
            )
    return out


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-d tensors: with ``indexing='ij'`` output ``i`` varies along
    dim ``i``; with ``'xy'`` the first two dims are swapped (as numpy's default)."""
    from . import expand, reshape

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f"meshgrid: indexing must be one of 'xy' or 'ij', but got indexing={indexing!r}"
        )
    if not tensors:
        raise RuntimeError("meshgrid: expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        as_tensor(t, "meshgrid", f"tensors[{i}]")
        if t.ndim > 1:
            raise RuntimeError(
                f"meshgrid: expects all tensors to be 0- or 1-dimensional, but tensors[{i}] "
                f"has shape {tuple(t.shape)}"
            )
        if t.dtype != tensors[0].dtype or t.device != tensors[0].device:
            raise RuntimeError(
                "meshgrid: expects all tensors to have the same dtype and device, but got "
                f"{tensors[0].dtype} on {tensors[0].device} and {t.dtype} on {t.device}"
            )
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = []
    for i, t in enumerate(order):
        ones = [1] * len(order)
        ones[i] = shape[i]
        grids.append(expand(reshape(t, tuple(ones)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
