"""Elementwise ops. Binary ops broadcast their inputs (see ``minitorch.shape.broadcast_shapes``).

Each op's ``backward`` sits right under its ``forward``. Backward receives the gradient of
the output as a Tensor and returns one gradient per forward argument (None where there
is nothing to differentiate), computed with minitorch ops so that it can be
differentiated again. A broadcast input gets its gradient summed back to its own shape
(``unbroadcast``).
"""

from __future__ import annotations

import math
from typing import Any

from .. import backend
from ..backend import array_module_of as xp
from ..dtypes import from_numpy_dtype, get_default_dtype, is_floating, result_type
from ..function import Context, Function
from .registry import register
from .scalar import array_function, erf_array


def float_op(fn: Any, a: Any) -> Any:
    """Run the floating op ``fn`` on the array ``a`` as PyTorch runs it: an integer or bool
    input in the default float dtype; float16/bfloat16 in float32, the result rounded once
    to ``a``'s dtype (a formula of several steps in float16 would round at each step)."""
    if is_floating(a.dtype):
        if a.dtype.itemsize == 2:
            return fn(a.astype("float32")).astype(a.dtype)
        return fn(a)
    return fn(a.astype(get_default_dtype().np))


def _promote(result: Any, *inputs: Any) -> Any:
    """Give the result PyTorch's dtype (``minitorch.dtypes.result_type``) where numpy's differs.

    numpy promotes ``int64 * float32`` and ``int_tensor + 0.5`` to float64, a 0-d float32
    array with a float16 one to float32, and uint8 with a 0-d int8 to int16; PyTorch gives
    float32, the default float dtype, float16 and uint8. True division of integers gives
    the default float dtype.
    """
    dt = result.dtype
    first = inputs[0]
    if (
        getattr(first, "dtype", None) is dt
        and all(  # the common case, decided quickly
            type(x) in _SCALARS or x.dtype is dt for x in inputs[1:]
        )
    ):
        return result
    target = result_type(*inputs)
    if is_floating(dt) and not target.is_floating_point:
        target = get_default_dtype()  # int / int
    return result if dt == target.np else result.astype(target.np)


def unbroadcast(grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` back to ``shape``: the gradient of broadcasting an input to grad's shape.

    Broadcasting copies a value along new leading dims and along dims of size 1, so each
    copy's gradient must be added up: sum over the leading dims and (keeping them) over
    the dims where the input had size 1.
    """
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    if lead < 0:  # the input had extra leading 1s (e.g. a (1, 3) value written into (3,))
        return grad.reshape(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape)


def _shape(a: Any) -> tuple[int, ...]:
    """The shape of an array or Python scalar."""
    return () if type(a) in _SCALARS else a.shape


_SCALARS = (int, float, bool, complex)


def _save_shapes(ctx: Context, inputs: tuple, output: Any) -> None:
    """What a broadcasting op's backward needs to sum gradients back: the input shapes."""
    ctx.shapes = (_shape(inputs[0]), _shape(inputs[1]))


class Add(Function):
    scalar = "{0} + {1}"
    scalar_grad = ("{g}", "{g}")
    broadcasting = True

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(a + b, a, b)

    setup_context = staticmethod(_save_shapes)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (
            unbroadcast(grad, sa) if need_a else None,
            unbroadcast(grad, sb) if need_b else None,
        )


class Sub(Function):
    scalar = "{0} - {1}"
    scalar_grad = ("{g}", "-{g}")
    broadcasting = True
    dtypes = "numeric"  # PyTorch refuses a - b with a bool tensor (use ~ or logical_xor)

    @staticmethod
    def grad_fn_name(a: Any, b: Any) -> str:  # 1 - x is PyTorch's rsub
        return "RsubBackward1" if type(a) in _SCALARS else "SubBackward0"

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(a - b, a, b)

    setup_context = staticmethod(_save_shapes)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (
            unbroadcast(grad, sa) if need_a else None,
            unbroadcast(-grad, sb) if need_b else None,
        )


class Mul(Function):
    scalar = "{0} * {1}"
    scalar_grad = ("{g} * {1}", "{g} * {0}")
    broadcasting = True

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(a * b, a, b)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, b = inputs
        ctx.shapes = (_shape(a), _shape(b))
        need_a, need_b = ctx.needs_input_grad
        # d(ab)/da = b and d(ab)/db = a: save only the factor a needed gradient uses.
        ctx.save_for_backward(a if need_b else None, b if need_a else None)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (
            unbroadcast(grad * b, sa) if need_a else None,
            unbroadcast(grad * a, sb) if need_b else None,
        )


class Div(Function):
    scalar = "{0} / {1}"
    scalar_grad = ("{g} / {1}", "-{g} * {0} / ({1} * {1})")
    broadcasting = True

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).true_divide(a, b), a, b)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, b = inputs
        ctx.shapes = (_shape(a), _shape(b))
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        # d(a/b)/da = 1/b,  d(a/b)/db = -a/b^2
        return (
            unbroadcast(grad / b, sa) if need_a else None,
            unbroadcast(-grad * a / (b * b), sb) if need_b else None,
        )


class Pow(Function):
    scalar = "power({0}, {1})"
    scalar_grad = (
        "{g} * where({1} == 0.0, 0.0, {1} * power({0}, {1} - 1.0))",
        "{g} * where(({0} == 0.0) & ({1} >= 0.0), 0.0, {out} * log({0}))",
    )
    broadcasting = True

    @staticmethod
    def grad_fn_name(a: Any, b: Any) -> str:  # PyTorch's overloads: x**2, x**y, 2**x
        return f"PowBackward{2 if type(a) in _SCALARS else 0 if type(b) in _SCALARS else 1}"

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).power(a, b), a, b)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, b = inputs
        ctx.shapes = (_shape(a), _shape(b))
        ctx.save_for_backward(a, b, output if ctx.needs_input_grad[1] else None)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        a, b, out = ctx.saved_tensors
        sa, sb = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:  # d(a^b)/da = b * a^(b-1), taken as 0 where b == 0 (as PyTorch does)
            if isinstance(b, (int, float)):
                grad_a = grad * 0.0 if b == 0 else grad * (b * a ** (b - 1))
            else:
                grad_a = unbroadcast(grad * Where.apply(b == 0, 0.0, b * a ** (b - 1)), sa)
        if need_b:  # d(a^b)/db = a^b * Log.apply(a), taken as 0 where a == 0 and b >= 0
            if isinstance(a, (int, float)):
                dlog = out * math.log(a) if a > 0 else out * float("nan")
                grad_b = grad * (Where.apply(b >= 0, 0.0, dlog) if a == 0 else dlog)
            else:
                grad_b = grad * Where.apply((a == 0) & (b >= 0), 0.0, out * Log.apply(a))
            grad_b = unbroadcast(grad_b, sb)
        return grad_a, grad_b


def _save_output(ctx: Context, inputs: tuple, output: Any) -> None:
    """For ops whose derivative is written with their output (exp, sqrt, tanh, ...)."""
    ctx.save_for_backward(output)


def _save_input(ctx: Context, inputs: tuple, output: Any) -> None:
    """For ops whose derivative is written with their input (log)."""
    ctx.save_for_backward(inputs[0])


def _save_nothing(ctx: Context, inputs: tuple, output: Any) -> None:
    """For ops whose derivative needs no value (neg)."""


class Neg(Function):
    scalar = "-{0}"
    scalar_grad = ("-{g}",)

    @staticmethod
    def forward(a: Any) -> Any:
        return -a

    setup_context = staticmethod(_save_nothing)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        return -grad


class Exp(Function):
    scalar = "exp({0})"
    scalar_grad = ("{g} * {out}",)

    @staticmethod
    def forward(a: Any) -> Any:
        return float_op(xp(a).exp, a)

    setup_context = staticmethod(_save_output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return grad * out  # d exp(a)/da = exp(a)


class Log(Function):
    scalar = "log({0})"
    scalar_grad = ("{g} / {0}",)

    @staticmethod
    def forward(a: Any) -> Any:
        return float_op(xp(a).log, a)

    setup_context = staticmethod(_save_input)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (a,) = ctx.saved_tensors
        return grad / a


class Sqrt(Function):
    scalar = "sqrt({0})"
    scalar_grad = ("{g} / ({out} * 2.0)",)

    @staticmethod
    def forward(a: Any) -> Any:
        return float_op(xp(a).sqrt, a)

    setup_context = staticmethod(_save_output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return grad / (out * 2.0)  # d sqrt(a)/da = 1 / (2 sqrt(a))


class Sign(Function):
    """-1, 0 or 1. Piecewise constant, so its gradient is zero."""

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).sign(a)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        return grad * 0.0


class Abs(Function):
    scalar = "fabs({0})"
    scalar_grad = ("{g} * sign({0})",)

    @staticmethod
    def forward(a: Any) -> Any:
        return xp(a).abs(a)

    setup_context = staticmethod(_save_input)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (a,) = ctx.saved_tensors
        return grad * a.sign()  # 0 at a == 0, as in PyTorch


class Tanh(Function):
    scalar = "tanh({0})"
    scalar_grad = ("{g} * (1.0 - {out} * {out})",)

    @staticmethod
    def forward(a: Any) -> Any:
        return float_op(xp(a).tanh, a)

    setup_context = staticmethod(_save_output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return TanhBackward.apply(grad, out)  # grad * (1 - out * out), as one op


class TanhBackward(Function):
    """``grad * (1 - out**2)``, the backward of tanh, as one op (PyTorch's tanh_backward).

    Written as three minitorch ops it would cost three ops' bookkeeping in every backward;
    as one op it costs one, and it is still differentiable (for ``create_graph=True``)
    because it has a backward of its own.
    """

    name = "tanh_backward"

    @staticmethod
    def forward(ctx: Context, grad: Any, out: Any) -> Any:
        ctx.save_for_backward(grad if ctx.needs_input_grad[1] else None, out)
        return grad * (1.0 - out * out)

    @staticmethod
    def backward(ctx: Context, gg: Any) -> tuple:
        grad, out = ctx.saved_tensors
        need_grad, need_out = ctx.needs_input_grad
        return (
            TanhBackward.apply(gg, out) if need_grad else None,
            -2.0 * gg * grad * out if need_out else None,
        )


class Sigmoid(Function):
    scalar = "exp(min({0}, 0.0)) / (1.0 + exp(-fabs({0})))"  # never overflows
    scalar_grad = ("{g} * {out} * (1.0 - {out})",)

    @staticmethod
    def forward(a: Any) -> Any:
        # 1 / (1 + exp(-a)) overflows for very negative a; the formula above never does.
        return float_op(lambda x: array_function(Sigmoid.scalar)(xp(x), x), a)

    setup_context = staticmethod(_save_output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return grad * out * (1.0 - out)


class Relu(Function):
    scalar = "max({0}, 0.0)"
    scalar_grad = ("{g} * ({out} > 0.0)",)

    @staticmethod
    def forward(a: Any) -> Any:
        return xp(a).maximum(a, 0).astype(a.dtype, copy=False)

    setup_context = staticmethod(_save_output)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (out,) = ctx.saved_tensors
        return grad * (out > 0)  # the gradient passes where the input was positive


class Erf(Function):
    """The error function, for exact GELU: within 1 ulp of ``math.erf`` in float32, to float64
    accuracy in float64 (``erf_array``)."""

    scalar = "erf({0})"
    scalar_grad = ("{g} * 1.1283791670955126 * exp(-({0} * {0}))",)

    @staticmethod
    def forward(x: Any) -> Any:
        return erf_array(xp(x), x)

    setup_context = staticmethod(_save_input)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        (x,) = ctx.saved_tensors
        return grad * (2.0 / math.sqrt(math.pi)) * Exp.apply(-(x * x))


def _save_both(ctx: Context, inputs: tuple, output: Any) -> None:
    """For maximum/minimum: both inputs (which one won) and their shapes."""
    _save_shapes(ctx, inputs, output)
    ctx.save_for_backward(*inputs)


def _winner_grads(ctx: Context, grad: Any, largest: bool) -> tuple:
    """Gradients of maximum/minimum: all of ``grad`` to the input that was picked, half to
    each where they tie (as PyTorch does), summed back to each input's shape."""
    a, b = ctx.saved_tensors
    sa, sb = ctx.shapes
    need_a, need_b = ctx.needs_input_grad
    a_wins, b_wins = (a > b, a < b) if largest else (a < b, a > b)
    half = grad * 0.5
    ties = a == b
    grad_a = Where.apply(ties, half, Where.apply(a_wins, grad, 0.0)) if need_a else None
    grad_b = Where.apply(ties, half, Where.apply(b_wins, grad, 0.0)) if need_b else None
    return (
        unbroadcast(grad_a, sa) if need_a else None,
        unbroadcast(grad_b, sb) if need_b else None,
    )


class Maximum(Function):
    scalar = "max({0}, {1})"
    scalar_grad = (
        "where({0} == {1}, {g} * 0.5, where({0} > {1}, {g}, 0.0))",
        "where({0} == {1}, {g} * 0.5, where({0} < {1}, {g}, 0.0))",
    )
    broadcasting = True

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).maximum(a, b), a, b)

    setup_context = staticmethod(_save_both)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return _winner_grads(ctx, grad, largest=True)


class Minimum(Function):
    scalar = "min({0}, {1})"
    scalar_grad = (
        "where({0} == {1}, {g} * 0.5, where({0} < {1}, {g}, 0.0))",
        "where({0} == {1}, {g} * 0.5, where({0} > {1}, {g}, 0.0))",
    )
    broadcasting = True

    @staticmethod
    def forward(a: Any, b: Any) -> Any:
        return _promote(xp(a, b).minimum(a, b), a, b)

    setup_context = staticmethod(_save_both)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return _winner_grads(ctx, grad, largest=False)


class Where(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, condition: Any, a: Any, b: Any) -> Any:
        ctx.shapes = (_shape(a), _shape(b))
        ctx.save_for_backward(condition)
        return _promote(xp(condition).where(condition, a, b), a, b)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        (condition,) = ctx.saved_tensors
        sa, sb = ctx.shapes
        _, need_a, need_b = ctx.needs_input_grad
        return (
            None,  # the condition is not differentiable
            unbroadcast(Where.apply(condition, grad, 0.0), sa) if need_a else None,
            unbroadcast(Where.apply(condition, 0.0, grad), sb) if need_b else None,
        )


def _comparison(op_name: str, method: str) -> type[Function]:
    """Comparison ops differ only in the numpy function; they return bool tensors."""

    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return getattr(xp(a), method)(a, b)

    attrs = {
        "forward": staticmethod(forward),
        "name": op_name.lower(),
        "broadcasting": True,
        "differentiable": False,  # bool outputs carry no gradient
    }
    return type(op_name, (Function,), attrs)


Eq = _comparison("Eq", "equal")
Ne = _comparison("Ne", "not_equal")
Lt = _comparison("Lt", "less")
Le = _comparison("Le", "less_equal")
Gt = _comparison("Gt", "greater")
Ge = _comparison("Ge", "greater_equal")
LogicalAnd = _comparison("Logical_And", "logical_and")
LogicalOr = _comparison("Logical_Or", "logical_or")


class LogicalNot(Function):
    name = "logical_not"
    differentiable = False

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).logical_not(a)


class Clone(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return a.copy()

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        return grad


class ToCopy(Function):
    """Copy to another dtype and/or device (``Tensor.to``)."""

    name = "to"

    @staticmethod
    def forward(ctx: Context, a: Any, dtype: Any, device: Any) -> Any:
        source = backend.of_array(a)
        ctx.source = (from_numpy_dtype(a.dtype), source.device_of(a))
        return backend.get(device).from_host(source.to_host(a), device, dtype.np)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        dtype, device = ctx.source
        return grad.to(dtype=dtype, device=device), None, None  # back where it came from


register(
    Erf,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Neg,
    Exp,
    Log,
    Sqrt,
    Sign,
    Abs,
    Tanh,
    TanhBackward,
    Sigmoid,
    Relu,
    Maximum,
    Minimum,
    Where,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalNot,
    Clone,
    ToCopy,
)
