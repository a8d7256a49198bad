"""Chapter 02's layer of ``Function.apply``: recording each op's history in the graph.

When grad mode is on and some input of an op requires grad, the ``Autograd`` layer turns
the op's ``ctx`` into a node of the backward graph (``new_node``), lets the op compute,
and connects the node to the outputs (``connect``): the node becomes their ``grad_fn``,
its ``next_functions`` point at the nodes that made the inputs (or at ``AccumulateGrad``
for leaves), and what forward saved is packed as ``SavedTensor``s, with the version each
tensor had. An in-place write is recorded too: the written tensor's history is rebased
onto the new node (through a view, its base's, with ``CopySlices``), as PyTorch's
``set_history`` and ``rebase_history`` do. The graph's pieces are in ``graph.py``.

The layer registers itself on ``apply``'s stack when this package is imported.
"""

from __future__ import annotations

from typing import Any

from ..dtypes import is_floating
from ..function import Context, Function, Layer, register_layer
from ..ops.registry import register
from ..state import anomaly as _anomaly
from ..state import forward_trace
from ..state import grad as _grad
from ..tensor import Tensor
from .graph import (
    _NODE_CLASSES,
    FREED_GRAPH_MESSAGE,
    Node,
    SavedTensor,
    _Overloads,
    gradient_edge,
    leaf_accumulator,
    node_class,
)


def new_node(cls: type[Function], args: tuple) -> Node:
    """The node for one call of ``cls``: one edge per tensor argument, pointing at the
    node that produced it (its ``grad_fn``), at its ``AccumulateGrad`` (a leaf that
    requires grad), or at nothing."""
    needs, edges, positions, meta = [], [], [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(i)
            data = a._data
            meta.append((data.shape, data.dtype))
            if a._requires_grad:
                needs.append(True)
                fn = a.grad_fn  # (gradient_edge, inlined: this runs for every recorded op)
                edges.append((fn, a._output_nr) if fn is not None else (leaf_accumulator(a), 0))
            else:
                needs.append(False)
                edges.append((None, 0))
        else:
            needs.append(False)
    made = _NODE_CLASSES.get(cls) or node_class(cls)
    if type(made) is _Overloads:  # the op's node name depends on its arguments
        made = made.pick(args)
    node = made(tuple(needs))
    if made._edge_order is not None:  # PyTorch lists this node's inputs in another order
        edges, positions, meta = _reorder(made._edge_order, edges, positions, meta)
    node.next_functions = tuple(edges)
    node._input_pos = tuple(positions)
    node._input_meta = tuple(meta)
    if _anomaly.enabled:
        node._trace = forward_trace()
    return node


def _reorder(order: tuple, edges: list, positions: list, meta: list) -> tuple:
    """The edges (and their argument positions and metadata) in ``order``, a list of
    argument positions; arguments that were no tensor are skipped."""
    at = {pos: k for k, pos in enumerate(positions)}
    picked = [at[pos] for pos in order if pos in at]
    return [edges[k] for k in picked], [positions[k] for k in picked], [meta[k] for k in picked]


def connect(node: Node, inputs: Any, out: Any, raw: Any) -> None:
    """After forward: make the node the outputs' grad_fn and pack what forward saved
    (``inputs``: the op's arguments, ``raw``: the arrays forward returned)."""
    outs = out if isinstance(out, tuple) else (out,)
    raws = raw if isinstance(raw, tuple) else (raw,)
    skip = node.non_differentiable
    meta = []
    for i, o in enumerate(outs):
        data = o._data
        meta.append((data.shape, data.dtype))
        dt = data.dtype
        if (dt.kind != "f" and not is_floating(dt)) or (skip and any(raws[i] is s for s in skip)):
            continue  # integer/bool outputs and marked ones carry no gradient
        o._requires_grad = True
        o.grad_fn = node
        if i or o._output_nr:  # (an in-place op's target may have been output 1 before)
            o._output_nr = i
    node._output_meta = tuple(meta)
    saved = node.saved
    node._packed = tuple(SavedTensor.pack(s, inputs, outs, raws) for s in saved) if saved else ()
    node.saved = ()
    node.inputs = node.raw = None  # (forward's arrays: not kept alive by the graph)


class Autograd(Layer):
    """Record the op as a graph node when grad mode is on and an input requires grad."""

    order = 30

    def __call__(self, op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
        if _grad.enabled:
            kind = op.kind
            if (kind == "op" or kind == "view") and op.differentiable:
                for a in args:
                    if isinstance(a, Tensor) and a._requires_grad:
                        # record: a node for the op, the op computed with it as ctx, then
                        # what backward needs (setup_context) and the outputs connected
                        node = new_node(op, args)
                        out = self.below(op, args, kwargs, node)
                        if op.setup_context is not None and not op.tensors_in:
                            op.setup_context(node, node.inputs, node.raw, **kwargs)
                        connect(node, args, out, node.raw)
                        return out
            elif kind == "inplace" and op.differentiable:
                for a in args:
                    if isinstance(a, Tensor) and a._requires_grad:
                        return self._record_write(op, args, kwargs)
            elif kind == "foreach" and op.inplace:
                _refuse_foreach_write(op, args[0])
        return self.below(op, args, kwargs, ctx)

    def _record_write(self, op: type[Function], args: tuple, kwargs: dict) -> Any:
        target = args[0]
        if not isinstance(target, Tensor):
            return self.below(op, args, kwargs, None)  # compute names the mistake
        check_recordable(target, op.name)
        node = new_node(op, args)
        out = self.below(op, args, kwargs, node)
        tensors = [a for a in args if isinstance(a, Tensor)]
        if target._base is None:
            connect(node, tensors, (target,), (node.raw,))
        else:
            rebase_view(node, target, tensors, node.raw)
        return out


def _refuse_foreach_write(op: type[Function], tensors: Any) -> None:
    if isinstance(tensors, (list, tuple)):
        for t in tensors:
            if isinstance(t, Tensor) and t._requires_grad:
                raise RuntimeError(
                    f"{op.name}: a tensor that requires grad (shape {t.shape}) is being "
                    "updated in place; run optimizer updates inside `with minitorch.no_grad():`"
                )


def check_recordable(t: Tensor, op: str) -> None:
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

    grad_fn_name = "CopySlices"  # PyTorch's name (no "Backward")

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        if ctx._freed:
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        inner = ctx.inner
        shape, strides, offset = ctx.region
        result = grad.clone()
        region = result.as_strided(shape, strides, offset)
        grads = type(inner)._function.backward(inner, region.clone())
        grads = grads if isinstance(grads, tuple) else (grads,)
        region.copy_(grads[0] if grads[0] is not None else 0.0)
        return (result, *grads[1:])


def rebase_view(inner: Node, view: Tensor, tensors: list, result: Any) -> None:
    """After writing through ``view``: the base's grad_fn becomes a CopySlices node, and the
    view's grad_fn a fresh as_strided of the base (so both see the write)."""
    base = view._base
    connect(inner, tensors, (view,), (result,))  # packs what the op saved
    node = node_class(CopySlices)((base._requires_grad, *inner.needs_input_grad[1:]))
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
    fresh = base.as_strided(view.shape, view.stride(), view._offset)
    view.grad_fn, view._requires_grad, view._output_nr = fresh.grad_fn, True, 0


register_layer(Autograd())


register(
    CopySlices,
)
