"""Elementwise map (one input) and zip (two inputs, broadcast), over any strides.

Both are the fusion codegen's kernel for a single step: thread ``i`` computes output
element ``i``; it unravels ``i`` into an index of the output shape and walks each input's
strides (0 along a broadcast dim) to find the element it needs.
"""

from __future__ import annotations

from typing import Any

from .. import fusion_codegen


def map_op(op: str, a: Any) -> Any:
    """``op(a)`` elementwise (``op`` is a name in :data:`minitorch.cuda.fusion_codegen.UNARY`)."""
    return fusion_codegen.run_steps([(op, "x0")], [a], caller="map_op")


def zip_op(op: str, a: Any, b: Any) -> Any:
    """``op(a, b)`` elementwise with broadcasting (:data:`minitorch.cuda.fusion_codegen.BINARY`)."""
    return fusion_codegen.run_steps([(op, "x0", "x1")], [a, b], caller="zip_op")
