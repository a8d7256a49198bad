"""``draw_graph``: a picture of a graph, one box per node, arrows for the values between them.

Boxes are stacked in program order; colour says what kind of op a node is (elementwise,
fused, parameter/constant, anything else), so a before/after pair shows what fusion did.
"""

from __future__ import annotations

from typing import Any

from ..jit.ir import Graph
from ..jit.ops import ELEMENTWISE

COLORS = {
    "fused": "#f4a259",
    "elementwise": "#8ecae6",
    "attr": "#e9edc9",
    "other": "#d9d9d9",
    "input": "#ffffff",
}


def _kind(op: str) -> str:
    if op == "fused":
        return "fused"
    if op in ELEMENTWISE:
        return "elementwise"
    if op in ("get_attr", "constant"):
        return "attr"
    return "other"


def draw_graph(graph: Graph, ax: Any, title: str = "", show_attrs: bool = False) -> None:
    """Draw ``graph`` on a matplotlib Axes (top to bottom, in program order)."""
    rows: list[tuple[str, str, list]] = [("input", f"%{v.name}", []) for v in graph.inputs]
    where: dict = {v: i for i, v in enumerate(graph.inputs)}
    for node in graph.nodes:
        if not show_attrs and node.op in ("get_attr", "constant"):
            continue
        label = node.op
        if node.op == "fused":
            label = "fused: " + ", ".join(op.op for op in node.target.ops)
            if len(label) > 38:
                label = label[:35] + "..."
        sources = [where[v] for v in node.inputs if v in where]
        for v in node.outputs:
            where[v] = len(rows)
        rows.append((_kind(node.op), label, sources))
    n = len(rows)
    for i, (kind, label, sources) in enumerate(rows):
        y = n - i
        ax.text(
            0.5, y, label, ha="center", va="center", fontsize=8, family="monospace",
            bbox={"boxstyle": "round,pad=0.3", "fc": COLORS[kind], "ec": "#555555"},
        )  # fmt: skip
        for s in sources:
            bend = 0.0 if s == i - 1 else 0.35 + 0.05 * (i - s)
            ax.annotate(
                "", xy=(0.5, y + 0.25), xytext=(0.5, n - s - 0.25),
                arrowprops={"arrowstyle": "->", "color": "#777777", "lw": 0.8,
                            "connectionstyle": f"arc3,rad={bend}"},
            )  # fmt: skip
    ax.set_xlim(-0.6, 1.6)
    ax.set_ylim(0.3, n + 0.7)
    ax.axis("off")
    ax.set_title(title or f"{n - len(graph.inputs)} nodes", fontsize=10)
