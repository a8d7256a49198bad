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
from ..function import Context, Function, _notify, check_same_device
from ..state import apply_hooks as _apply_hooks
from ..state import grad as _grad
from ..tensor import Tensor


class ForeachFunction(Function):
    """``forward(ctx, arrays, *args)`` runs over the list ``arrays`` (the first argument's
    tensors); list arguments are matched element by element, scalars are shared."""

    differentiable = False
    inplace = True

    @classmethod
    def apply(cls, tensors: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
        tensors = _tensor_list(cls.name, tensors, "self")
        lists = []
        for a in args:
            if isinstance(a, (list, tuple)):
                if len(a) != len(tensors):
                    raise RuntimeError(
                        f"{cls.name}: tensor lists must have the same length, got "
                        f"{len(tensors)} and {len(a)}"
                    )
                if a and isinstance(a[0], Tensor):
                    a = _tensor_list(cls.name, a, "other")
                    for t, o in zip(tensors, a, strict=True):
                        check_same_device(cls.name, [t, o])
            lists.append(a)
        if cls.inplace and _grad.enabled:
            for t in tensors:
                if t._requires_grad:
                    raise RuntimeError(
                        f"{cls.name}: a tensor that requires grad (shape {t.shape}) is being "
                        "updated in place; run optimizer updates inside `with minitorch.no_grad():`"
                    )
        raw = [[t._data for t in a] if _is_tensor_list(a) else a for a in lists]
        try:
            out = cls.forward(Context(), [t._data for t in tensors], *raw, **kwargs)
        except (ValueError, TypeError) as err:
            raise RuntimeError(f"{cls.name}: {err}") from err
        if cls.inplace:
            for t in tensors:
                t._storage.version += 1
            result = tensors
        else:
            result = [Tensor._from_array(o) for o in out]
        if _apply_hooks:
            _notify(cls, (tensors, *lists), kwargs, result)
        return None if cls.inplace else result


def _is_tensor_list(a: Any) -> bool:
    return isinstance(a, list) and bool(a) and isinstance(a[0], Tensor)


def _tensor_list(op: str, tensors: Any, what: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a list of tensors as {what}, got {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: element {i} of {what} is a {type(t).__name__}, not a Tensor")
    return list(tensors)


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


_foreach_add_ = ForeachAdd_.apply
_foreach_mul_ = ForeachMul_.apply
_foreach_lerp_ = ForeachLerp_.apply
_foreach_addcmul_ = ForeachAddcmul_.apply
_foreach_addcdiv_ = ForeachAddcdiv_.apply
_foreach_maximum_ = ForeachMaximum_.apply
_foreach_copy_ = ForeachCopy_.apply
_foreach_zero_ = ForeachZero_.apply
_foreach_sqrt = ForeachSqrt.apply
_foreach_add = ForeachAdd.apply
_foreach_neg = ForeachNeg.apply
_foreach_clone = ForeachClone.apply
