"""The backward-graph picture: a layered layout computed by minitorch, drawn by matplotlib."""

from __future__ import annotations

import io

import matplotlib
import pytest

import minitorch
from minitorch.course.viz_graph import draw_graph, graph_layout

matplotlib.use("Agg")


def small_model():
    w = minitorch.randn(3, 2, requires_grad=True)
    b = minitorch.zeros(2, requires_grad=True)
    x = minitorch.randn(4, 3)
    loss = ((x @ w + b).relu() * (x @ w)).sum()
    return loss, w, b


def test_layout_has_ops_leaves_and_the_output():
    loss, w, b = small_model()
    boxes, edges = graph_layout(loss, params={"w": w, "b": b})
    kinds = [box.kind for box in boxes]
    assert kinds[0] == "output" and boxes[0].layer == 0
    labels = [box.label for box in boxes]
    assert "SumBackward0\n()" in labels
    assert "MmBackward0\n(4, 2)" in labels
    assert "w\n(3, 2)" in labels and "b\n(2,)" in labels
    assert kinds.count("leaf") == 2  # w is one leaf, though used twice
    # Every arrow points down a layer (the longest-path layering), from the output.
    for a, c in edges:
        assert boxes[c].layer > boxes[a].layer
    # Boxes on the same layer never overlap.
    seen = {(box.layer, box.x) for box in boxes}
    assert len(seen) == len(boxes)


def test_draw_graph_returns_a_figure_that_renders():
    loss, w, b = small_model()
    fig = draw_graph(loss, params={"w": w, "b": b})
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("ReluBackward" in t for t in texts)


def test_draw_graph_into_given_axes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    loss, _, _ = small_model()
    assert draw_graph(loss, ax=ax, title="mine") is fig
    assert ax.get_title() == "mine"


def test_a_deep_graph_lays_out_without_recursion():
    x = minitorch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    boxes, _ = graph_layout(y)
    assert len(boxes) == 3002 and max(b.layer for b in boxes) == 3001


def test_a_tensor_without_history_has_no_graph():
    with pytest.raises(ValueError, match="does not require grad"):
        graph_layout(minitorch.ones(2))
