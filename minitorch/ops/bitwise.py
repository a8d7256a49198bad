"""Bitwise ops on integer and bool tensors: ``&``, ``|``, ``^``, ``~`` and their names.

On bool tensors they are the logical ops; on integers they work bit by bit (``~5`` is
``-6``). Floats are refused, as in PyTorch. No gradient flows through them.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from ..tensor import Tensor
from .inplace import inplace_of
from .registry import register


def _bitwise(op_name: str, ufunc: str, arity: int) -> type[Function]:
    """A bitwise op: numpy's ``ufunc`` on the arrays (which broadcast, for two inputs)."""

    def forward(ctx: Context, *arrays: Any) -> Any:
        return getattr(xp(*arrays), ufunc)(*arrays)

    attrs = {
        "forward": staticmethod(forward),
        "name": op_name,
        "broadcasting": arity == 2,
        "differentiable": False,
    }
    return type("".join(w.title() for w in op_name.split("_")), (Function,), attrs)


BitwiseAnd = _bitwise("bitwise_and", "bitwise_and", 2)
BitwiseOr = _bitwise("bitwise_or", "bitwise_or", 2)
BitwiseXor = _bitwise("bitwise_xor", "bitwise_xor", 2)
BitwiseNot = _bitwise("bitwise_not", "invert", 1)
register(BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot)


def _check(op: str, *values: Any) -> None:
    """Integer and bool operands only (tensors, or Python ints and bools)."""
    for v in values:
        if isinstance(v, Tensor):
            if v.dtype.is_floating_point:
                raise NotImplementedError(
                    f'"{op}" not implemented for {v.dtype} tensors (shape {tuple(v.shape)}): '
                    "bitwise ops take integer and bool tensors only"
                )
        elif isinstance(v, float):
            raise NotImplementedError(
                f'"{op}" not implemented for a float operand ({v!r}): bitwise ops take '
                "integer and bool values only"
            )
        elif not isinstance(v, int):  # (bool is an int)
            raise TypeError(
                f"{op}: expected an integer or bool tensor or Python int, but got "
                f"{type(v).__name__} {v!r:.40}"
            )


def bitwise_and(a: Any, b: Any) -> Tensor:
    _check("bitwise_and", a, b)
    return BitwiseAnd.apply(a, b)


def bitwise_or(a: Any, b: Any) -> Tensor:
    _check("bitwise_or", a, b)
    return BitwiseOr.apply(a, b)


def bitwise_xor(a: Any, b: Any) -> Tensor:
    _check("bitwise_xor", a, b)
    return BitwiseXor.apply(a, b)


def bitwise_not(a: Any) -> Tensor:
    if isinstance(a, Tensor) and a.dtype.is_floating_point:
        raise TypeError(
            f"~ (bitwise_not) is only implemented on integer and Boolean-type tensors, but got "
            f"a {a.dtype} tensor of shape {tuple(a.shape)}"
        )
    _check("bitwise_not", a)
    return BitwiseNot.apply(a)


_INPLACE = {
    "and": (BitwiseAnd, "bitwise_and"),
    "or": (BitwiseOr, "bitwise_or"),
    "xor": (BitwiseXor, "bitwise_xor"),
}


def bitwise_(t: Tensor, other: Any, which: str) -> Tensor:
    """``t &= other`` (``|=``, ``^=``): the bitwise op written into ``t``."""
    op, ufunc = _INPLACE[which]
    _check(op.name, t, other)
    return inplace_of(op, ufunc).apply(t, other)
