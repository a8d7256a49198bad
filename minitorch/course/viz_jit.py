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
    # hidden parameters and constants leave fewer rows; a long graph gets smaller boxes
    fontsize = 8 if n <= 20 else 7 if n <= 32 else 6
    # arrows end at the boxes' edges: half a box's height, in rows (the axes' height is
    # known now; a later tight_layout changes it a little)
    rows_per_point = (n + 0.4) * ax.figure.dpi / 72 / ax.get_window_extent().height
    gap = min(0.45, (0.9 * fontsize + 1) * rows_per_point)
    for i, (kind, label, sources) in enumerate(rows):
        y = n - i
        ax.text(
            0.5, y, label, ha="center", va="center", fontsize=fontsize, family="monospace",
            bbox={"boxstyle": "round,pad=0.3", "fc": COLORS[kind], "ec": "#555555"},
        )  # fmt: skip
        for s in sources:
            ax.add_patch(_arrow(n - s - gap, y + gap, i - s, side=1 if s % 2 else -1))
    ax.set_xlim(0.5 - _HALF_WIDTH, 0.5 + _HALF_WIDTH)
    ax.set_ylim(0.3, n + 0.7)
    ax.axis("off")
    ax.set_title(title or f"{n - len(graph.inputs)} nodes", fontsize=10)


_HALF_WIDTH = 1.1  # the axes span 0.5 +- this, in data units
_MAX_BEND = 0.9  # the farthest an arrow strays from the centre line: inside the axes


def _arrow(y_from: float, y_to: float, span: int, side: int) -> Any:
    """An arrow on the centre line from ``y_from`` down to ``y_to``: straight to the next
    row, else a curve to one side whose bulge grows with the rows it skips but is capped,
    in data units, so that it stays inside the axes however long the graph is."""
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path

    start, end = (0.5, y_from), (0.5, y_to)
    if span == 1:
        path = Path([start, end], [Path.MOVETO, Path.LINETO])
    else:
        bulge = side * min(0.25 + 0.08 * (span - 2), _MAX_BEND)
        # a cubic Bezier with both control points 4/3 * bulge to the side strays by bulge;
        # leaving and arriving a little steeply, it stays clear of the neighbouring boxes
        steep = min(0.3 * span, 1.5)
        x = 0.5 + bulge * 4 / 3
        path = Path(
            [start, (x, start[1] - steep), (x, end[1] + steep), end],
            [Path.MOVETO, Path.CURVE4, Path.CURVE4, Path.CURVE4],
        )
    return FancyArrowPatch(
        path=path, arrowstyle="->", mutation_scale=8, color="#777777", lw=0.8, zorder=2
    )


# --- counting what a compiled call costs, and reading a guard's line ----------------------
def graph_cost(graph: Graph) -> tuple[int, float]:
    """(nodes that run, KiB they read and write) for one run of ``graph``, counted from the
    dtypes and shapes its Values recorded: ``constant`` and ``get_attr`` nodes run nothing,
    every other node reads its inputs and writes its outputs once (a fused node keeps its
    intermediates in buffers of its own)."""
    import numpy as np

    runs, moved = 0, 0
    for node in graph.nodes:
        if node.op in ("constant", "get_attr"):
            continue
        runs += 1
        for v in [*node.inputs, *node.outputs]:
            if v.shape is not None and v.dtype is not None:
                moved += int(np.prod(v.shape)) * np.dtype(v.dtype).itemsize
    return runs, moved / 2**10


def count_applies(fn: Any, *args: Any) -> int:
    """How many times ``fn(*args)`` goes through ``Function.apply``."""
    from ..function import register_apply_hook

    calls = []
    with register_apply_hook(lambda cls, a, k, out: calls.append(cls)):
        fn(*args)
    return len(calls)


GUARD_WORDS = ("grad mode", "not a tensor", "ndim", "size mismatch at index", "dtype",
               "requires_grad", "value")  # fmt: skip


def guard_line(line: str) -> tuple:
    """A recompile reason as ``(what failed, argument, expected, actual)``, read the way
    05.7's tests read it: the first of :data:`GUARD_WORDS` it holds (with the index of a size),
    the argument's quoted name, and the values after ``expected`` and ``actual``. The
    package's line for a Python value (``n == 3 failed: it is now 3.0``) reads the same."""
    import re

    line = line.split("triggered by the guard failure: ", 1)[-1]
    old = re.fullmatch(r"(\w+) == (.+) failed: it is now (.+)", line)
    if old:
        return ("value", old.group(1), old.group(2), old.group(3))
    line = line.replace("is no longer a tensor", "is not a tensor")
    kind = next((w for w in GUARD_WORDS if w in line), None)
    if kind == "size mismatch at index":
        found = re.search(r"size mismatch at index (\d+)", line)
        kind = found.group(0) if found else kind
    name = re.search(r"'(\w+)'", line)

    def after(word: str) -> str | None:
        found = re.search(rf"\b{word}[\s:=]{{1,3}}([\w.'\-]+?)(?=[\s,;)]|$|\.\s|\.$)", line)
        return found.group(1) if found else None

    return (kind, name.group(1) if name else None, after("expected"), after("actual"))
