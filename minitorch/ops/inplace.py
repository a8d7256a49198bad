"""In-place ops: ``t.add_(x)``, ``t.copy_(src)``, ``t[i] = v`` write into ``t``'s memory.

Each is a Function of kind ``"inplace"``, so it goes through the one ``apply`` like every
other op: autocast, the tracer and DDP see it. What a write needs on top of an ordinary op
is done by ``apply``'s layers: the bottom one (``minitorch.function.compute``) bumps the
storage's version counter, so a value saved for backward that this write overwrites is
caught when backward reads it; autograd's (``minitorch.autograd.history``) rebases the
written tensor's history onto the new node, and a write through a view rebases the
view's *base* (a ``CopySlices`` node), as PyTorch does.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..backend import array_module_of
from ..dtypes import is_floating
from ..function import Context, Function
from .registry import register


class InplaceFunction(Function):
    """An op whose ``forward(ctx, out, *args)`` writes its result into the array ``out``
    (the first argument's memory) and returns the array holding the result."""

    kind = "inplace"


# --- in-place versions of out-of-place ops ----------------------------------------------------
class _InplaceOf(InplaceFunction):
    """``t.op_(x)`` from the out-of-place ``op``: compute ``op(t, x)``, write it into t.

    Unrecorded (``no_grad``, optimizer updates, gradient accumulation) a ufunc op writes
    straight into t's memory; recorded, the op's own forward and backward run, with t's
    old value kept aside if forward saved it.
    """

    _op: ClassVar[type[Function]]
    _ufunc: ClassVar[str] = ""

    @classmethod
    def forward(cls, ctx: Context, out: Any, *args: Any, **kwargs: Any) -> Any:
        if cls._ufunc and type(ctx) is Context:  # not recorded: one pass, no temporary
            xp = array_module_of(out)
            try:
                getattr(xp, cls._ufunc)(out, *args, out=out, casting="same_kind")
                return out
            except (TypeError, ValueError):  # numpy checks before it writes: the path
                pass  # below says what is wrong (a cast, a broadcast) in PyTorch's words
        op = cls._op
        if op.setup_context is not None:
            result = op.forward(out, *args, **kwargs)
            op.setup_context(ctx, (out, *args), result, **kwargs)
        else:
            result = op.forward(ctx, out, *args, **kwargs)
        if result.shape != out.shape:
            raise RuntimeError(
                f"{cls.name}: output with shape {list(out.shape)} doesn't match the broadcast "
                f"shape {list(result.shape)}"
            )
        if _kind(result.dtype) > _kind(out.dtype):  # float into int, int into bool
            raise RuntimeError(
                f"{cls.name}: result type {result.dtype} can't be cast to the desired output "
                f"type {out.dtype}"
            )
        if ctx.saved and any(s is out for s in ctx.saved):  # keep t's old value for backward
            old = out.copy()
            ctx.saved = tuple(old if s is out else s for s in ctx.saved)
        out[...] = result
        return result

    @classmethod
    def backward(cls, ctx: Context, *grads: Any) -> Any:
        return cls._op.backward(ctx, *grads)


def _kind(dtype: Any) -> int:
    """bool < integer < floating: an in-place op may not write a result of a higher kind
    into its tensor (PyTorch's 'result type Float can't be cast to ... Long')."""
    return 2 if is_floating(dtype) else 0 if dtype.kind == "b" else 1


_VARIANTS: dict[type[Function], type[InplaceFunction]] = {}


def inplace_of(op: type[Function], ufunc: str = "") -> type[InplaceFunction]:
    """The in-place Function ``op_`` of an out-of-place op (made once, then cached)."""
    variant = _VARIANTS.get(op)
    if variant is None:
        variant = type(
            f"{op.__name__}_",
            (_InplaceOf,),
            {
                "name": f"{op.name}_",
                "_op": op,
                "_ufunc": ufunc,
                "records_as": op,  # the graph shows AddBackward0, as in PyTorch
                "__module__": __name__,
            },
        )
        _VARIANTS[op] = variant
        register(variant)
    return variant


class Set_(Function):  # noqa: N801 - PyTorch's name
    """``t.set_(source)`` / ``t.data = source``: t looks at source's storage from now on.

    Nothing is computed or recorded (t keeps its place in the graph and its identity, so a
    Parameter stays registered); it is an op so that every layer of ``apply`` sees the swap.
    """

    name = "set_"
    kind = "set"
    differentiable = False


register(
    Set_,
)
