"""In-place ops: ``t.add_(x)``, ``t.copy_(src)``, ``t[i] = v`` write into ``t``'s memory.

Each is a Function, so it goes through ``apply`` like every other op: autocast, the tracer
and DDP see it. ``InplaceFunction.apply`` adds what a write needs on top:

- the storage's version counter goes up, so a value saved for backward that this write
  overwrites is caught when backward reads it;
- when the write is recorded, the written tensor's *history is rebased*: its ``grad_fn``
  becomes the new node, whose first input is the tensor's value before the write;
- a write through a view of a tensor that requires grad rebases the *base* (a
  ``CopySlices`` node: the base with the view's region replaced), as PyTorch does.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..backend import _registered as _kernels_registered
from ..backend import array_module_of
from ..dtypes import is_floating
from ..function import (
    Context,
    Function,
    Node,
    _connect,
    _new_node,
    _notify,
    check_same_device,
    describe_inputs,
    gradient_edge,
)
from ..state import apply_hooks as _apply_hooks
from ..state import grad as _grad
from ..tensor import Tensor
from .views import AsStrided


class InplaceFunction(Function):
    """An op whose ``forward(ctx, out, *args)`` writes its result into the array ``out``
    (the first argument's memory) and returns the array holding the result."""

    @classmethod
    def apply(cls, target: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(target, Tensor):
            raise TypeError(f"{cls.name}: expected a Tensor to write into, got {type(target)}")
        tensors = [target] + [a for a in args if isinstance(a, Tensor)]
        if len(tensors) > 1:
            check_same_device(cls.name, tensors)
        _check_no_overlap(target, cls.name)
        node = None
        if _grad.enabled and cls.differentiable:
            for t in tensors:
                if t._requires_grad:
                    _check_recordable(target, cls.name)
                    node = _new_node(cls, (target, *args))
                    break
        ctx = node if node is not None else Context((False,) * (1 + len(args)))
        raw = [a._data if isinstance(a, Tensor) else a for a in (target, *args)]
        try:
            forward = cls._kernel(tensors) if _kernels_registered else cls.forward
            result = forward(ctx, *raw, **kwargs)
        except (ValueError, TypeError) as err:
            raise RuntimeError(f"{cls.name}: {err} ({describe_inputs((target, *args))})") from err
        target._storage.version += 1
        if node is not None:
            if target._base is None:
                _connect(node, tensors, (target,), (result,))
            else:
                _rebase_view(node, target, tensors, result)
        if _apply_hooks:
            _notify(cls, (target, *args), kwargs, target)
        return target


def _check_no_overlap(t: Tensor, op: str) -> None:
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True)):
        raise RuntimeError(
            f"{op}: more than one element of the written-to tensor (shape {t.shape}, strides "
            f"{t.stride()}) refers to a single memory location, e.g. after expand(); "
            "clone() the tensor before writing to it"
        )


def _check_recordable(t: Tensor, op: str) -> None:
    """The in-place writes autograd can't record, refused with PyTorch's messages."""
    if t._requires_grad and t.grad_fn is None:
        raise RuntimeError(
            f"{op}: a leaf Variable that requires grad is being used in an in-place operation. "
            "(Update parameters inside `with minitorch.no_grad():`, or clone() the tensor.)"
        )
    base = t._base
    if base is not None:
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"{op}: a view of a leaf Variable that requires grad is being used in an "
                "in-place operation."
            )
        if not base.is_contiguous():
            raise RuntimeError(
                f"{op}: in-place writes through a view are recorded only when the base tensor "
                f"is contiguous (base shape {base.shape}, strides {base.stride()}); "
                "clone() the base first"
            )


# --- writes through a view --------------------------------------------------------------------
class CopySlices(Function):
    """The record of an in-place op through a view: the base's new value is the old base
    with the view's region replaced by ``op(view, *args)``. Backward sends the region's
    gradient through the op's own backward (``ctx.inner``) and the rest straight on."""

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        if ctx._freed:
            raise RuntimeError("CopySlices: " + FREED)
        inner = ctx.inner
        shape, strides, offset = ctx.region
        result = grad.clone()
        region = result.as_strided(shape, strides, offset)
        grads = type(inner)._function.backward(inner, region.clone())
        grads = grads if isinstance(grads, tuple) else (grads,)
        region.copy_(grads[0] if grads[0] is not None else 0.0)
        return (result, *grads[1:])


FREED = "Trying to backward through the graph a second time; use retain_graph=True."


def _rebase_view(inner: Node, view: Tensor, tensors: list, result: Any) -> None:
    """After writing through ``view``: the base's grad_fn becomes a CopySlices node, and the
    view's grad_fn a fresh as_strided of the base (so both see the write)."""
    base = view._base
    _connect(inner, tensors, (view,), (result,))  # packs what the op saved
    node = CopySlices._node_class((base._requires_grad, *inner.needs_input_grad[1:]))
    node.inner = inner
    node.region = (view.shape, view.stride(), view._offset - base._offset)
    node.next_functions = (
        gradient_edge(base) if base._requires_grad else (None, 0),
        *inner.next_functions[1:],
    )
    node._input_pos = inner._input_pos
    node._input_meta = ((base.shape, base._data.dtype), *inner._input_meta[1:])
    node._output_meta = ((base.shape, base._data.dtype),)
    node._packed = ()
    base.grad_fn, base._requires_grad, base._output_nr = node, True, 0
    fresh = AsStrided.apply(base, view.shape, view.stride(), view._offset, len(view._storage))
    view.grad_fn, view._requires_grad, view._output_nr = fresh.grad_fn, True, 0


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
            getattr(xp, cls._ufunc)(out, *args, out=out, casting="same_kind")
            return out
        result = cls._op.forward(ctx, out, *args, **kwargs)
        if result.shape != out.shape:
            raise RuntimeError(
                f"{cls.name}: output with shape {list(out.shape)} doesn't match the broadcast "
                f"shape {list(result.shape)}"
            )
        if is_floating(result.dtype) and not is_floating(out.dtype):
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


_VARIANTS: dict[type[Function], type[InplaceFunction]] = {}


def inplace_of(op: type[Function], ufunc: str = "") -> type[InplaceFunction]:
    """The in-place Function ``op_`` of an out-of-place op (made once, then cached)."""
    variant = _VARIANTS.get(op)
    if variant is None:
        variant = type(
            f"{op.__name__}_",
            (_InplaceOf,),
            {"name": f"{op.name}_", "_op": op, "_ufunc": ufunc, "__module__": __name__},
        )
        variant._node_class = op._node_class  # the graph shows AddBackward, as in PyTorch
        _VARIANTS[op] = variant
    return variant


class Set_(Function):  # noqa: N801 - PyTorch's name
    """``t.set_(source)`` / ``t.data = source``: t looks at source's storage from now on.

    Nothing is computed or recorded (t keeps its place in the graph and its identity, so a
    Parameter stays registered); it is an op so that apply hooks see the swap.
    """

    name = "set_"
    differentiable = False

    @classmethod
    def apply(cls, target: Any, source: Any) -> Any:
        if not isinstance(target, Tensor) or not isinstance(source, Tensor):
            raise TypeError(
                f"set_: expected two Tensors, got {type(target).__name__} and "
                f"{type(source).__name__}"
            )
        target._storage, target._data = source._storage, source._data
        target._strides, target._offset = source._strides, source._offset
        if _apply_hooks:
            _notify(cls, (target, source), {}, target)
        return target
