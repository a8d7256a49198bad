"""Integer-style division: ``floor_divide`` (``a // b``), ``remainder`` (``a % b``, with
the sign of ``b``, as Python's ``%``) and ``fmod`` (with the sign of ``a``, as C's).

``a = b * floor(a / b) + remainder(a, b)``, so the remainder's gradient is 1 for ``a``
and ``-floor(a / b)`` for ``b`` (``-trunc(a / b)`` for fmod); ``floor_divide`` is
piecewise constant and records no gradient, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .elementwise import _promote, _shape, unbroadcast
from .registry import register


def _save(ctx: Context, inputs: tuple, output: Any) -> None:
    a, b = inputs
    ctx.shapes = (_shape(a), _shape(b))
    ctx.save_for_backward(a, b)


class Remainder(Function):
    """``a - b * floor(a / b)``: Python's ``%``, the sign of the divisor."""

    broadcasting = True
    dtypes = "numeric"

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).remainder(a, b), a, b)

    setup_context = staticmethod(_save)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (
            unbroadcast(grad, ctx.shapes[0]) if need_a else None,
            unbroadcast(-grad * (a / b).floor(), ctx.shapes[1]) if need_b else None,
        )


class Fmod(Function):
    """``a - b * trunc(a / b)``: C's ``fmod``, the sign of the dividend."""

    broadcasting = True
    dtypes = "numeric"

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).fmod(a, b), a, b)

    setup_context = staticmethod(_save)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (
            unbroadcast(grad, ctx.shapes[0]) if need_a else None,
            unbroadcast(-grad * (a / b).trunc(), ctx.shapes[1]) if need_b else None,
        )


class FloorDivide(Function):
    """``floor(a / b)`` (``a // b``); integers stay integers."""

    name = "floor_divide"
    broadcasting = True
    dtypes = "numeric"
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return _promote(xp(a, b).floor_divide(a, b), a, b)


register(
    Remainder,
    Fmod,
    FloorDivide,
)
