"""Integer-style division: ``floor_divide`` (``a // b``), ``remainder`` (``a % b``, with
the sign of ``b``, as Python's ``%``) and ``fmod`` (with the sign of ``a``, as C's).

``a = b * floor(a / b) + remainder(a, b)``, so the remainder's gradient is 1 for ``a``
and ``-floor(a / b)`` for ``b`` (``-trunc(a / b)`` for fmod); ``floor_divide`` is
piecewise constant and records no gradient, as in PyTorch.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..backend import array_module_of as xp
from ..function import Context, Function
from .elementwise import _promote, _shape, unbroadcast
from .registry import register


class _Rounded(Function):
    """``a - b * round(a / b)`` for a rounding of the quotient: the remainder ops below
    differ only in the kernel (``xp.remainder``, ``xp.fmod``) and the rounding of
    ``a / b`` in ``b``'s gradient (``floor``, ``trunc``)."""

    broadcasting = True
    dtypes = "numeric"
    kernel: ClassVar[str]
    rounding: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kernel, rounding = cls.kernel, cls.rounding

        def forward(a: Any, b: Any) -> Any:
            return _promote(getattr(xp(a, b), kernel)(a, b), a, b)

        def backward(ctx: Context, grad: Any) -> tuple:
            a, b = ctx.saved_tensors
            need_a, need_b = ctx.needs_input_grad
            quotient = getattr(a / b, rounding)()
            return (
                unbroadcast(grad, ctx.shapes[0]) if need_a else None,
                unbroadcast(-grad * quotient, ctx.shapes[1]) if need_b else None,
            )

        cls.forward, cls.backward = staticmethod(forward), staticmethod(backward)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, b = inputs
        ctx.shapes = (_shape(a), _shape(b))
        ctx.save_for_backward(a, b)


class Remainder(_Rounded):
    """``a - b * floor(a / b)``: Python's ``%``, the sign of the divisor."""

    kernel, rounding = "remainder", "floor"


class Fmod(_Rounded):
    """``a - b * trunc(a / b)``: C's ``fmod``, the sign of the dividend."""

    kernel, rounding = "fmod", "trunc"


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
