"""Softmax and log-softmax along a dim, computed stably (the max is subtracted first).

They are single Functions rather than compositions of exp/sum/div because their fused
backward is both cheaper and more accurate than differentiating the pieces.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .elementwise import float_op
from .registry import register


class Softmax(Function):
    dtypes = "floating"

    @staticmethod
    def forward(x: Any, dim: int) -> Any:
        def softmax(x: Any) -> Any:
            if x.size == 0:
                return x.copy()
            e = xp(x).exp(x - x.max(axis=dim, keepdims=True))  # exp(x - max) <= 1: no overflow
            return e / e.sum(axis=dim, keepdims=True)

        return float_op(softmax, x)

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
        def log_softmax(x: Any) -> Any:
            if x.size == 0:
                return x.copy()
            m = xp(x)
            shifted = x - x.max(axis=dim, keepdims=True)
            # PyTorch's kernel keeps log(sum) in the input's dtype (a rounding for float16 and
            # bfloat16, computed in float32 here): so do we, to give its values bit for bit
            log_sum = m.log(m.exp(shifted).sum(axis=dim, keepdims=True))
            return shifted - log_sum.astype(dtype).astype(log_sum.dtype)

        dtype = x.dtype
        out = float_op(log_softmax, x)
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
