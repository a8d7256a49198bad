"""The interpreter: run a graph, node by node, through ``Function.apply``.

Because every node runs the same ``Function.apply`` eager code does, a graph run is
differentiable: autograd records the backward graph as it goes, exactly as in eager mode.
The loop is the whole idea::

    env = dict(zip(graph.inputs, inputs))        # Value -> what it holds now
    for node in graph.nodes:
        args = [env[a] if isinstance(a, Value) else a for a in node.args]
        results = run(node, args)                 # Function.apply, a library call, ...
        env.update(zip(node.outputs, results))
    return [env[v] for v in graph.outputs]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..tensor import Tensor
from .ir import Block, Graph, Node, Value, _map_values


class InterpreterError(RuntimeError):
    """A node failed while the graph ran; the message names the node and its source line."""


def run_graph(graph: Graph, inputs: Sequence[Any], attrs: Mapping[str, Any] | None = None) -> Any:
    """Run ``graph`` on ``inputs``; ``attrs`` maps ``get_attr`` names to tensors.

    Returns the single output, or a tuple when the graph returns a tuple.
    """
    if len(inputs) != len(graph.inputs):
        names = ", ".join(v.name for v in graph.inputs)
        raise TypeError(
            f"the graph takes {len(graph.inputs)} inputs ({names}), but {len(inputs)} were given"
        )
    env: dict[Value, Any] = dict(zip(graph.inputs, inputs, strict=True))
    outputs = run_block(graph, env, attrs or {})
    return tuple(outputs) if graph.tuple_output or len(outputs) != 1 else outputs[0]


def run_block(block: Block, env: dict[Value, Any], attrs: Mapping[str, Any]) -> list[Any]:
    """Run a block's nodes in order, writing each result into ``env``; its outputs' values.

    A value is dropped from ``env`` after its last use, as eager Python drops a temporary:
    otherwise every intermediate of the graph stays alive until the end, and fresh memory
    for each op costs more than the op.
    """
    frees = _frees(block)
    for node, dead in zip(block.nodes, frees, strict=True):
        results = run_node(node, env, attrs)
        outs = node.outputs
        if len(outs) == 1:
            env[outs[0]] = results
        elif outs:
            env.update(zip(outs, results, strict=True))
        for v in dead:
            env.pop(v, None)
    return [env[v] for v in block.outputs]


def _frees(block: Block) -> list[list[Value]]:
    """For each node, the values of this block whose last use it is (cached per block)."""
    key = tuple(map(id, block.nodes)) + tuple(map(id, block.outputs))
    cached = getattr(block, "_free_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    defined = set(block.inputs) | {v for n in block.nodes for v in n.outputs}
    keep = set(block.outputs)
    last: dict[Value, int] = {}
    for i, node in enumerate(block.nodes):
        for v in node.outputs:
            last.setdefault(v, i)  # never used: dropped right away
        for v in _reads(node):
            if v in defined:
                last[v] = i
    for v in block.inputs:
        last.setdefault(v, 0)
    frees: list[list[Value]] = [[] for _ in block.nodes]
    for v, i in last.items():
        if v not in keep and frees:
            frees[i].append(v)
    block._free_cache = (key, frees)
    return frees


def _reads(node: Node) -> list[Value]:
    """What a node reads, including what its sub-blocks read from outside them."""
    reads = list(node.inputs)
    for b in node.blocks:
        inner = set(b.inputs) | {v for n in b.walk() for v in n.outputs}
        reads += [v for n in b.walk() for v in n.inputs if v not in inner]
        reads += [v for v in b.outputs if v not in inner]
    return reads


def run_node(node: Node, env: dict[Value, Any], attrs: Mapping[str, Any]) -> Any:
    """One node's result (a tuple for a node with several outputs)."""
    op = node.op
    if op == "constant":
        return node.args[0]
    if op == "get_attr":
        return attrs[node.args[0]]
    args = _map_values(node.args, env.__getitem__)
    kwargs = {k: _map_values((v,), env.__getitem__)[0] for k, v in node.kwargs.items()}
    try:
        if op == "If":
            return _run_if(node, args[0], env, attrs)
        if op == "Loop":
            return _run_loop(node, args, env, attrs)
        target = node.target  # (a fused node's is its FusedKernel, which is callable)
        if isinstance(target, type):  # a Function
            return target.apply(*args, **kwargs)
        return target(*args, **kwargs)
    except InterpreterError:
        raise
    except Exception as err:
        if getattr(err, "raised_by_script", False):  # a raise of the program (in an If, too)
            raise
        where = f" (from {node.line})" if node.line else ""
        raise InterpreterError(f"node {node.op}{where} failed: {err}") from err


def _truth(x: Any) -> bool:
    return bool(x.item()) if isinstance(x, Tensor) else bool(x)


def _run_if(node: Node, cond: Any, env: dict, attrs: Mapping[str, Any]) -> Any:
    block = node.blocks[0] if _truth(cond) else node.blocks[1]
    outs = run_block(block, env, attrs)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _run_loop(node: Node, args: tuple, env: dict, attrs: Mapping[str, Any]) -> Any:
    """``Loop(max_trips, cond, *carried)``: run the body while ``i < max_trips and cond``;
    the body gets ``(i, *carried)`` and returns ``(cond, *carried)``."""
    max_trips, cond, *carried = args
    (body,) = node.blocks
    i = 0
    while (max_trips is None or i < max_trips) and _truth(cond):
        env.update(zip(body.inputs, (i, *carried), strict=True))
        cond, *carried = run_block(body, env, attrs)
        i += 1
    return carried[0] if len(carried) == 1 else tuple(carried)
