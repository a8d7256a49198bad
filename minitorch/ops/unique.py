"""``unique``: the distinct elements (or slices along ``dim``) of a tensor, sorted, with
where each input element went (``return_inverse``) and how often each occurs
(``return_counts``). Its output's size depends on the data; no gradient flows through it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import array_module_of as xp
from ..checks import as_bool, as_tensor
from ..function import Context, Function
from ..shape import normalize_dim
from ..tensor import Tensor
from .registry import register


class Unique(Function):
    """``(values, inverse, counts)`` of ``a`` (flattened when ``dim`` is None)."""

    name = "unique"
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None) -> Any:
        m = xp(a)
        values, inverse, counts = m.unique(a, return_inverse=True, return_counts=True, axis=dim)
        shape = a.shape if dim is None else (a.shape[dim],)
        return values, inverse.reshape(shape).astype(np.int64), counts.astype(np.int64)


register(Unique)


def unique(
    t: Any,
    sorted: bool = True,  # noqa: A002 - PyTorch's name
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Tensor | tuple:
    """The sorted distinct values of ``t``; with ``return_inverse`` also each element's
    position among them (shaped as ``t``), with ``return_counts`` each value's count. With
    ``dim``, the distinct slices along it. (Sorted always: ``sorted=False`` on PyTorch's
    CPU also gives them sorted.)"""
    as_tensor(t, "unique")
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse),
                       ("return_counts", return_counts)):  # fmt: skip
        as_bool(flag, "unique", name)
    if dim is not None:
        dim = normalize_dim(dim, t.ndim, "unique")
        if t.ndim == 0:
            raise IndexError("unique: dim given for a 0-d tensor, which has no dims")
    values, inverse, counts = Unique.apply(t, dim)
    extras = ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return (values, *extras) if extras else values
