"""Matrix multiplication, with numpy's (and PyTorch's) batching and 1-d rules."""

from __future__ import annotations

from typing import Any

from ..device import array_module_of as xp
from ..function import Context, Function


class MatMul(Function):
    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
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
        return xp(a, b).matmul(a, b)
