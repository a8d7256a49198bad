"""Joining tensors: ``cat`` along an existing dim, ``stack`` along a new one.

Backward cuts the gradient back into the pieces (views of it, so nothing is copied).
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .registry import register


class Cat(Function):
    @staticmethod
    def forward(ctx: Context, *arrays: Any, dim: int) -> Any:
        ctx.dim, ctx.sizes = dim, [a.shape[dim] for a in arrays]
        return xp(*arrays).concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        before = (slice(None),) * ctx.dim
        grads, start = [], 0
        for size, need in zip(ctx.sizes, ctx.needs_input_grad, strict=True):
            grads.append(grad[before + (slice(start, start + size),)] if need else None)
            start += size
        return tuple(grads)


class Stack(Function):
    @staticmethod
    def forward(ctx: Context, *arrays: Any, dim: int) -> Any:
        ctx.dim = dim
        return xp(*arrays).stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        before = (slice(None),) * ctx.dim
        return tuple(
            grad[before + (i,)] if need else None for i, need in enumerate(ctx.needs_input_grad)
        )


register(
    Cat,
    Stack,
)
