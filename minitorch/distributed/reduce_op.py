"""``ReduceOp``: how a reduction combines the ranks' values (PyTorch's names)."""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """``SUM``, ``AVG`` (sum, then divide by the world size), ``PRODUCT``, ``MIN``, ``MAX``."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"


def as_reduce_op(op: ReduceOp | str, collective: str) -> ReduceOp:
    """``ReduceOp.SUM`` from ``ReduceOp.SUM`` or ``"sum"``; a clear error otherwise."""
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str):
        try:
            return ReduceOp(op.lower())
        except ValueError:
            pass
    names = ", ".join(o.name for o in ReduceOp)
    raise ValueError(f"{collective}: unknown op {op!r}; use one of ReduceOp.{{{names}}}")
