"""``ScriptModule.code``: a graph printed as Python-like source, as TorchScript's ``.code``
(PyTorch's ``python_print``).

Each node becomes one assignment; get_attr reads ``self.<name>``; an If becomes an
``if``/``else`` whose branches assign the If's outputs; a Loop becomes a ``for``/``while``.
"""

from __future__ import annotations

from typing import Any

from .ir import Block, Graph, Node, Value, format_arg

_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "matmul": "@",
    "prim.add": "+", "prim.sub": "-", "prim.mul": "*", "prim.div": "/",
    "prim.floordiv": "//", "prim.mod": "%", "prim.pow": "**", "prim.eq": "==",
    "prim.ne": "!=", "prim.lt": "<", "prim.le": "<=", "prim.gt": ">", "prim.ge": ">=",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
}  # fmt: skip


def name(v: Value) -> str:
    """A Python identifier for a Value: ``x``, ``v3``, ``self_fc_weight``."""
    text = v.name.replace(".", "_")
    return f"v{text}" if not text or text[0].isdigit() else text


def _arg(a: Any) -> str:
    if isinstance(a, Value):
        return name(a)
    if isinstance(a, tuple):
        inner = ", ".join(_arg(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_arg(x) for x in a) + "]"
    return format_arg(a)


def _expr(node: Node) -> str:
    if node.op == "get_attr":
        return f"self.{node.args[0]}"
    if node.op == "constant":
        return format_arg(node.args[0])
    if node.op in _INFIX and len(node.args) == 2 and not node.kwargs:
        a, b = node.args
        return f"{_arg(a)} {_INFIX[node.op]} {_arg(b)}"
    if node.op == "fused":
        inputs = ", ".join(_arg(a) for a in node.args)
        return f"fused_{node.target.name}({inputs})  # {node.target.summary()}"
    args = [_arg(a) for a in node.args] + [f"{k}={_arg(v)}" for k, v in node.kwargs.items()]
    return f"{node.op}({', '.join(args)})"


def _lines(block: Block, indent: str) -> list[str]:
    out: list[str] = []
    for node in block.nodes:
        targets = ", ".join(name(v) for v in node.outputs)
        if node.op == "If":
            out.append(f"{indent}if {_arg(node.args[0])}:")
            for i, b in enumerate(node.blocks):
                if i == 1:
                    out.append(f"{indent}else:")
                body = _lines(b, indent + "    ")
                if targets:
                    body.append(f"{indent}    {targets} = {', '.join(name(v) for v in b.outputs)}")
                out.extend(body or [f"{indent}    pass"])
        elif node.op == "Loop":
            trips, cond, *init = node.args
            (body,) = node.blocks
            index, *carried = body.inputs
            for c, i in zip(carried, init, strict=True):
                out.append(f"{indent}{name(c)} = {_arg(i)}")
            header = (
                f"for {name(index)} in range({_arg(trips)}):"
                if trips is not None
                else (f"while {_arg(cond)}:")
            )
            out.append(indent + header)
            lines = _lines(body, indent + "    ")
            next_cond, *new = body.outputs
            for c, n in zip(carried, new, strict=True):
                lines.append(f"{indent}    {name(c)} = {name(n)}")
            if trips is None:
                lines.append(f"{indent}    {_arg(cond)} = {name(next_cond)}")
            out.extend(lines or [f"{indent}    pass"])
            if targets:
                out.append(f"{indent}{targets} = {', '.join(name(c) for c in carried)}")
        else:
            lhs = f"{targets} = " if targets else ""
            out.append(f"{indent}{lhs}{_expr(node)}")
    return out


def python_code(graph: Graph) -> str:
    params = ", ".join(["self"] + [name(v) for v in graph.inputs])
    lines = [f"def forward({params}):"] + _lines(graph, "    ")
    rets = ", ".join(name(v) for v in graph.outputs)
    if graph.tuple_output and len(graph.outputs) == 1:
        rets += ","
    lines.append(f"    return {rets}")
    return "\n".join(lines) + "\n"
