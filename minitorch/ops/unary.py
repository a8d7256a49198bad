"""More elementwise maths: trigonometric and hyperbolic functions, logarithms and
exponentials in other forms, reciprocals, rounding, the floating point tests (``isnan``,
``isinf``, ``isfinite``) and ``clamp``.

Most of these ops are one row of a table: the op, numpy's (and cupy's) function, and the
derivative, written with minitorch ops from the input ``x`` and the output ``out``, so
that each backward (``grad * derivative``) sits right next to its forward and can itself
be differentiated. Integer inputs give the default float dtype, as in PyTorch; rounding
an integer tensor leaves it as it is.

These ops have no scalar formula (``minitorch.ops.scalar``): the fusers and exporters
treat them as ordinary ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..backend import array_module_of as xp
from ..dtypes import is_floating
from ..function import Context, Function
from .elementwise import _promote, _shape, float_op, unbroadcast
from .registry import register

Derivative = Callable[[Any, Any], Any]


def _unary(
    cls_name: str, ufunc: str, derivative: Derivative | None, grad_fn_name: str = ""
) -> type[Function]:
    """The op ``cls_name``: ``ufunc`` forward, ``grad * derivative(x, out)`` backward
    (``derivative`` None: a piecewise constant op, whose gradient is zero)."""

    def forward(a: Any) -> Any:
        return float_op(getattr(xp(a), ufunc), a)

    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        ctx.save_for_backward(inputs[0], output)

    def backward(ctx: Context, grad: Any) -> Any:
        x, out = ctx.saved_tensors
        return grad * derivative(x, out)

    attrs: dict[str, Any] = {
        "__doc__": f"``{ufunc}`` elementwise.",
        "__module__": __name__,
        "name": cls_name.lower(),
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward),
    }
    if derivative is None:
        attrs["forward"] = staticmethod(_rounding(ufunc))
        attrs["setup_context"] = staticmethod(_save_nothing)
        attrs["backward"] = staticmethod(_zero_gradient)
    if grad_fn_name:
        attrs["grad_fn_name"] = grad_fn_name
    return type(cls_name, (Function,), attrs)


def _rounding(ufunc: str) -> Callable[[Any], Any]:
    def forward(a: Any) -> Any:
        return getattr(xp(a), ufunc)(a) if is_floating(a.dtype) else a.copy()

    return forward


def _save_nothing(ctx: Context, inputs: tuple, output: Any) -> None:
    pass


def _zero_gradient(ctx: Context, grad: Any) -> Any:
    return grad * 0.0  # rounding is piecewise constant


_LN2, _LN10 = math.log(2.0), math.log(10.0)

# --- the table: op, numpy's function, derivative d out / d x ------------------------------
Sin = _unary("Sin", "sin", lambda x, out: Cos.apply(x))
Cos = _unary("Cos", "cos", lambda x, out: -Sin.apply(x))
Tan = _unary("Tan", "tan", lambda x, out: 1.0 + out * out)
Asin = _unary("Asin", "arcsin", lambda x, out: Rsqrt.apply(1.0 - x * x))
Acos = _unary("Acos", "arccos", lambda x, out: -Rsqrt.apply(1.0 - x * x))
Atan = _unary("Atan", "arctan", lambda x, out: Reciprocal.apply(1.0 + x * x))
Sinh = _unary("Sinh", "sinh", lambda x, out: Cosh.apply(x))
Cosh = _unary("Cosh", "cosh", lambda x, out: Sinh.apply(x))
Asinh = _unary("Asinh", "arcsinh", lambda x, out: Rsqrt.apply(x * x + 1.0))
Acosh = _unary("Acosh", "arccosh", lambda x, out: Rsqrt.apply(x * x - 1.0))
Atanh = _unary("Atanh", "arctanh", lambda x, out: Reciprocal.apply(1.0 - x * x))
Log1p = _unary("Log1p", "log1p", lambda x, out: Reciprocal.apply(x + 1.0), "Log1PBackward0")
Expm1 = _unary("Expm1", "expm1", lambda x, out: out + 1.0)
Log2 = _unary("Log2", "log2", lambda x, out: Reciprocal.apply(x * _LN2))
Log10 = _unary("Log10", "log10", lambda x, out: Reciprocal.apply(x * _LN10))
Reciprocal = _unary("Reciprocal", "reciprocal", lambda x, out: -(out * out))
Floor = _unary("Floor", "floor", None)
Ceil = _unary("Ceil", "ceil", None)
Trunc = _unary("Trunc", "trunc", None)


class Rsqrt(Function):
    """``1 / sqrt(x)``."""

    @staticmethod
    def forward(a: Any) -> Any:
        return float_op(lambda x: xp(x).reciprocal(xp(x).sqrt(x)), a)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return grad * (-0.5 * out * out * out)  # d x^(-1/2) / dx = -x^(-3/2) / 2


class Frac(Function):
    """``x - trunc(x)``: the fractional part, with the sign of ``x``."""

    dtypes = "floating"

    @staticmethod
    def forward(a: Any) -> Any:
        return a - xp(a).trunc(a)

    setup_context = staticmethod(_save_nothing)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        return grad  # trunc is piecewise constant


class Round(Function):
    """Round half to even (as PyTorch and numpy), to ``decimals`` places."""

    @staticmethod
    def forward(a: Any, decimals: int = 0) -> Any:
        if not is_floating(a.dtype):
            return a.copy() if decimals >= 0 else xp(a).round(a, decimals)
        return xp(a).round(a, decimals)

    setup_context = staticmethod(_save_nothing)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return grad * 0.0, None


# --- the floating point tests: bool results, no gradient ----------------------------------
def _test(cls_name: str, ufunc: str) -> type[Function]:
    def forward(ctx: Context, a: Any) -> Any:
        return getattr(xp(a), ufunc)(a)

    attrs = {
        "__doc__": f"``{ufunc}`` elementwise: a bool tensor.",
        "__module__": __name__,
        "name": cls_name.lower(),
        "differentiable": False,
        "forward": staticmethod(forward),
    }
    return type(cls_name, (Function,), attrs)


IsNan = _test("IsNan", "isnan")
IsInf = _test("IsInf", "isinf")
IsFinite = _test("IsFinite", "isfinite")


# --- clamp --------------------------------------------------------------------------------
class Clamp(Function):
    """``min(max(x, low), high)`` elementwise; a bound may be None, a number or a tensor
    (broadcast against ``x``). Where ``low > high`` the result is ``high``, as in PyTorch."""

    broadcasting = True

    @staticmethod
    def grad_fn_name(x: Any, low: Any, high: Any) -> str:  # PyTorch's overloads
        tensors = any(hasattr(b, "shape") for b in (low, high))
        return "ClampBackward0" if tensors else "ClampBackward1"

    @staticmethod
    def forward(x: Any, low: Any, high: Any) -> Any:
        m = xp(x)
        out = x if low is None else m.maximum(x, low)
        out = out if high is None else m.minimum(out, high)  # (a NaN stays NaN)
        return _promote(out, *(v for v in (x, low, high) if v is not None))

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        x, low, high = inputs
        ctx.shapes = tuple(None if v is None else _shape(v) for v in inputs)
        ctx.save_for_backward(x, low, high)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        """The gradient goes to whichever of x and the bounds the output is (PyTorch's
        clamp_backward_min_max): to x where ``low <= x <= high``."""
        x, low, high = ctx.saved_tensors
        need_x, need_low, need_high = ctx.needs_input_grad
        x_kept = None
        if low is not None:
            x_kept = x >= low
        if high is not None:
            x_kept = (x <= high) if x_kept is None else (x_kept & (x <= high))
        grads = [grad * x_kept if need_x else None, None, None]
        if need_low:
            below = x < low
            grads[1] = grad * (below if high is None else below & (low < high))
        if need_high:
            above = x > high
            grads[2] = grad * (above if low is None else above | (high < low))
        return tuple(
            None if g is None else unbroadcast(g, shape)
            for g, shape in zip(grads, ctx.shapes, strict=True)
        )


register(
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Log1p,
    Expm1,
    Log2,
    Log10,
    Reciprocal,
    Rsqrt,
    Floor,
    Ceil,
    Trunc,
    Frac,
    Round,
    IsNan,
    IsInf,
    IsFinite,
    Clamp,
)
