"""``replace_pattern(gm, pattern, replacement)``: find each place in ``gm``'s graph that
computes what ``pattern`` computes, and put ``replacement``'s nodes there (torch.fx's
``subgraph_rewriter``).

Both functions are traced; a match is found from each node that could be the pattern's
output, walking the pattern backwards: same op and target, arguments matched in turn
(a pattern input matches any value, consistently), and no value inside the match read
from outside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .graph import Graph
from .node import Node, map_arg
from .tracer import symbolic_trace


class Match(NamedTuple):
    """Where a pattern matched: the node standing for its output, and each pattern node's
    counterpart."""

    anchor: Node
    nodes_map: dict[Node, Node]


def _match(p: Any, n: Any, mapping: dict[Node, Any]) -> bool:
    if isinstance(p, Node):
        if p in mapping:
            return mapping[p] is n if isinstance(n, Node) else mapping[p] == n
        if p.op == "placeholder":
            mapping[p] = n
            return True
        if not isinstance(n, Node) or (p.op, p.target) != (n.op, n.target):
            return False
        if len(p.args) != len(n.args) or set(p.kwargs) != set(n.kwargs):
            return False
        mapping[p] = n
        pairs = list(zip(p.args, n.args, strict=True)) + [
            (p.kwargs[k], n.kwargs[k]) for k in p.kwargs
        ]
        return all(_match(a, b, mapping) for a, b in pairs)
    if isinstance(p, (tuple, list)):
        return (
            isinstance(n, (tuple, list))
            and len(p) == len(n)
            and all(_match(a, b, mapping) for a, b in zip(p, n, strict=True))
        )
    return not isinstance(n, Node) and p == n


def _pattern(fn: Callable | Graph) -> Graph:
    return fn if isinstance(fn, Graph) else symbolic_trace(fn).graph


def _copy_in(graph: Graph, r_graph: Graph, inputs: list[Any]) -> Any:
    """Copy ``r_graph``'s nodes into ``graph`` (at its insertion point), its inputs bound to
    ``inputs``; what its output returns, in the copies."""
    placeholders = [n for n in r_graph.nodes if n.op == "placeholder"]
    env: dict[Node, Any] = dict(zip(placeholders, inputs, strict=True))
    for node in r_graph.nodes:
        if node.op == "output":
            return map_arg(node.args[0], env.__getitem__)
        if node.op != "placeholder":
            env[node] = graph.node_copy(node, env.__getitem__)
    return None


def replace_pattern(
    gm: Any, pattern: Callable | Graph, replacement: Callable | Graph
) -> list[Match]:
    """Replace every non-overlapping match of ``pattern`` in ``gm`` with ``replacement``
    (functions or Graphs of the same inputs); recompiles ``gm``; returns the matches."""
    p_graph, r_graph = _pattern(pattern), _pattern(replacement)
    p_out = next(n for n in p_graph.nodes if n.op == "output").args[0]
    p_inputs = [n for n in p_graph.nodes if n.op == "placeholder"]
    graph: Graph = gm.graph
    matches: list[Match] = []
    taken: set[Node] = set()
    for anchor in list(graph.nodes):
        mapping: dict[Node, Any] = {}
        if anchor in taken or anchor.op in ("placeholder", "output"):
            continue
        if not _match(p_out, anchor, mapping):
            continue
        inner = [mapping[p] for p in mapping if p.op != "placeholder"]
        if any(n in taken for n in inner) or any(
            user not in inner for n in inner if n is not anchor for user in n.users
        ):
            continue
        taken.update(inner)
        matches.append(Match(anchor, dict(mapping)))
        order = {n: i for i, n in enumerate(graph.nodes)}
        first_user = min(anchor.users, key=order.__getitem__, default=anchor.next)
        with graph.inserting_before(first_user):  # (where torch.fx puts it)
            result = _copy_in(graph, r_graph, [mapping.get(p) for p in p_inputs])
        anchor.replace_all_uses_with(result)
        for node in reversed(list(graph.nodes)):
            if node in inner and not node.users:
                graph.erase_node(node)
    gm.recompile()
    return matches
