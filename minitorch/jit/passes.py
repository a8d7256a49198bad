"""Graph passes: each a small function from a graph to a new, equivalent graph.

- ``eliminate_dead_code``: drop pure nodes whose results nobody uses.
- ``fold_constants``: evaluate, ahead of time, pure nodes whose inputs are all constants.
- ``eliminate_common_subexpressions``: compute each distinct ``op(args)`` once.
- ``split_bias``: a ``linear`` whose result goes on into elementwise ops leaves its bias
  add to them, so that fusion takes it into their kernel (one pass less over the result).
- ``fuse_elementwise`` (in ``fusion.py``): merge chains of elementwise ops into one node.

``optimize(graph)`` runs them in that order, as a pipeline. A pass never changes its
input graph: it transforms a copy, so the lesson can print the graph before and after.
"""

from __future__ import annotations

from typing import Any

from ..autograd import no_grad
from ..checks import as_bool
from ..tensor import Tensor
from .fusion import fuse_elementwise, fusible
from .interpreter import run_node
from .ir import (
    Block,
    Graph,
    Node,
    Value,
    _map_values,
    as_graph,
    mutated_values,  # noqa: F401 - re-exported: passes use it
)
from .module import ScriptModule
from .ops import function_for, is_pure

# --- dead code elimination ----------------------------------------------------------------


def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove pure nodes whose outputs are never used (walking backwards from the outputs)."""
    g = as_graph(graph, "eliminate_dead_code").copy()
    _dce_block(g, set())
    return g


def _dce_block(block: Block, needed_outside: set[Value]) -> set[Value]:
    """DCE one block; returns the Values it reads from enclosing blocks."""
    live = set(block.outputs) | needed_outside
    kept: list[Node] = []
    for node in reversed(block.nodes):
        if is_pure(node) and not node.blocks and not any(v in live for v in node.outputs):
            continue
        kept.append(node)
        live.update(node.inputs)
        for sub in node.blocks:
            live.update(_dce_block(sub, set()))
    block.nodes = kept[::-1]
    defined = set(block.inputs) | {v for n in block.nodes for v in n.outputs}
    return live - defined


# --- constant folding ---------------------------------------------------------------------

_NEVER_FOLD = frozenset({"get_attr", "constant", "If", "Loop", "fused"})


def fold_constants(graph: Graph) -> Graph:
    """Evaluate nodes whose inputs are all constants; replace them by ``constant`` nodes.

    A constant tensor that requires grad is never folded through (its gradient must
    still flow), nor is one that an in-place node writes to.
    """
    g = as_graph(graph, "fold_constants").copy()
    mutated = mutated_values(g)
    _fold_block(g, {}, mutated)
    return g


def _foldable_constant(node: Node, mutated: set[Value]) -> bool:
    value = node.args[0]
    return node.outputs[0] not in mutated and not (
        isinstance(value, Tensor) and value.requires_grad
    )


def _fold_block(block: Block, known: dict[Value, Any], mutated: set[Value]) -> None:
    new_nodes: list[Node] = []
    for node in block.nodes:
        if node.op == "constant" and _foldable_constant(node, mutated):
            known[node.outputs[0]] = node.args[0]
        elif (
            node.op not in _NEVER_FOLD
            and is_pure(node)
            and node.inputs
            and all(v in known for v in node.inputs)
            and not any(v in mutated for v in node.outputs)
        ):
            with no_grad():
                result = run_node(node, known, {})
            results = result if len(node.outputs) > 1 else (result,)
            for out, value in zip(node.outputs, results, strict=True):
                known[out] = value
                new_nodes.append(Node("constant", (value,), outputs=[out], line=node.line))
            continue
        for sub in node.blocks:
            _fold_block(sub, known, mutated)
        new_nodes.append(node)
    block.nodes = new_nodes


# --- common subexpression elimination -----------------------------------------------------


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Give each distinct pure ``op(args, kwargs)`` one node: later copies reuse its outputs."""
    g = as_graph(graph, "eliminate_common_subexpressions").copy()
    _cse_block(g, {}, {}, mutated_values(g))
    return g


def _key(node: Node, substitute: dict[Value, Value]) -> Any:
    args = _hashable(_map_values(node.args, lambda v: substitute.get(v, v)))
    kwargs = tuple(sorted((k, _hashable((v,))) for k, v in node.kwargs.items()))
    return (node.op, id(node.target), args, kwargs)


def _hashable(items: tuple) -> tuple:
    out = []
    for item in items:
        if isinstance(item, Value):
            out.append(("value", id(item)))
        elif isinstance(item, (tuple, list)):
            out.append(("seq", _hashable(tuple(item))))
        elif isinstance(item, (int, float, bool, str, type(None))):
            out.append((type(item).__name__, item))  # 1, 1.0 and True stay distinct
        else:
            out.append(("object", id(item)))  # tensors, arrays, slices: by identity
    return tuple(out)


def _cse_block(
    block: Block, seen: dict, substitute: dict[Value, Value], mutated: set[Value]
) -> None:
    seen = dict(seen)  # a sub-block sees its enclosing block's nodes, not the other way
    kept: list[Node] = []
    for node in block.nodes:
        node.args = _map_values(node.args, lambda v: substitute.get(v, v))
        node.kwargs = {
            k: _map_values((v,), lambda v: substitute.get(v, v))[0] for k, v in node.kwargs.items()
        }
        for sub in node.blocks:
            _cse_block(sub, seen, substitute, mutated)
        if is_pure(node) and not node.blocks and not any(v in mutated for v in node.inputs):
            key = _key(node, substitute)
            earlier = seen.get(key)
            if earlier is not None:
                for old, new in zip(node.outputs, earlier.outputs, strict=True):
                    substitute[old] = new
                continue
            seen[key] = node
        kept.append(node)
    block.nodes = kept
    block.outputs = [substitute.get(v, v) for v in block.outputs]


# --- bias adds, for fusion to take ----------------------------------------------------------


def split_bias(graph: Graph) -> Graph:
    """``linear(x, W, b)`` becomes ``add(linear(x, W, None), b)`` where the result's users
    are all ops the fuser takes: the add joins their fused kernel (the same sum, computed
    in the kernel's pass over the product instead of one pass of its own)."""
    g = as_graph(graph, "split_bias").copy()
    users = g.users()
    mutated = mutated_values(g)
    nodes = []
    for node in g.nodes:
        out = node.outputs[0] if len(node.outputs) == 1 else None
        bias = node.args[2] if node.op == "linear" and len(node.args) == 3 else None
        if (
            out is None
            or not isinstance(bias, Value)
            or node.kwargs
            or out in mutated
            or out in g.outputs
            or bias.dtype != out.dtype
            or not users.get(out)
            or not all(fusible(u, mutated) for u in users[out])
        ):
            nodes.append(node)
            continue
        product = Value(g.fresh_name(f"{out.name}.mm"), out.type, out.dtype, out.shape)
        nodes.append(
            Node(
                "linear",
                node.args[:2] + (None,),
                outputs=[product],
                target=node.target,
                line=node.line,
            )
        )
        nodes.append(
            Node("add", (product, bias), outputs=[out], target=function_for("add"), line=node.line)
        )
    g.nodes = nodes
    return g


# --- the pipeline -------------------------------------------------------------------------


def optimize(graph: Any, fuse: bool = True) -> Any:
    """Fold constants, remove common subexpressions and dead code, then fuse elementwise
    chains. Takes a Graph (returns a Graph) or a ScriptModule (returns a ScriptModule on
    the same parameters)."""
    as_bool(fuse, "optimize", "fuse")
    if isinstance(graph, ScriptModule):
        return graph.with_graph(optimize(graph.graph, fuse))
    as_graph(graph, "optimize")
    g = fold_constants(graph)
    g = eliminate_common_subexpressions(g)
    g = eliminate_dead_code(g)
    if fuse:
        g = eliminate_dead_code(fuse_elementwise(split_bias(g)))
    return g
