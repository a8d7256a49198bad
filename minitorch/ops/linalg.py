"""Matrix multiplication, with numpy's (and PyTorch's) batching and 1-d rules."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import array_module_of as xp
from ..dtypes import is_floating
from ..function import Context, Function
from ..shape import broadcast_shapes
from .elementwise import unbroadcast
from .registry import register


def matmul_arrays(a: Any, b: Any, bias: Any = None) -> Any:
    """``a @ b`` (``+ bias``, broadcast, when given: PyTorch's addmm) on backend arrays.

    numpy has no half-precision BLAS: its float16 matmul is a plain loop, hundreds of times
    slower than float32, and bfloat16 comes back as float32. So on the CPU a float16 or
    bfloat16 product is computed the way tensor cores compute it: multiply and add in
    float32, round the result once to the inputs' dtype. The bias is added in that float32
    accumulation, before the one rounding, as PyTorch's addmm and linear do (rounding the
    product first would lose what the bias cancels: ``1 + 2**-9 - 1`` is 0 in bfloat16,
    2**-9 when rounded once). (cupy calls cuBLAS for float16.)
    """
    if a.dtype == b.dtype and a.dtype.itemsize == 2 and is_floating(a.dtype) and xp(a, b) is np:
        out = np.matmul(a.astype(np.float32), b.astype(np.float32))
        if bias is not None:
            out += bias.astype(np.float32)
        return out.astype(a.dtype)
    out = xp(a, b).matmul(a, b)
    if bias is not None:
        out += bias
    return out


_PRODUCTS = {
    (2, 2): "MmBackward0",
    (2, 1): "MvBackward0",
    (1, 1): "DotBackward0",
    (1, 2): "SqueezeBackward4",
}


class MatMul(Function):
    dtypes = "same"  # PyTorch's rule: float32 @ float64 is refused, not promoted

    @staticmethod
    def grad_fn_name(a: Any, b: Any) -> str:
        """PyTorch's node: the product its matmul dispatches to (mm, mv, dot), or the view
        of a batched product's result."""
        return _PRODUCTS.get((a.ndim, b.ndim), "UnsafeViewBackward0")

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        if a.ndim == 0 or b.ndim == 0:
            raise RuntimeError(
                f"matmul: both arguments need at least 1 dim, got shapes {a.shape} and {b.shape}"
            )
        inner_a = a.shape[-1]
        inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if inner_a != inner_b:
            raise RuntimeError(
                f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied: the first has "
                f"{inner_a} columns but the second has {inner_b} rows"
            )
        if a.ndim > 2 or b.ndim > 2:
            try:
                broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
            except RuntimeError as err:
                raise RuntimeError(
                    f"matmul: the batch dims of shapes {a.shape} and {b.shape} "
                    f"({a.shape[:-2]} and {b.shape[:-2]}) cannot be broadcast together"
                ) from err
        return matmul_arrays(a, b)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, b = inputs
        ctx.shapes = (a.shape, b.shape)
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        """For C = A @ B: dA = dC @ B^T and dB = A^T @ dC, batched, then summed back over
        broadcast batch dims. A 1-d operand is treated as a row (A) or a column (B)."""
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        if len(sb) == 1:
            grad = grad.unsqueeze(-1)  # (..., n) -> (..., n, 1)
        if len(sa) == 1:
            grad = grad.unsqueeze(-2)  # (..., m) -> (..., 1, m)
        grad_a = grad_b = None
        if need_a:
            b2 = b if b.ndim > 1 else b.unsqueeze(-1)
            grad_a = grad @ b2.mT
            if len(sa) == 1:
                grad_a = grad_a.squeeze(-2)
            grad_a = unbroadcast(grad_a, sa)
        if need_b:
            a2 = a if a.ndim > 1 else a.unsqueeze(0)
            if a2.ndim > 2 and len(sb) <= 2:
                # A batch against one matrix: fold the batch into a single product.
                k, m = a2.shape[-1], grad.shape[-1]
                grad_b = a2.reshape(-1, k).mT @ grad.reshape(-1, m)
            else:
                grad_b = unbroadcast(a2.mT @ grad, sb if len(sb) > 1 else sb + (1,))
            if len(sb) == 1:
                grad_b = grad_b.squeeze(-1)
        return grad_a, grad_b


register(
    MatMul,
)
