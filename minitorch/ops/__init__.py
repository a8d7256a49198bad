"""The functional API: ``minitorch.add(a, b)``, ``minitorch.sum(t, dim=1)``, ...

Each function tidies its arguments (dims, shapes, scalars) and calls one ``Function.apply``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import as_bool, as_tensor
from ..dtypes import as_dtype, result_type
from ..dtypes import bool as bool_
from ..shape import as_size, as_sizes, infer_size, normalize_dim, numel, view_strides
from ..tensor import Tensor
from . import factory  # noqa: F401  (Tensor.new_tensor's constructor)
from .activation import LogSoftmax, Softmax
from .bitwise import bitwise_, bitwise_and, bitwise_not, bitwise_or, bitwise_xor
from .compose import (
    argsort,
    bmm,
    chunk,
    column_stack,
    dot,
    dstack,
    gather,
    hstack,
    index_select,
    mm,
    mv,
    new_like,
    repeat,
    return_type,
    row_stack,
    scatter,
    scatter_,
    sort,
    std,
    to_type,
    var,
    vstack,
)
from .elementwise import (
    Abs,
    Add,
    Clone,
    Div,
    Eq,
    Erf,
    Exp,
    Ge,
    Gt,
    Le,
    Log,
    LogicalAnd,
    LogicalNot,
    LogicalOr,
    Lt,
    Maximum,
    Minimum,
    Mul,
    Ne,
    Neg,
    Pow,
    Relu,
    Sigmoid,
    Sign,
    Sqrt,
    Sub,
    Tanh,
    ToCopy,
    Where,
    unbroadcast,
)
from .foreach import (
    _foreach_add,
    _foreach_add_,
    _foreach_addcdiv_,
    _foreach_addcmul_,
    _foreach_clone,
    _foreach_copy_,
    _foreach_lerp_,
    _foreach_maximum_,
    _foreach_mul_,
    _foreach_neg,
    _foreach_sqrt,
    _foreach_zero_,
)
from .indexed import (
    index_add,
    index_copy,
    index_fill,
    masked_scatter,
    msort,
    take,
    take_along_dim,
    tensor_split,
    unbind,
)
from .indexing import Index, IndexPut, IndexPut_, ScatterAdd, copy_, setitem
from .inplace import InplaceFunction, Set_, inplace_of
from .join import Cat, Stack
from .linalg import MatMul
from .norms import VectorNorm
from .random import Rand, Randint, Randn, Randperm
from .rearrange import meshgrid, narrow, roll
from .reduce import All, Any_, Argmax, Argmin, Max, Mean, Min, Sum
from .remainder import FloorDivide, Fmod, Remainder
from .selection import masked_fill, multinomial, split, topk, tril, triu
from .unary import (
    Acos,
    Acosh,
    Asin,
    Asinh,
    Atan,
    Atanh,
    Ceil,
    Clamp,
    Cos,
    Cosh,
    Expm1,
    Floor,
    Frac,
    IsFinite,
    IsInf,
    IsNan,
    Log1p,
    Log2,
    Log10,
    Reciprocal,
    Round,
    Rsqrt,
    Sin,
    Sinh,
    Tan,
    Trunc,
)
from .unique import unique
from .views import AsStrided, Expand, Permute, Slice, Squeeze, Unsqueeze, View


def _dim_list(args: tuple, op: str) -> tuple[int, ...]:
    """Dims given as ``f(0, 1)``, ``f((0, 1))`` or ``f([0, 1])``: ints (negative counts back)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(as_size(d, op, "dim", allow_negative=True) for d in args)


# --- elementwise --------------------------------------------------------------------------
def add(a: Any, b: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    """``a + alpha * b``."""
    return write_out(Add.apply(a, b if alpha == 1 else b * alpha), out, "add")


# --- in place: t.add_(x) is Add's in-place variant (see ops/inplace.py) ----------------
Add_ = inplace_of(Add, "add")
Sub_ = inplace_of(Sub, "subtract")
Mul_ = inplace_of(Mul, "multiply")
Div_ = inplace_of(Div, "true_divide")


def add_(t: Any, other: Any, alpha: Any = 1) -> Any:
    return Add_.apply(t, other if alpha == 1 else other * alpha)


def sub_(t: Any, other: Any, alpha: Any = 1) -> Any:
    return Sub_.apply(t, other if alpha == 1 else other * alpha)


def mul_(t: Any, other: Any) -> Any:
    return Mul_.apply(t, other)


def div_(t: Any, other: Any) -> Any:
    return Div_.apply(t, other)


def set_(t: Any, source: Any) -> Any:
    """Make ``t`` look at ``source``'s storage and layout (``t.data = source``)."""
    return Set_.apply(t, source)


Pow_ = inplace_of(Pow, "power")
_UNARY_INPLACE = {
    "exp": (Exp, "exp"),
    "log": (Log, "log"),
    "sqrt": (Sqrt, "sqrt"),
    "abs": (Abs, "absolute"),
    "neg": (Neg, "negative"),
    "tanh": (Tanh, "tanh"),
    "sigmoid": (Sigmoid, ""),
    "relu": (Relu, ""),
}


def pow_(t: Any, exponent: Any) -> Any:
    return Pow_.apply(t, exponent)


def inplace_unary(t: Any, name: str) -> Any:
    """``t.exp_()``, ``t.relu_()``, ...: the unary op ``name`` written into ``t``."""
    op, ufunc = _UNARY_INPLACE[name]
    return inplace_of(op, ufunc).apply(t)


def sub(a: Any, b: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    """``a - alpha * b``."""
    return write_out(Sub.apply(a, b if alpha == 1 else b * alpha), out, "sub")


def mul(a: Any, b: Any, *, out: Any = None) -> Any:
    return write_out(Mul.apply(a, b), out, "mul")


def div(a: Any, b: Any, *, out: Any = None) -> Any:
    return write_out(Div.apply(a, b), out, "div")


def pow(a: Any, b: Any, *, out: Any = None) -> Any:  # noqa: A001 - PyTorch's name
    return write_out(Pow.apply(a, b), out, "pow")


def remainder(a: Any, b: Any, *, out: Any = None) -> Any:
    """``a % b``, with the sign of ``b`` (Python's ``%``)."""
    return write_out(Remainder.apply(a, b), out, "remainder")


def fmod(a: Any, b: Any, *, out: Any = None) -> Any:
    """The remainder of ``a / b`` with the sign of ``a`` (C's ``fmod``)."""
    return write_out(Fmod.apply(a, b), out, "fmod")


def floor_divide(a: Any, b: Any, *, out: Any = None) -> Any:
    """``floor(a / b)``: ``a // b``."""
    return write_out(FloorDivide.apply(a, b), out, "floor_divide")


def write_out(result: Tensor, out: Any, op: str) -> Tensor:
    """An op's ``out=`` argument: the result written into ``out`` (which is returned), as
    PyTorch does it. A result with another shape replaces ``out``'s contents (PyTorch
    warns when ``out`` was not empty); one of a wider kind than ``out``'s dtype (float
    into an integer tensor) is refused; autograd cannot record a write into ``out``."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad or out.requires_grad:
        from ..state import grad as grad_mode

        if grad_mode.enabled:
            raise RuntimeError(
                f"{op}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
    if result.dtype.is_floating_point and not out.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}(): result type {result.dtype.name} can't be cast to the desired output "
            f"type {out.dtype.name}"
        )
    if out.shape == result.shape:
        return copy_(out, result)
    if out.numel():
        import warnings

        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out.shape)}, which does not match the required output shape "
            f"{list(result.shape)} ({op}(out=...)). Pass an empty tensor to avoid this warning.",
            UserWarning,
            stacklevel=3,
        )
    return set_(out, result if result.dtype is out.dtype else result.to(out.dtype))


def neg(a: Any) -> Any:
    return Neg.apply(a)


def exp(a: Any) -> Any:
    return Exp.apply(a)


def log(a: Any) -> Any:
    return Log.apply(a)


def sqrt(a: Any) -> Any:
    return Sqrt.apply(a)


def abs(a: Any) -> Any:  # noqa: A001
    return Abs.apply(a)


def sign(a: Any) -> Any:
    return Sign.apply(a)


def tanh(a: Any) -> Any:
    return Tanh.apply(a)


def sigmoid(a: Any) -> Any:
    return Sigmoid.apply(a)


def relu(a: Any) -> Any:
    return Relu.apply(a)


def maximum(a: Any, b: Any) -> Any:
    return Maximum.apply(a, b)


def minimum(a: Any, b: Any) -> Any:
    return Minimum.apply(a, b)


def where(condition: Any, a: Any, b: Any) -> Any:
    if isinstance(condition, Tensor) and condition.dtype is not bool_:
        raise RuntimeError(
            f"where: expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name} (shape {condition.shape}); compare it first (x > 0)"
        )
    return Where.apply(condition, a, b)


def eq(a: Any, b: Any) -> Any:
    return Eq.apply(a, b)


def ne(a: Any, b: Any) -> Any:
    return Ne.apply(a, b)


def lt(a: Any, b: Any) -> Any:
    return Lt.apply(a, b)


def le(a: Any, b: Any) -> Any:
    return Le.apply(a, b)


def gt(a: Any, b: Any) -> Any:
    return Gt.apply(a, b)


def ge(a: Any, b: Any) -> Any:
    return Ge.apply(a, b)


def logical_and(a: Any, b: Any) -> Any:
    return LogicalAnd.apply(a, b)


def logical_or(a: Any, b: Any) -> Any:
    return LogicalOr.apply(a, b)


def logical_not(a: Any) -> Any:
    return LogicalNot.apply(a)


def clone(a: Any) -> Any:
    return Clone.apply(a)


# --- more elementwise maths (ops/unary.py) ------------------------------------------------
def _unary_function(op: type, name: str) -> Any:
    def function(a: Any, *, out: Any = None) -> Any:
        isinstance(a, Tensor) or as_tensor(a, name)  # (isinstance first: the hot path)
        return write_out(op.apply(a), out, name)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``{name}`` of each element (PyTorch's ``torch.{name}``)."
    return function


sin = _unary_function(Sin, "sin")
cos = _unary_function(Cos, "cos")
tan = _unary_function(Tan, "tan")
asin = arcsin = _unary_function(Asin, "asin")
acos = arccos = _unary_function(Acos, "acos")
atan = arctan = _unary_function(Atan, "atan")
sinh = _unary_function(Sinh, "sinh")
cosh = _unary_function(Cosh, "cosh")
asinh = arcsinh = _unary_function(Asinh, "asinh")
acosh = arccosh = _unary_function(Acosh, "acosh")
atanh = arctanh = _unary_function(Atanh, "atanh")
log1p = _unary_function(Log1p, "log1p")
expm1 = _unary_function(Expm1, "expm1")
log2 = _unary_function(Log2, "log2")
log10 = _unary_function(Log10, "log10")
reciprocal = _unary_function(Reciprocal, "reciprocal")
rsqrt = _unary_function(Rsqrt, "rsqrt")
floor = _unary_function(Floor, "floor")
ceil = _unary_function(Ceil, "ceil")
trunc = fix = _unary_function(Trunc, "trunc")
frac = _unary_function(Frac, "frac")
isnan = _unary_function(IsNan, "isnan")
isinf = _unary_function(IsInf, "isinf")
isfinite = _unary_function(IsFinite, "isfinite")


def round(a: Any, *, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
    """Round half to even, to ``decimals`` decimal places."""
    isinstance(a, Tensor) or as_tensor(a, "round")
    if isinstance(decimals, builtins.bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    return write_out(Round.apply(a, int(decimals)), out, "round")


def square(a: Any, *, out: Any = None) -> Any:
    return write_out(Pow.apply(a, 2), out, "square")


def clamp(a: Any, min: Any = None, max: Any = None, *, out: Any = None) -> Any:  # noqa: A002
    """Limit each element to ``[min, max]``; either bound may be None, a number or a
    tensor (broadcast against ``a``)."""
    isinstance(a, Tensor) or as_tensor(a, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Tensor, int, float, np.number)):
            raise TypeError(
                f"clamp(): argument '{name}' must be a number or a Tensor, not "
                f"{type(bound).__name__}"
            )
        if isinstance(bound, (builtins.bool, np.bool_)):
            raise TypeError(f"clamp(): argument '{name}' must be a number, not bool")
    return write_out(Clamp.apply(a, min, max), out, "clamp")


clip = clamp


def clamp_min(a: Any, min: Any) -> Any:  # noqa: A002
    return clamp(a, min=min)


def clamp_max(a: Any, max: Any) -> Any:  # noqa: A002
    return clamp(a, max=max)


Clamp_ = inplace_of(Clamp)


def clamp_(t: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """``clamp`` written into ``t``."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp_.apply(t, min, max)


# --- comparing whole tensors ---------------------------------------------------------------
def equal(a: Any, b: Any) -> builtins.bool:
    """True when ``a`` and ``b`` have the same shape and the same values."""
    as_tensor(a, "equal"), as_tensor(b, "equal", "other")
    if a.shape != b.shape:
        return False
    return builtins.bool(all(eq(a, b)))


def isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (a bool tensor); NaNs are equal only
    with ``equal_nan``; infinities only to themselves."""
    as_tensor(a, "isclose"), as_tensor(b, "isclose", "other")
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"isclose: {a.dtype.name} did not match {b.dtype.name}: both tensors must have "
            "the same dtype"
        )
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"isclose: rtol ({rtol}) and atol ({atol}) must not be negative")
    with np.errstate(invalid="ignore"):  # (inf - inf: the NaN is masked)
        x, y = a.detach(), b.detach()  # (so nothing below records a graph)
        close = eq(x, y)
        if x.dtype.is_floating_point:
            finite = logical_and(isfinite(x), isfinite(y))
            near = le(abs(x - y), atol + rtol * abs(y))
            close = logical_or(close, logical_and(finite, near))
            if equal_nan:
                close = logical_or(close, logical_and(isnan(x), isnan(y)))
        return close


def allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
) -> builtins.bool:
    """True when every element of ``a`` is close to ``b``'s (``isclose``; they broadcast)."""
    return builtins.bool(all(isclose(a, b, rtol, atol, equal_nan)))


# --- norms (ops/norms.py) ------------------------------------------------------------------
def vector_norm(
    x: Any, ord: Any = 2, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
) -> Any:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements when None)."""
    isinstance(x, Tensor) or as_tensor(x, "linalg.vector_norm")
    if isinstance(ord, builtins.bool) or not isinstance(ord, (int, float, np.number)):
        raise TypeError(
            f"linalg.vector_norm: ord must be a number (2, 1, inf, ...), but got {ord!r}"
        )
    if dtype is not None:
        x = x.to(as_dtype(dtype, "linalg.vector_norm"))
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{x.dtype.name}"
        )
    dims = _dims(x, dim, "linalg.vector_norm")
    return VectorNorm.apply(x, float(ord), dims, _keepdim(keepdim, "linalg.vector_norm"))


def norm(
    x: Any, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None
) -> Any:
    """``torch.norm``: ``p="fro"`` (the default) is the 2-norm of all elements or of
    ``dim``; a number ``p`` is that vector norm; the nuclear norm (``"nuc"``) needs a
    singular value decomposition minitorch does not have."""
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(
            f"norm: p={p!r} is not supported; minitorch has the vector norms (p a number, or 'fro')"
        )
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


# --- reductions ---------------------------------------------------------------------------
def _dims(t: Any, dim: Any, op: str) -> tuple[int, ...] | None:
    """A reduction's dims, as PyTorch reads them: None for all; ``()`` or ``[]`` also all
    (not none); negative dims counted from the end; a dim named twice refused; a 0-d tensor
    takes dim 0 or -1 and reduces nothing."""
    isinstance(t, Tensor) or as_tensor(t, op)  # (isinstance first: the hot path)
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        return tuple(range(t.ndim))
    dims = tuple(
        normalize_dim(as_size(d, op, "dim", allow_negative=True), t.ndim, op) for d in dims
    )
    if len(set(dims)) != len(dims):
        twice = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"{op}: dim {twice} appears multiple times in the list of dims")
    return dims if t.ndim else ()


def sum(t: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:  # noqa: A001
    np_dtype = None if dtype is None else as_dtype(dtype).np
    return Sum.apply(t, _dims(t, dim, "sum"), _keepdim(keepdim, "sum"), np_dtype)


def mean(t: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return Mean.apply(t, _dims(t, dim, "mean"), _keepdim(keepdim, "mean"))


def _keepdim(keepdim: Any, op: str) -> bool:
    """A reduction's ``keepdim``: a bool (``keepdim="x"`` would otherwise count as True)."""
    return keepdim if keepdim.__class__ is builtins.bool else as_bool(keepdim, op, "keepdim")


_RESULTS = {"max": return_type("max"), "min": return_type("min")}  # torch.return_types


def _max_or_min(fn: Any, t: Any, dim: int | None, keepdim: bool, op: str) -> Any:
    isinstance(t, Tensor) or as_tensor(t, op)  # (isinstance first: the hot path)
    if t.numel() == 0:
        raise RuntimeError(f"{op}: cannot reduce an empty tensor (shape {t.shape})")
    if dim is None:
        return fn.apply(t, None, False)
    values, indices = fn.apply(t, normalize_dim(dim, t.ndim, op), _keepdim(keepdim, op))
    return _RESULTS[op](values, indices)


def max(t: Any, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Largest element, or ``(values, indices)`` along ``dim`` (first index on ties)."""
    return _max_or_min(Max, t, dim, keepdim, "max")


def min(t: Any, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Smallest element, or ``(values, indices)`` along ``dim`` (first index on ties)."""
    return _max_or_min(Min, t, dim, keepdim, "min")


def argmax(t: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "argmax")  # (isinstance first: the hot path)
    d = None if dim is None else normalize_dim(dim, t.ndim, "argmax")
    return Argmax.apply(t, d, _keepdim(keepdim, "argmax") and d is not None)


def argmin(t: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "argmin")  # (isinstance first: the hot path)
    d = None if dim is None else normalize_dim(dim, t.ndim, "argmin")
    return Argmin.apply(t, d, _keepdim(keepdim, "argmin") and d is not None)


def all(t: Any) -> Any:  # noqa: A001
    return All.apply(t)


def any(t: Any) -> Any:  # noqa: A001
    return Any_.apply(t)


# --- softmax ------------------------------------------------------------------------------
def softmax(t: Any, dim: int) -> Any:
    """``exp(t) / exp(t).sum(dim)``, computed without overflow."""
    isinstance(t, Tensor) or as_tensor(t, "softmax")  # (isinstance first: the hot path)
    return Softmax.apply(t, normalize_dim(dim, t.ndim, "softmax"))


def log_softmax(t: Any, dim: int) -> Any:
    """``log(softmax(t, dim))``, computed stably as ``t - logsumexp(t, dim)``."""
    isinstance(t, Tensor) or as_tensor(t, "log_softmax")  # (isinstance first: the hot path)
    return LogSoftmax.apply(t, normalize_dim(dim, t.ndim, "log_softmax"))


# --- linear algebra -----------------------------------------------------------------------
def matmul(a: Any, b: Any, *, out: Any = None) -> Any:
    return write_out(MatMul.apply(a, b), out, "matmul")


# --- views --------------------------------------------------------------------------------
def view(t: Any, *shape: Any) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "view")  # (isinstance first: the hot path)
    return View.apply(t, as_sizes(shape, "view", allow_infer=True))


def reshape(t: Any, *shape: Any) -> Any:
    """Like view, but copies when the layout makes a view impossible."""
    isinstance(t, Tensor) or as_tensor(t, "reshape")  # (isinstance first: the hot path)
    target = infer_size(as_sizes(shape, "reshape", allow_infer=True), numel(t.shape), "reshape")
    if view_strides(t.shape, t.stride(), target) is None:
        t = clone(t)
    return View.apply(t, target)


def permute(t: Any, *dims: Any) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "permute")  # (isinstance first: the hot path)
    return Permute.apply(t, _dim_list(dims, "permute"))


def transpose(t: Any, dim0: int, dim1: int) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "transpose")  # (isinstance first: the hot path)
    dims = list(range(t.ndim))
    d0, d1 = normalize_dim(dim0, t.ndim, "transpose"), normalize_dim(dim1, t.ndim, "transpose")
    if t.ndim == 0:  # dims 0 and -1 both name the single "virtual" dim of a scalar
        return Permute.apply(t, ())
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(t, tuple(dims))


def expand(t: Any, *sizes: Any) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "expand")  # (isinstance first: the hot path)
    return Expand.apply(t, as_sizes(sizes, "expand", allow_infer=True))


def broadcast_to(t: Any, shape: Sequence[int]) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "broadcast_to")  # (isinstance first: the hot path)
    return Expand.apply(t, tuple(shape))


def squeeze(t: Any, dim: int | Sequence[int] | None = None) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "squeeze")  # (isinstance first: the hot path)
    if dim is None:
        dims = tuple(range(t.ndim))
    elif not isinstance(dim, (tuple, list)):
        dims = (normalize_dim(dim, t.ndim, "squeeze"),)
    else:
        dims = tuple(normalize_dim(d, t.ndim, "squeeze") for d in dim)
    return Squeeze.apply(t, dims)


def unsqueeze(t: Any, dim: int) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "unsqueeze")  # (isinstance first: the hot path)
    return Unsqueeze.apply(t, normalize_dim(dim, t.ndim + 1, "unsqueeze"))


def flatten(t: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    isinstance(t, Tensor) or as_tensor(t, "flatten")  # (isinstance first: the hot path)
    if t.ndim == 0:
        return reshape(t, (1,))
    start = normalize_dim(start_dim, t.ndim, "flatten")
    end = normalize_dim(end_dim, t.ndim, "flatten")
    if start > end:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = 1
    for size in t.shape[start : end + 1]:
        merged *= size
    return reshape(t, t.shape[:start] + (merged,) + t.shape[end + 1 :])


def as_strided(
    t: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Any:
    """A view with any layout over ``t``'s storage (checked to stay in bounds).

    The offset defaults to ``t``'s own, as in PyTorch.
    """
    isinstance(t, Tensor) or as_tensor(t, "as_strided")  # (isinstance first: the hot path)
    offset = t.storage_offset() if storage_offset is None else storage_offset
    return AsStrided.apply(t, size, stride, offset, len(t.untyped_storage()))


def _is_basic(item: Any) -> bool:
    return (
        item is None
        or item is Ellipsis
        or isinstance(item, slice)
        or (isinstance(item, (int, np.integer)) and not isinstance(item, (builtins.bool, np.bool_)))
    )


def getitem(t: Any, index: Any) -> Any:
    """``t[index]``: a view for ints, slices, None and ``...``; a copy for tensor/list indices."""
    items = index if isinstance(index, tuple) else (index,)
    check_index(items, "getitem")
    if builtins.all(_is_basic(i) for i in items):
        return Slice.apply(t, items)
    return Index.apply(t, index=to_backend_index(items))


def check_index(items: tuple, op: str) -> None:
    """Each item of ``t[index]`` (or ``t[index] = v``) is one PyTorch accepts: an int, a
    slice of ints with a positive step, None, ``...``, or an integer/bool tensor, array or
    list. Anything else is an error naming the item, before any work is done."""
    for item in items:
        if _is_basic(item) and not isinstance(item, slice):
            continue
        if isinstance(item, slice):
            for part in ("start", "stop", "step"):
                v = getattr(item, part)
                if v is not None and (
                    isinstance(v, (builtins.bool, np.bool_)) or not isinstance(v, (int, np.integer))
                ):
                    raise TypeError(
                        f"{op}: slice indices must be integers or None, but the slice {item} has "
                        f"{part}={v!r} ({type(v).__name__})"
                    )
            if item.step is not None and item.step <= 0:
                raise ValueError(
                    f"{op}: slice step must be positive, got {item} (minitorch, like PyTorch, "
                    "has no flips)"
                )
            continue
        if isinstance(item, (builtins.bool, np.bool_)):
            continue
        if isinstance(item, Tensor) or isinstance(item, np.ndarray):
            kind = item.dtype.np.kind if isinstance(item, Tensor) else item.dtype.kind
            if kind not in "biu":
                raise IndexError(
                    f"{op}: tensors used as indices must be integer or bool tensors, but got "
                    f"dtype {item.dtype} (shape {tuple(item.shape)})"
                )
            continue
        if isinstance(item, range):
            continue
        if isinstance(item, list):
            kind = np.asarray(item).dtype.kind if item else "i"
            if kind not in "biu":
                raise IndexError(
                    f"{op}: a list used as an index must hold integers or bools, but got "
                    f"{item!r:.60}"
                )
            continue
        raise IndexError(
            f"{op}: index {item!r:.40} of type {type(item).__name__} is not valid: only "
            "integers, slices (`:`), ellipsis (`...`), None and integer or boolean tensors are "
            "valid indices"
        )


def scatter_add(values: Any, shape: Sequence[int], index: Any, accumulate: bool = True) -> Any:
    """Zeros of ``shape`` with ``values`` added at ``index`` (the backward of ``t[index]``)."""
    items = index if isinstance(index, tuple) else (index,)
    return ScatterAdd.apply(values, tuple(shape), to_backend_index(items), accumulate)


def to_backend_index(items: tuple) -> tuple:
    """An index as the indexing ops take it: lists become arrays, tensors stay tensors (a
    tracer records them as values the graph reads; the ops' forwards read their arrays)."""
    return tuple(
        np.asarray(i, dtype=None if i else np.int64)  # [] indexes nothing, as integers
        if isinstance(i, (list, range))  # a range is its list of ints, as in PyTorch
        else i
        for i in items
    )


# --- joining ------------------------------------------------------------------------------
def _check_join(tensors: Sequence[Any], op: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a list or tuple of tensors, got {type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError(f"{op}: expected a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{op}: expected a sequence of Tensors, but element {i} is a "
                f"{type(t).__name__} ({t!r:.40})"
            )
    first = tensors[0].dtype
    if builtins.any(t.dtype is not first for t in tensors):  # PyTorch's type promotion, not numpy's
        target = result_type(*tensors)
        return [t if t.dtype is target else t.to(target) for t in tensors]
    return list(tensors)


def cat(tensors: Sequence[Any], dim: int = 0, *, out: Any = None) -> Any:
    """Join tensors along an existing dim; all other sizes must match."""
    return write_out(join(tensors, dim, "cat"), out, "cat")


def join(tensors: Sequence[Any], dim: int, op: str) -> Any:
    """``cat``, its checks naming ``op`` (``hstack``, ``vstack``... are joins too)."""
    tensors = _check_join(tensors, op)
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(
                f"{op}: zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
    d = normalize_dim(dim, tensors[0].ndim, op)
    for i, t in enumerate(tensors[1:], 1):
        first = tensors[0].shape
        if t.ndim != len(first) or t.shape[:d] + t.shape[d + 1 :] != first[:d] + first[d + 1 :]:
            raise RuntimeError(
                f"{op}: tensors must have the same shape except in dim {d}, but tensor 0 has "
                f"shape {first} and tensor {i} has shape {t.shape}"
            )
    return Cat.apply(*tensors, dim=d)


def stack(tensors: Sequence[Any], dim: int = 0, *, out: Any = None) -> Any:
    """Join same-shape tensors along a new dim."""
    tensors = _check_join(tensors, "stack")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack: expects each tensor to be equal size, but tensor 0 has shape "
                f"{tensors[0].shape} and tensor {i} has shape {t.shape}"
            )
    d = normalize_dim(dim, tensors[0].ndim + 1, "stack")
    return write_out(Stack.apply(*tensors, dim=d), out, "stack")
