"""Multi-tensor ops, in the manner of PyTorch's ``_foreach_*``: one op over lists of tensors.

An optimizer step is the same few lines of arithmetic for every parameter. Written as one
``_foreach_`` op per line, a step is a handful of ``Function.apply`` calls however many
parameters there are (each call loops over the list), and each still goes through the one
choke point, so the tracer and DDP see it. The in-place ones (names ending in ``_``) count
a write on every tensor of their first list. They record no graph: optimizers run them
under ``no_grad``, and one that would change a tensor that requires grad is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .registry import register


class ForeachFunction(Function):
    """``forward(ctx, arrays, *args)`` runs over the list ``arrays`` (the first argument's
    tensors); list arguments are matched element by element, scalars are shared.
    ``inplace`` ones write into the first list's tensors and return None."""

    kind = "foreach"
    differentiable = False
    inplace = True


def _each(value: Any, n: int) -> Sequence[Any]:
    """A per-tensor list from a list, or a scalar repeated."""
    return value if isinstance(value, (list, tuple)) else [value] * n


class ForeachAdd_(ForeachFunction):  # noqa: N801
    """``t += alpha * other`` for each t (other: tensors, or scalars)."""

    name = "_foreach_add_"

    @staticmethod
    def forward(ctx: Context, ts: list, others: Any, alpha: float = 1.0) -> None:
        for t, o in zip(ts, _each(others, len(ts)), strict=True):
            if alpha == 1:
                xp(t).add(t, o, out=t, casting="same_kind")
            else:
                t += o * alpha


class ForeachMul_(ForeachFunction):  # noqa: N801
    """``t *= scalar`` (or the matching tensor / scalar of a list)."""

    name = "_foreach_mul_"

    @staticmethod
    def forward(ctx: Context, ts: list, others: Any) -> None:
        for t, o in zip(ts, _each(others, len(ts)), strict=True):
            xp(t).multiply(t, o, out=t, casting="same_kind")


class ForeachLerp_(ForeachFunction):  # noqa: N801
    """``t += weight * (end - t)``: a running average moving towards ``end``."""

    name = "_foreach_lerp_"

    @staticmethod
    def forward(ctx: Context, ts: list, ends: list, weight: float) -> None:
        for t, e in zip(ts, ends, strict=True):
            step = e - t
            step *= weight
            t += step


class ForeachAddcmul_(ForeachFunction):  # noqa: N801
    """``t += value * t1 * t2``."""

    name = "_foreach_addcmul_"

    @staticmethod
    def forward(ctx: Context, ts: list, t1: list, t2: list, value: Any = 1.0) -> None:
        for t, a, b, v in zip(ts, t1, t2, _each(value, len(ts)), strict=True):
            prod = a * b
            prod *= v
            t += prod


class ForeachAddcdiv_(ForeachFunction):  # noqa: N801
    """``t += value * t1 / t2``."""

    name = "_foreach_addcdiv_"

    @staticmethod
    def forward(ctx: Context, ts: list, t1: list, t2: list, value: Any = 1.0) -> None:
        for t, a, b, v in zip(ts, t1, t2, _each(value, len(ts)), strict=True):
            ratio = a / b
            ratio *= v
            t += ratio


class ForeachMaximum_(ForeachFunction):  # noqa: N801
    """``t = max(t, other)`` elementwise."""

    name = "_foreach_maximum_"

    @staticmethod
    def forward(ctx: Context, ts: list, others: list) -> None:
        for t, o in zip(ts, others, strict=True):
            xp(t).maximum(t, o, out=t)


class ForeachCopy_(ForeachFunction):  # noqa: N801
    """``t[...] = src`` for each pair."""

    name = "_foreach_copy_"

    @staticmethod
    def forward(ctx: Context, ts: list, srcs: list) -> None:
        for t, s in zip(ts, srcs, strict=True):
            t[...] = s


class ForeachZero_(ForeachFunction):  # noqa: N801
    """``t[...] = 0`` for each t (``zero_grad(set_to_none=False)``)."""

    name = "_foreach_zero_"

    @staticmethod
    def forward(ctx: Context, ts: list) -> None:
        for t in ts:
            t[...] = 0


class ForeachSqrt(ForeachFunction):
    """New tensors: the square root of each."""

    name = "_foreach_sqrt"
    inplace = False

    @staticmethod
    def forward(ctx: Context, ts: list) -> list:
        return [xp(t).sqrt(t) for t in ts]


class ForeachAdd(ForeachFunction):
    """New tensors: ``t + alpha * other`` for each t."""

    name = "_foreach_add"
    inplace = False

    @staticmethod
    def forward(ctx: Context, ts: list, others: Any, alpha: float = 1.0) -> list:
        others = _each(others, len(ts))
        return [t + o * alpha if alpha != 1 else t + o for t, o in zip(ts, others, strict=True)]


class ForeachNeg(ForeachFunction):
    """New tensors: ``-t`` for each t."""

    name = "_foreach_neg"
    inplace = False

    @staticmethod
    def forward(ctx: Context, ts: list) -> list:
        return [-t for t in ts]


class ForeachClone(ForeachFunction):
    """New tensors: a copy of each (an optimizer's fresh momentum buffers)."""

    name = "_foreach_clone"
    inplace = False

    @staticmethod
    def forward(ctx: Context, ts: list) -> list:
        return [t.copy() for t in ts]


def _public(op: type[ForeachFunction]) -> Any:
    """``minitorch._foreach_add_(...)``: calls ``op.apply`` at call time (so a tool that
    wraps ``Function.apply`` sees these calls too)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return op.apply(*args, **kwargs)

    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = op.__doc__
    return call


_foreach_add_ = _public(ForeachAdd_)
_foreach_mul_ = _public(ForeachMul_)
_foreach_lerp_ = _public(ForeachLerp_)
_foreach_addcmul_ = _public(ForeachAddcmul_)
_foreach_addcdiv_ = _public(ForeachAddcdiv_)
_foreach_maximum_ = _public(ForeachMaximum_)
_foreach_copy_ = _public(ForeachCopy_)
_foreach_zero_ = _public(ForeachZero_)
_foreach_sqrt = _public(ForeachSqrt)
_foreach_add = _public(ForeachAdd)
_foreach_neg = _public(ForeachNeg)
_foreach_clone = _public(ForeachClone)


register(
    ForeachAdd_,
    ForeachMul_,
    ForeachLerp_,
    ForeachAddcmul_,
    ForeachAddcdiv_,
    ForeachMaximum_,
    ForeachCopy_,
    ForeachZero_,
    ForeachSqrt,
    ForeachAdd,
    ForeachNeg,
    ForeachClone,
)
