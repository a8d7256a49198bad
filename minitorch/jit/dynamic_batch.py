"""A trace's batch size as a graph op, so that a saved trace runs other batch sizes.

A trace records sizes as the numbers they were: ``x.view(x.shape[0], -1)`` and conv2d's
own reshapes and zero padding hold the traced batch. PyTorch's tracer records
``x.size(0)`` as an op instead; here the same result is found by comparison: the
function is traced again with the batch one and two rows longer, and every constant that
moves with it is rewritten as a function of the batch the graph is given:

- an integer that grows by ``a`` per row becomes ``a * batch + k``, computed by
  ``Tensor.size(x, 0)`` and ``prim`` nodes at the top of the graph;
- a constant tensor filled with one value whose shape moves with the batch (conv2d's
  zero padding) becomes ``minitorch.full(shape, value)``.

Anything else that moves (a float such as ``1 / batch``, a tensor of varying values, ops
that differ) means the graph can't be generalized, and it keeps the traced sizes. The
generalized graph is then checked against the function itself at a third, unseen batch
size; only a graph that gives the function's results there is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .interpreter import run_graph
from .ir import Graph, Node, Value
from .ops import resolve
from .probe import longer_inputs, probing


class _NotGeneral(Exception):  # noqa: N818 - internal signal, never escapes this module
    """A constant moves with the batch in a way this module can't express."""


class _Linear:
    """An integer that is ``a * batch + k``."""

    __slots__ = ("a", "k")

    def __init__(self, a: int, k: int) -> None:
        self.a, self.k = a, k


class _Fill:
    """A constant tensor: ``full(shape, value, dtype)``, its shape moving with the batch."""

    __slots__ = ("shape", "value", "dtype")

    def __init__(self, shape: tuple, value: Any, dtype: Any) -> None:
        self.shape, self.value, self.dtype = shape, value, dtype


def generalize(retrace: Any, graph: Graph, one_longer: Graph) -> Graph | None:
    """``graph`` (traced at ``retrace``'s example inputs; ``one_longer``: traced with one
    row more) with its batch size as an op, or None when it can't be generalized (see the
    module docstring)."""
    example = retrace.example
    if not example or not all(isinstance(t, Tensor) and t.dim() >= 1 for t in example):
        return None
    batch = example[0].shape[0]
    if batch < 1 or any(t.shape[0] != batch for t in example):
        return None  # the inputs don't share a batch dim
    try:
        longer = [one_longer, *retrace.longer_traces(graph, (2,))]
    except Exception:  # noqa: BLE001 - it can't run other batch sizes
        return None
    try:
        general = _rewrite(graph, longer, batch)
    except _NotGeneral:
        return None
    return general if _agrees(retrace, general, batch) else None


# --- comparing the traces -------------------------------------------------------------------


def _rewrite(graph: Graph, longer: list[Graph], batch: int) -> Graph:
    """A copy of ``graph`` whose moving constants are computed from the batch size."""
    g = graph.copy()
    walks = [list(g.walk())] + [list(x.walk()) for x in longer]
    if len({len(w) for w in walks}) != 1:
        raise _NotGeneral
    top = {id(n) for n in g.nodes}
    changed: dict[int, tuple[tuple, dict]] = {}
    for node, *others in zip(*walks, strict=True):
        if any(o.op != node.op for o in others):
            raise _NotGeneral  # another graph: the branch depends on the size
        args = _merge([node.args] + [o.args for o in others], batch)
        kwargs = _merge([node.kwargs] + [o.kwargs for o in others], batch)
        if _moves(args) or _moves(kwargs):
            if id(node) not in top:
                raise _NotGeneral  # inside a scripted If/Loop: left as it is
            changed[id(node)] = (args, kwargs)
        for v, *vs in zip(node.outputs, *(o.outputs for o in others), strict=True):
            if any(w.shape != v.shape for w in vs):
                v.shape = None  # it moves with the batch: not known ahead
    for v, *vs in zip(g.inputs, *(x.inputs for x in longer), strict=True):
        if any(w.shape != v.shape for w in vs):
            v.shape = None
    if not changed:
        raise _NotGeneral  # nothing moves: the sizes are held some other way
    return _emit(g, changed)


def _merge(items: list, batch: int) -> Any:
    """One constant from its three traces (batch ``b``, ``b + 1``, ``b + 2``): itself when
    it does not move, a ``_Linear`` or ``_Fill`` when it moves as they can express."""
    first = items[0]
    if isinstance(first, Value):
        if not all(isinstance(x, Value) for x in items):
            raise _NotGeneral
        return first
    if isinstance(first, bool) or first is None or isinstance(first, str):
        if any(type(x) is not type(first) or x != first for x in items):
            raise _NotGeneral
        return first
    if isinstance(first, int):
        if any(isinstance(x, bool) or not isinstance(x, int) for x in items):
            raise _NotGeneral
        c0, c1, c2 = items
        if c0 == c1 == c2:
            return first
        a = c1 - c0
        if a == 0 or c2 - c1 != a:
            raise _NotGeneral
        return _Linear(a, c0 - a * batch)
    if isinstance(first, (tuple, list)):
        if any(type(x) is not type(first) or len(x) != len(first) for x in items):
            raise _NotGeneral
        merged = [_merge([x[i] for x in items], batch) for i in range(len(first))]
        return type(first)(merged)
    if isinstance(first, dict):
        if any(not isinstance(x, dict) or x.keys() != first.keys() for x in items):
            raise _NotGeneral
        return {k: _merge([x[k] for x in items], batch) for k in first}
    if isinstance(first, Tensor):
        return _merge_tensor(items, batch)
    if all(_same(x, first) for x in items):
        return first  # floats, slices, dtypes, devices: only as they are
    raise _NotGeneral


def _same(x: Any, y: Any) -> bool:
    try:
        return type(x) is type(y) and bool(x == y)
    except Exception:  # noqa: BLE001 - not comparable: not the same
        return False


def _merge_tensor(items: list, batch: int) -> Any:
    if not all(isinstance(t, Tensor) for t in items):
        raise _NotGeneral
    arrays = [t.detach().numpy() for t in items]
    if all(a.shape == arrays[0].shape and a.dtype == arrays[0].dtype for a in arrays) and all(
        np.array_equal(a, arrays[0], equal_nan=a.dtype.kind == "f") for a in arrays
    ):
        return items[0]
    first = items[0]
    if any(a.dtype != arrays[0].dtype or a.ndim != arrays[0].ndim or a.size == 0 for a in arrays):
        raise _NotGeneral
    value = arrays[0].reshape(-1)[0]
    if any(not np.all(a == value) for a in arrays) or first.requires_grad:
        raise _NotGeneral  # not one value everywhere: it can't be written as full()
    shape = _merge([tuple(a.shape) for a in arrays], batch)
    return _Fill(shape, value.item(), first.dtype)


def _moves(x: Any) -> bool:
    if isinstance(x, (_Linear, _Fill)):
        return True
    if isinstance(x, (tuple, list)):
        return any(_moves(i) for i in x)
    if isinstance(x, dict):
        return any(_moves(i) for i in x.values())
    return False


# --- writing the general graph ----------------------------------------------------------------


def _emit(g: Graph, changed: dict[int, tuple[tuple, dict]]) -> Graph:
    """Put the batch-size nodes first and each changed node's arguments in terms of them."""
    size = g.new_value(0, "batch")
    head = [_node("Tensor.size", (g.inputs[0], 0), size)]
    cache: dict[tuple[int, int], Value] = {}

    def scalar(lin: _Linear) -> Any:
        key = (lin.a, lin.k)
        if key not in cache:
            value = size
            if lin.a != 1:
                value = _append(g, head, "prim.mul", (value, lin.a))
            if lin.k:
                value = _append(g, head, "prim.add", (value, lin.k))
            cache[key] = value
        return cache[key]

    def arg(x: Any) -> Any:
        if isinstance(x, _Linear):
            return scalar(x)
        if isinstance(x, tuple):
            return tuple(arg(i) for i in x)
        if isinstance(x, list):
            return [arg(i) for i in x]
        if isinstance(x, dict):
            return {k: arg(v) for k, v in x.items()}
        return x

    nodes = []
    for node in g.nodes:
        if id(node) in changed:
            args, kwargs = changed[id(node)]
            if node.op == "constant" and isinstance(args[0], _Fill):
                fill = args[0]
                node = Node(
                    "minitorch.full",
                    (arg(fill.shape), fill.value),
                    {"dtype": fill.dtype},
                    node.outputs,
                    target=resolve("minitorch.full"),
                    line=node.line,
                )
            elif any(isinstance(a, _Fill) for a in _flat((args, kwargs))):
                raise _NotGeneral  # a moving tensor constant as an argument of an op
            else:
                node.args, node.kwargs = arg(args), arg(kwargs)
        nodes.append(node)
    g.nodes = head + nodes
    return g


def _flat(x: Any) -> list:
    if isinstance(x, (tuple, list)):
        return [i for item in x for i in _flat(item)]
    if isinstance(x, dict):
        return _flat(list(x.values()))
    return [x]


def _node(op: str, args: tuple, out: Value) -> Node:
    return Node(op, args, outputs=[out], target=resolve(op))


def _append(g: Graph, head: list, op: str, args: tuple) -> Value:
    out = g.new_value(0, "batch")
    head.append(_node(op, args, out))
    return out


# --- checking it --------------------------------------------------------------------------------


def _agrees(retrace: Any, general: Graph, batch: int) -> bool:
    """Does the general graph give the function's own results at a batch size it was not
    made from (three rows more than the example), and at the example's?"""

    attrs = {name: t for name, t in retrace.attrs.values()}
    for extra in (3, 0):
        inputs = longer_inputs(retrace.example, extra) if extra else tuple(retrace.example)
        try:
            with probing(retrace.attrs, general):
                want = retrace.fn(*inputs)
            with probing(retrace.attrs, general):
                got = run_graph(general, inputs, attrs)
        except Exception:  # noqa: BLE001 - either fails: not general
            return False
        want = want if isinstance(want, (tuple, list)) else (want,)
        got = got if isinstance(got, (tuple, list)) else (got,)
        if len(want) != len(got):
            return False
        for w, o in zip(want, got, strict=True):
            if not isinstance(w, Tensor) or not isinstance(o, Tensor) or w.shape != o.shape:
                return False
            if not np.allclose(o.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6):
                return False
    return True
