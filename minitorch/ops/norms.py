"""Vector norms: ``||x||_p = (sum |x_i|^p)^(1/p)`` over all elements or some dims.

``ord`` 2 is the Euclidean length, 1 the sum of absolute values, ``inf`` the largest
absolute value (``-inf`` the smallest), 0 the number of non-zero elements. Backward sends
``grad * d||x||/dx``: ``x / ||x||`` for 2, ``sign(x)`` for 1, the winners of the max for
``inf`` (shared on ties), and in general ``sign(x) |x|^(p-1) / ||x||^(p-1)``; at ``x = 0``
the gradient is 0, as in PyTorch, and so it is everywhere for ``ord`` 0 (where PyTorch
leaves ``.grad`` unset).
"""

from __future__ import annotations

import math
from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .elementwise import Where
from .reduce import _expand_back
from .registry import register


class VectorNorm(Function):
    """``linalg.vector_norm(x, ord, dim, keepdim)``."""

    name = "linalg_vector_norm"
    dtypes = "floating"
    grad_fn_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(x: Any, ord: float, dim: tuple | None, keepdim: bool) -> Any:
        m = xp(x)
        a = m.abs(x)
        if ord == math.inf:
            out = a.max(axis=dim, keepdims=keepdim)
        elif ord == -math.inf:
            out = a.min(axis=dim, keepdims=keepdim)
        elif ord == 0:
            out = (a != 0).sum(axis=dim, keepdims=keepdim)
        elif ord == 1:
            out = a.sum(axis=dim, keepdims=keepdim)
        elif ord == 2:
            out = m.sqrt((a * a).sum(axis=dim, keepdims=keepdim))
        else:
            out = m.power(m.power(a, ord).sum(axis=dim, keepdims=keepdim), 1.0 / ord)
        return m.asarray(out).astype(x.dtype)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        x, ctx.ord, ctx.dim, ctx.keepdim = inputs
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        x, out = ctx.saved_tensors
        p = ctx.ord
        grad = _expand_back(grad, x.shape, ctx.dim, ctx.keepdim)
        out = _expand_back(out, x.shape, ctx.dim, ctx.keepdim)
        if p == 0:
            g = grad * 0.0
        elif p == 1:
            g = grad * x.sign()
        elif p in (math.inf, -math.inf):  # the extreme elements share the gradient
            winners = (x.abs() == out).to(x.dtype)
            count = _expand_back(winners.sum(ctx.dim, keepdim=True), x.shape, ctx.dim, True)
            g = grad * x.sign() * winners / count
        elif p == 2:
            g = Where.apply(out == 0, 0.0, grad * x / out)
        else:  # (0 where x is: for p < 1 the power would be 0 * inf)
            scaled = x.sign() * (x.abs() / out) ** (p - 1)
            g = Where.apply((out == 0) | (x == 0), 0.0, grad * scaled)
        return g, None, None, None


register(
    VectorNorm,
)
