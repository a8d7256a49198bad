"""A picture of a tensor's backward graph, drawn with matplotlib alone.

The layout is computed here: each node goes on the layer of its *longest* path from the
output (so every arrow points down), and the nodes of a layer are ordered by the mean
position of the nodes that feed them (fewer crossings). No graphviz needed.

    fig = minitorch.autograd.draw_graph(loss, params={"w": w, "b": b})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..autograd.graph import AccumulateGrad, leaf_accumulator
from ..tensor import Tensor


@dataclass
class GraphNode:
    """One box of the picture: the output tensor, an op's grad_fn, or a leaf."""

    label: str
    kind: str  # "output", "op" or "leaf"
    layer: int
    x: float = 0.0
    node: Any = field(default=None, repr=False)


def graph_layout(tensor: Any, params: dict | None = None) -> tuple[list[GraphNode], list]:
    """Boxes (with layer and x position) and arrows ``(from_index, to_index)``, pointing
    the way gradients flow: from the output down to the leaves."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"draw_graph: expected a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise ValueError(
            "draw_graph: this tensor does not require grad, so no backward graph was recorded"
        )
    names = {id(t): name for name, t in (params or {}).items()}
    root = tensor.grad_fn if tensor.grad_fn is not None else leaf_accumulator(tensor)

    # Every node and edge reachable from the root (an explicit stack: no recursion).
    order, children, seen, stack = [], {}, {root}, [root]
    while stack:
        fn = stack.pop()
        order.append(fn)
        children[fn] = [c for c, _ in fn.next_functions if c is not None]
        for c in children[fn]:
            if c not in seen:
                seen.add(c)
                stack.append(c)

    # Longest-path layers, via a topological order (Kahn's algorithm).
    indegree = {fn: 0 for fn in order}
    for fn in order:
        for c in children[fn]:
            indegree[c] += 1
    layer = {root: 1}
    ready = [root]
    while ready:
        fn = ready.pop()
        for c in children[fn]:
            layer[c] = max(layer.get(c, 0), layer[fn] + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)

    boxes = [GraphNode(f"output\n{_shape(tensor.shape)}", "output", 0)]
    index = {}
    for fn in order:
        index[fn] = len(boxes)
        boxes.append(GraphNode(_label(fn, names), _kind(fn), layer[fn], node=fn))
    edges = [(0, index[root])]
    for fn in order:
        for c in dict.fromkeys(children[fn]):
            edges.append((index[fn], index[c]))
    _place(boxes, edges)
    return boxes, edges


def _kind(fn: Any) -> str:
    return "leaf" if isinstance(fn, AccumulateGrad) else "op"


def _label(fn: Any, names: dict) -> str:
    if isinstance(fn, AccumulateGrad):
        t = fn.variable
        return f"{names.get(id(t), 'leaf')}\n{_shape(t.shape)}"
    shapes = [_shape(shape) for shape, dtype in fn._output_meta if dtype.kind == "f"]
    return f"{fn.name()}\n{' '.join(shapes)}"


def _shape(shape: tuple) -> str:
    return str(tuple(int(n) for n in shape))


def _place(boxes: list[GraphNode], edges: list) -> None:
    """x positions: each layer ordered by the mean x of its parents, then centred."""
    parents: dict[int, list[int]] = {}
    for a, b in edges:
        parents.setdefault(b, []).append(a)
    layers: dict[int, list[int]] = {}
    for i, box in enumerate(boxes):
        layers.setdefault(box.layer, []).append(i)
    for depth in sorted(layers):
        members = layers[depth]
        if depth > 0:
            members.sort(key=lambda i: sum(boxes[p].x for p in parents[i]) / len(parents[i]))
        for rank, i in enumerate(members):
            boxes[i].x = rank - (len(members) - 1) / 2


_STYLE = {
    "output": {"facecolor": "#fde2c4", "edgecolor": "#c66b00"},
    "op": {"facecolor": "#dbe8f7", "edgecolor": "#2f5f98"},
    "leaf": {"facecolor": "#d9f0d3", "edgecolor": "#2d7a2d"},
}


def draw_graph(
    tensor: Any, params: dict | None = None, ax: Any = None, title: str | None = None
) -> Any:
    """Draw ``tensor``'s backward graph; returns the matplotlib Figure.

    Blue boxes are ops (their ``grad_fn`` name and output shape), green boxes are leaves
    that require grad (named by ``params={"w": w}`` where given), the orange box is the
    tensor itself. Arrows point the way the gradient flows in backward.
    """
    from matplotlib.patches import Patch  # matplotlib loads only when a graph is drawn

    boxes, edges = graph_layout(tensor, params)
    depth = max(b.layer for b in boxes) + 1
    width = max(sum(1 for b in boxes if b.layer == d) for d in range(depth))
    if ax is None:
        import matplotlib.pyplot as plt

        size = (max(4.0, 2.3 * width), max(2.5, 1.15 * depth + 0.6))
        fig, ax = plt.subplots(figsize=size)
        plt.close(fig)  # a notebook shows the returned figure once, not twice
    texts = []
    for box in boxes:
        style = _STYLE[box.kind]
        texts.append(
            ax.text(
                box.x,
                -box.layer,
                box.label,
                ha="center",
                va="center",
                fontsize=8.5,
                family="monospace",
                bbox={"boxstyle": "round,pad=0.45", "linewidth": 1.2, **style},
                zorder=3,
            )
        )
    for a, b in edges:
        ax.annotate(
            "",
            xy=(0.5, 1.0),
            xycoords=texts[b],
            xytext=(0.5, 0.0),
            textcoords=texts[a],
            arrowprops={"arrowstyle": "-|>", "color": "0.35", "linewidth": 1.0},
            zorder=2,
        )
    half = (width - 1) / 2 + 0.8
    ax.set_xlim(-half, half)
    ax.set_ylim(-(depth - 1) - 0.6, 0.6)
    ax.axis("off")
    ax.legend(
        handles=[
            Patch(label="op (grad_fn)", **_STYLE["op"]),
            Patch(label="leaf (requires_grad)", **_STYLE["leaf"]),
            Patch(label="the tensor", **_STYLE["output"]),
        ],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=8,
        frameon=False,
    )
    ax.set_title(title or "backward graph (gradients flow down)", fontsize=10)
    return ax.figure
