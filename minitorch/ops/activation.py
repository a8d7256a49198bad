"""Softmax and log-softmax along a dim, computed stably (the max is subtracted first).

They are single Functions rather than compositions of exp/sum/div because their fused
backward is both cheaper and more accurate than differentiating the pieces.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .elementwise import _floating
from .registry import register


class Softmax(Function):
    dtypes = "floating"

    @staticmethod
    def forward(x: Any, dim: int) -> Any:
        m = xp(x)
        x = _floating(x, x)  # integer input: compute in the default float dtype
        if x.size == 0:
            return x.copy()
        e = m.exp(x - x.max(axis=dim, keepdims=True))  # exp(x - max) <= 1: no overflow
        return e / e.sum(axis=dim, keepdims=True)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        ctx.dim = inputs[1]
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        # dy_i/dx_j = y_i (delta_ij - y_j)  =>  dx = y * (g - sum(g * y))
        (out,) = ctx.saved_tensors
        return out * (grad - (grad * out).sum(ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    name = "log_softmax"
    dtypes = "floating"

    @staticmethod
    def forward(ctx: Context, x: Any, dim: int) -> Any:
        m = xp(x)
        x = _floating(x, x)  # integer input: compute in the default float dtype
        if x.size == 0:
            return x.copy()
        shifted = x - x.max(axis=dim, keepdims=True)
        out = shifted - m.log(m.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        # y = x - logsumexp(x)  =>  dx = g - softmax(x) * sum(g)
        (out,) = ctx.saved_tensors
        return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None


register(
    Softmax,
    LogSoftmax,
)
