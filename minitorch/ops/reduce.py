"""Reductions: sum, mean, max, min, argmax, argmin, all, any (with ``dim`` and ``keepdim``).

Backward of a reduction spreads the output gradient back over the reduced dims: ``sum``
copies it to every element (an expand), ``mean`` also divides by the count, and
``max``/``min`` send it to the element(s) that won.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import array_module_of as xp
from ..dtypes import get_default_dtype, int64, is_floating
from ..function import Context, Function
from ..shape import numel
from .elementwise import Where
from .factory import from_host
from .registry import register


def _expand_back(grad: Any, shape: tuple, dim: tuple | int | None, keepdim: bool) -> Any:
    """Put back the reduced dims (size 1) and broadcast ``grad`` to the input ``shape``."""
    if dim is None:
        grad = grad.reshape((1,) * len(shape))
    elif not keepdim:
        for d in sorted((dim,) if isinstance(dim, int) else dim):
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


def _reduction_node_name(op: str, whole: int, along: int) -> Any:
    """PyTorch's node names of a reduction: one overload for all elements, one along dims."""

    def name(a: Any, dim: Any = None, *rest: Any) -> str:
        return f"{op}Backward{whole if dim is None else along}"

    return staticmethod(name)


class Sum(Function):
    grad_fn_name = _reduction_node_name("Sum", 0, 1)  # x.sum(): SumBackward0; x.sum(1): ...1

    @staticmethod
    def forward(a: Any, dim: tuple | None, keepdim: bool, dtype: Any = None) -> Any:
        return xp(a).asarray(a.sum(axis=dim, keepdims=keepdim, dtype=dtype))

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, dim, keepdim = inputs[:3]
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return _expand_back(grad, ctx.shape, ctx.dim, ctx.keepdim), None, None, None


class Mean(Function):
    grad_fn_name = _reduction_node_name("Mean", 0, 1)

    @staticmethod
    def forward(ctx: Context, a: Any, dim: tuple | None, keepdim: bool) -> Any:
        if not is_floating(a.dtype):
            a = a.astype(get_default_dtype().np)
        out = xp(a).asarray(a.mean(axis=dim, keepdims=keepdim))
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim
        ctx.count = numel(a.shape) // max(out.size, 1) if a.size else 0
        return out

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        grad = _expand_back(grad, ctx.shape, ctx.dim, ctx.keepdim)
        return grad / float(max(ctx.count, 1)), None, None


class _Extreme(Function):
    """Shared by max and min: the whole-tensor value, or ``(values, indices)`` along a dim."""

    @staticmethod
    def _reduce(ctx: Context, a: Any, dim: int | None, keepdim: bool, largest: bool) -> Any:
        m = xp(a)
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim
        if dim is None:
            out = m.asarray(a.max() if largest else a.min())
            ctx.save_for_backward(a, out)
            return out
        find = a.argmax if largest else a.argmin
        # Read the values at the indices: one pass instead of a second reduction (numpy's
        # max over a short last axis is several times slower than its argmax).
        indices = m.asarray(find(axis=dim, keepdims=True))
        values = m.take_along_axis(a, indices, axis=dim)
        if not keepdim:
            indices, values = indices.squeeze(dim), values.squeeze(dim)
        ctx.save_for_backward(indices)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Context, grad: Any, grad_indices: Any = None) -> tuple:
        if ctx.dim is None:
            # max() of everything: PyTorch shares the gradient evenly among tied extremes.
            a, out = ctx.saved_tensors
            winners = (a == out).to(grad.dtype)
            return grad * winners / winners.sum(), None, None
        # max(dim): the gradient goes to the element whose index was returned.
        (indices,) = ctx.saved_tensors
        dim, shape = ctx.dim, ctx.shape
        if not ctx.keepdim:
            indices, grad = indices.unsqueeze(dim), grad.unsqueeze(dim)
        along = [1] * len(shape)
        along[dim] = shape[dim]
        positions = from_host(np.arange(shape[dim]), int64, grad.device, False).reshape(along)
        return Where.apply(positions == indices, grad, 0.0), None, None


class Max(_Extreme):
    """``max()`` of all elements, or ``(values, indices)`` along one dim."""

    grad_fn_name = _reduction_node_name("Max", 1, 0)  # x.max(): MaxBackward1 in PyTorch

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return _Extreme._reduce(ctx, a, dim, keepdim, largest=True)


class Min(_Extreme):
    """``min()`` of all elements, or ``(values, indices)`` along one dim."""

    grad_fn_name = _reduction_node_name("Min", 1, 0)

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return _Extreme._reduce(ctx, a, dim, keepdim, largest=False)


class Argmax(Function):
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return xp(a).asarray(a.argmax(axis=dim, keepdims=keepdim))


class Argmin(Function):
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any, dim: int | None, keepdim: bool) -> Any:
        return xp(a).asarray(a.argmin(axis=dim, keepdims=keepdim))


class All(Function):
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).asarray(a.all())


class Any_(Function):
    name = "any"
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).asarray(a.any())


register(
    Sum,
    Mean,
    Max,
    Min,
    Argmax,
    Argmin,
    All,
    Any_,
)
