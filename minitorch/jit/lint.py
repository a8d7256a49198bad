"""A graph linter: is this graph well formed?

It checks what every pass and the interpreter rely on:

- every Value is defined exactly once (a block input or one node's output);
- every use comes after its definition, in the same block or an enclosing one (so the
  graph has no cycles: a node can't read what it, or a later node, makes);
- each output Value points back at the node that defines it;
- control-flow nodes have the blocks they need, with matching inputs and outputs;
- every op is one the interpreter knows (optional: ``check_ops``).
"""

from __future__ import annotations

from .ir import Block, Graph, Node, Value


class GraphLintError(ValueError):
    """A malformed graph; the message lists every problem found."""


def problems(graph: Graph, check_ops: bool = True) -> list[str]:
    """Every well-formedness problem of ``graph`` (empty when it is fine)."""
    from .ir import as_graph
    from .ops import is_known

    as_graph(graph, "lint")
    found: list[str] = []
    defined: set[Value] = set()

    def define(v: Value, where: str) -> None:
        if v in defined:
            found.append(f"%{v.name} is defined more than once ({where})")
        defined.add(v)

    def visit(block: Block, visible: set[Value], where: str) -> None:
        scope = set(visible)
        for v in block.inputs:
            define(v, f"input of {where}")
            scope.add(v)
        for node in block.nodes:
            for v in node.inputs:
                if v not in scope:
                    later = " (it is defined later: a cycle)" if v in _all_outputs(block) else ""
                    found.append(f"{_name(node)} uses %{v.name}, which is not defined{later}")
            if check_ops and not is_known(node.op):
                found.append(f"{_name(node)}: unknown op {node.op!r}")
            _check_control_flow(node, found)
            for i, sub in enumerate(node.blocks):
                visit(sub, scope, f"block{i} of {_name(node)}")
            for v in node.outputs:
                define(v, f"output of {_name(node)}")
                if v.node is not node:
                    found.append(f"%{v.name} is an output of {_name(node)} but points elsewhere")
                scope.add(v)
        for v in block.outputs:
            if v not in scope:
                found.append(f"{where} returns %{v.name}, which is not defined")

    visit(graph, set(), "the graph")
    return found


def lint(graph: Graph, check_ops: bool = True) -> Graph:
    """Raise ``GraphLintError`` listing the problems of a malformed graph; else return it."""
    found = problems(graph, check_ops)
    if found:
        raise GraphLintError("malformed graph:\n  - " + "\n  - ".join(found))
    return graph


def _all_outputs(block: Block) -> set[Value]:
    return {v for n in block.nodes for v in n.outputs}


def _name(node: Node) -> str:
    outs = ", ".join(f"%{v.name}" for v in node.outputs)
    return f"node {node.op}" + (f" -> {outs}" if outs else "")


def _check_control_flow(node: Node, found: list[str]) -> None:
    n_out = len(node.outputs)
    if node.op == "If":
        if len(node.blocks) != 2:
            found.append(f"{_name(node)} needs 2 blocks (then, else), has {len(node.blocks)}")
        for i, b in enumerate(node.blocks):
            if len(b.outputs) != n_out:
                found.append(
                    f"block{i} of {_name(node)} returns {len(b.outputs)} values, not {n_out}"
                )
    elif node.op == "Loop":
        if len(node.blocks) != 1:
            found.append(f"{_name(node)} needs 1 block, has {len(node.blocks)}")
            return
        (body,) = node.blocks
        carried = len(node.args) - 2
        if len(body.inputs) != 1 + carried or len(body.outputs) != 1 + carried or n_out != carried:
            found.append(
                f"{_name(node)}: a loop with {carried} carried values needs a body with "
                f"{1 + carried} inputs and outputs and {carried} node outputs"
            )
    elif node.blocks:
        found.append(f"{_name(node)} has blocks, but only If and Loop may")
