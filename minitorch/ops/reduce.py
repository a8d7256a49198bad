"""Reductions: sum, mean, max, min, argmax, argmin, all, any (with ``dim`` and ``keepdim``)."""

from __future__ import annotations

from typing import Any

from ..device import array_module_of as xp
from ..dtypes import get_default_dtype
from ..function import Context, Function


class Sum(Function):
    @staticmethod
    def forward(ctx: Context, a: Any, dim: tuple | None, keepdim: bool, dtype: Any = None) -> Any:
        return xp(a).asarray(a.sum(axis=dim, keepdims=keepdim, dtype=dtype))


class Mean(Function):
    @staticmethod
    def forward(ctx: Context, a: Any, dim: tuple | None, keepdim: bool) -> Any:
        if a.dtype.kind != "f":
            a = a.astype(get_default_dtype().np)
        return xp(a).asarray(a.mean(axis=dim, keepdims=keepdim))


class Max(Function):
    """``max()`` of all elements, or ``(values, indices)`` along one dim."""

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        m = xp(a)
        if dim is None:
            return m.asarray(a.max())
        return m.asarray(a.max(axis=dim, keepdims=keepdim)), m.asarray(
            a.argmax(axis=dim, keepdims=keepdim)
        )


class Min(Function):
    """``min()`` of all elements, or ``(values, indices)`` along one dim."""

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        m = xp(a)
        if dim is None:
            return m.asarray(a.min())
        return m.asarray(a.min(axis=dim, keepdims=keepdim)), m.asarray(
            a.argmin(axis=dim, keepdims=keepdim)
        )


class Argmax(Function):
    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return xp(a).asarray(a.argmax(axis=dim, keepdims=keepdim))


class Argmin(Function):
    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return xp(a).asarray(a.argmin(axis=dim, keepdims=keepdim))


class All(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).asarray(a.all())


class Any_(Function):
    name = "any"

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).asarray(a.any())
