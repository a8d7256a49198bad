"""Raising: find the op sequences a layer traces into and put back the one ONNX op it was.

A trace records what ran, and minitorch's layers are built from smaller ops: ``conv2d`` is
zero-padding ``cat``s, an ``unfold`` (im2col), a ``matmul`` with the reshaped weight and a
``view`` (plus a bias ``add``); eval-mode ``batch_norm`` is ``(x - mean) / sqrt(var + eps)
* weight + bias``. ONNX has one operator for each, which runtimes implement well, so before
converting, ``raise_layers(graph)`` rewrites each such pattern into one ``Conv`` or
``BatchNormalization`` node. The rewritten-away nodes become dead and DCE removes them.
Anything that does not match exactly is left alone and converts op by op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit.ir import Graph, Node, Value
from ..jit.passes import eliminate_dead_code
from ..tensor import Tensor


def raise_layers(graph: Graph) -> Graph:
    """A copy of ``graph`` with conv2d and eval-mode batch-norm patterns as single nodes."""
    g = graph.copy()
    for match in (_match_conv, _match_batch_norm):
        i = 0
        while i < len(g.nodes):
            users = g.users()
            found = match(g.nodes[i], users, set(g.outputs))
            if found is not None:
                last, new = found
                at = g.nodes.index(last)
                new.outputs[0].node = new
                g.nodes[at] = new  # the last node of the pattern: every input is defined
            i += 1
    return eliminate_dead_code(g)


# --- small matchers -----------------------------------------------------------------------
def _def(v: Any, op: str) -> Node | None:
    """The node defining ``v`` if it is an ``op`` node."""
    if isinstance(v, Value) and v.node is not None and v.node.op == op:
        return v.node
    return None


def _only_user(v: Value, users: dict, outputs: set) -> Node | None:
    """The single node reading ``v`` (None if it has several, or is a graph output)."""
    readers = users.get(v, [])
    return readers[0] if len(readers) == 1 and v not in outputs else None


def _is_stored(v: Any) -> bool:
    """A parameter, buffer or constant: something that becomes an ONNX initializer."""
    return isinstance(v, Value) and v.node is not None and v.node.op in ("get_attr", "constant")


def _per_channel(v: Any, channels: int) -> Value | None:
    """``p`` when ``v`` is ``p.view(1, C, 1, ...)`` of a stored 1-d ``p`` of C elements."""
    view = _def(v, "view")
    if view is None:
        return None
    p = view.args[0]
    shape = v.shape or ()
    ok = (
        len(shape) >= 2
        and shape[1] == channels
        and all(n == 1 for i, n in enumerate(shape) if i != 1)
    )
    return p if ok and _is_stored(p) and p.shape == (channels,) else None


def _zero_edge(v: Any) -> bool:
    node = _def(v, "constant")
    if node is None:
        return False
    data = node.args[0]
    data = data.detach().numpy() if isinstance(data, Tensor) else np.asarray(data)
    return bool(np.all(data == 0))


def _peel_padding(x: Value, users: dict, outputs: set) -> tuple[Value, list[int]]:
    """Undo ``pad2d``'s ``cat(zeros, x, zeros)`` along W then H: the unpadded input and the
    (pad_h, pad_w) that were added."""
    pads = [0, 0]
    for axis in (3, 2):
        cat = _def(x, "cat")
        if cat is None or len(cat.args) != 3 or _only_user(x, users, outputs) is None:
            break
        edge, inner, edge2 = cat.args
        dim = cat.kwargs.get("dim")
        rank = len(x.shape)
        if edge is not edge2 or not _zero_edge(edge) or dim not in (axis, axis - rank):
            break
        pads[axis - 2] = edge.shape[axis]
        x = inner
    return x, pads


# --- conv2d -------------------------------------------------------------------------------
def _match_conv(node: Node, users: dict, outputs: set) -> tuple[Node, Node] | None:
    """``view(matmul(view(W), unfold(pad(x))), (N, O, oh, ow)) [+ view(b)]`` -> ``Conv``."""
    if node.op != "view" or len(node.outputs[0].shape or ()) != 4:
        return None
    matmul = _def(node.args[0], "matmul")
    if matmul is None or _only_user(matmul.outputs[0], users, outputs) is not node:
        return None
    w_view, unfold = _def(matmul.args[0], "view"), _def(matmul.args[1], "unfold")
    if w_view is None or unfold is None:
        return None
    weight = w_view.args[0]
    kernel, stride, dilation = unfold.args[1:4]
    if (
        not isinstance(weight, Value)
        or len(weight.shape or ()) != 4
        or tuple(weight.shape[2:]) != tuple(kernel)
        or _only_user(unfold.outputs[0], users, outputs) is not matmul
    ):
        return None
    x, pads = _peel_padding(unfold.args[0], users, outputs)
    out, last, bias = node.outputs[0], node, None
    add = _only_user(out, users, outputs)
    if add is not None and add.op == "add" and add.args[0] is out:
        bias = _per_channel(add.args[1], weight.shape[0])
        if bias is not None:
            out, last = add.outputs[0], add
    conv = Node(
        "Conv",
        (x, weight, bias),
        {
            "kernel_shape": list(kernel),
            "strides": list(stride),
            "dilations": list(dilation),
            "pads": [pads[0], pads[1], pads[0], pads[1]],
        },
        [out],
        line=node.line,
    )
    return last, conv


# --- batch norm (eval) --------------------------------------------------------------------
def _match_batch_norm(node: Node, users: dict, outputs: set) -> tuple[Node, Node] | None:
    """``(x - view(mean)) / sqrt(view(var) + eps) [* view(w)] [+ view(b)]`` with stored
    statistics -> ``BatchNormalization`` (eval mode: the running statistics)."""
    if node.op != "div":
        return None
    sub, sqrt = _def(node.args[0], "sub"), _def(node.args[1], "sqrt")
    if sub is None or sqrt is None:
        return None
    x = sub.args[0]
    if not isinstance(x, Value) or len(x.shape or ()) < 2:
        return None
    channels = x.shape[1]
    mean = _per_channel(sub.args[1], channels)
    add_eps = _def(sqrt.args[0], "add")
    if mean is None or add_eps is None or not isinstance(add_eps.args[1], float):
        return None
    var = _per_channel(add_eps.args[0], channels)
    singles = (sub.outputs[0], sqrt.outputs[0], add_eps.outputs[0])
    if var is None or any(_only_user(v, users, outputs) is None for v in singles):
        return None
    out, last = node.outputs[0], node
    scale = bias = None
    mul = _only_user(out, users, outputs)
    if mul is not None and mul.op == "mul" and mul.args[0] is out:
        scale = _per_channel(mul.args[1], channels)
        if scale is not None:
            out, last = mul.outputs[0], mul
    add = _only_user(out, users, outputs)
    if add is not None and add.op == "add" and add.args[0] is out:
        bias = _per_channel(add.args[1], channels)
        if bias is not None:
            out, last = add.outputs[0], add
    dtype = np.dtype(x.dtype or "float32")
    batch_norm = Node(
        "BatchNormalization",
        (
            x,
            scale if scale is not None else np.ones(channels, dtype),
            bias if bias is not None else np.zeros(channels, dtype),
            mean,
            var,
        ),
        {"epsilon": float(add_eps.args[1])},
        [out],
        line=node.line,
    )
    return last, batch_norm
