"""Matplotlib pictures for the lessons: storage walks, broadcasting, timings.

Each helper draws one idea and returns a ``matplotlib.figure.Figure`` (it does not touch
pyplot's global state, so a notebook shows it exactly once when it is a cell's last value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..creation import zeros
from ..shape import broadcast_index, broadcast_shapes, contiguous_strides

_PALETTE = "tab20"
_MAX_CELLS = 24
_MIN_GRID_WIDTH = 3.6


def _as_2d(shape: Sequence[int], strides: Sequence[int]) -> tuple[tuple, tuple]:
    """Pad a 0-d or 1-d layout to 2-d with a leading size-1 dim so every tensor draws as a grid."""
    shape, strides = tuple(shape), tuple(strides)
    if len(shape) > 2:
        raise ValueError(f"viz: can only draw tensors with at most 2 dims, got shape {shape}")
    pad = 2 - len(shape)
    return (1,) * pad + shape, (0,) * pad + strides


def _cell(ax: Any, x: float, y: float, text: str, color: Any, ghost: bool = False, **kw) -> None:
    """One square cell with centred text; ghost cells are faint and dashed."""
    ax.add_patch(
        Rectangle(
            (x, y),
            1,
            1,
            facecolor=color,
            alpha=0.25 if ghost else 0.6,
            edgecolor="0.3",
            linestyle="--" if ghost else "-",
            linewidth=1.0,
        )
    )
    ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", color="0.45" if ghost else "k", **kw)


def _walk_arrows(ax: Any, positions: Sequence[int]) -> None:
    """Arcs above the storage row from each visited position to the next (repeats skipped)."""
    for a, b in zip(positions, positions[1:], strict=False):
        if a != b:
            ax.annotate(
                "",
                xy=(b + 0.5, 1.0),
                xytext=(a + 0.5, 1.0),
                arrowprops=dict(
                    arrowstyle="->",
                    color="0.25",
                    lw=1.1,
                    connectionstyle=f"arc3,rad={-0.45 if b > a else 0.45}",  # always arc above
                ),
            )


def _storage_walk_panel(ax: Any, tensor: Any, name: str, width: float) -> float:
    """Storage as a row of cells on top, the tensor's grid below, and the walk between them.

    The panel is ``width`` cells wide (content centred); returns its height in cells.
    """
    values = tensor.untyped_storage().tolist()
    if len(values) > _MAX_CELLS:
        raise ValueError(f"viz: a storage of {len(values)} elements is too long to draw")
    (rows, cols), (s0, s1) = _as_2d(tensor.shape, tensor.stride())
    offset, cmap, n = tensor.storage_offset(), matplotlib.colormaps[_PALETTE], len(values)
    read = [offset + i * s0 + j * s1 for i in range(rows) for j in range(cols)]
    for k, v in enumerate(values):  # storage row: cells the tensor reads coloured, others grey
        _cell(ax, k, 0, f"{v:g}", cmap(k % 20) if k in read else "0.85", ghost=k not in read)
        ax.text(k + 0.5, -0.25, str(k), ha="center", va="top", fontsize=8, color="0.4")
    _walk_arrows(ax, read)
    x0, top = (n - cols) / 2, -1.0
    for idx, p in enumerate(read):  # the grid: each cell shows its value and storage position
        i, j = divmod(idx, cols)
        _cell(ax, x0 + j, top - i - 1, f"{values[p]:g}", cmap(p % 20), fontsize=11)
        ax.text(x0 + j + 0.94, top - i - 0.94, f"@{p}", ha="right", va="bottom", fontsize=7)
    walk = " \u2192 ".join(str(p) for p in read) if len(read) <= 12 else "..."
    ax.text(n / 2, top - rows - 0.25, f"walk: {walk}", ha="center", va="top", fontsize=9)
    ax.text(-0.2, 0.5, "storage", ha="right", va="center", fontsize=9)
    ax.text(x0 - 0.2, top - rows / 2, name, ha="right", va="center", fontsize=11)
    ax.set_title(
        f"{name}: shape {tuple(tensor.shape)}, stride {tuple(tensor.stride())}, offset {offset}",
        fontsize=10,
    )
    span = max(abs(b - a) for a, b in zip(read, read[1:], strict=False)) if len(read) > 1 else 1
    margin = (width - n - 2) / 2
    ax.set_xlim(-1.8 - margin, n + 0.2 + margin)
    ax.set_ylim(top - rows - 1.0, 1.3 + 0.25 * span)
    ax.set_aspect("equal")
    ax.axis("off")
    return 1.3 + 0.25 * span - (top - rows - 1.0)


def draw_storage_walk(*tensors: Any, names: Sequence[str] | None = None) -> Figure:
    """Draw each small (at most 2-d) tensor over its flat storage, side by side.

    Cells of the grid are coloured like the storage cell they read (``@p`` is the position);
    arrows show the order in which a row-major loop over the tensor visits the storage.
    """
    names = list(names) if names is not None else [f"t{i}" for i in range(len(tensors))]
    widths = [max(len(t.untyped_storage()) + 2, 8) for t in tensors]
    fig = Figure(layout="constrained")
    axes = fig.subplots(1, len(tensors), squeeze=False, width_ratios=widths)[0]
    heights = [
        _storage_walk_panel(ax, t, name, w)
        for ax, t, name, w in zip(axes, tensors, names, widths, strict=True)
    ]
    unit = 0.45  # inches per cell
    fig.set_size_inches(unit * sum(widths) + 0.3, unit * max(heights) + 0.6)
    return fig


def _grid_panel(ax: Any, rows: int, cols: int, cell: Any, title: str, xlabel: str) -> None:
    """A rows x cols grid; ``cell(i, j)`` gives each cell's (text, color, ghost, fontsize)."""
    for i in range(rows):
        for j in range(cols):
            text, color, ghost, size = cell(i, j)
            _cell(ax, j, rows - 1 - i, text, color, ghost=ghost, fontsize=size)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    margin = max(_MIN_GRID_WIDTH - cols, 0) / 2 + 0.1  # room for the labels under small grids
    ax.set_xlim(-margin, cols + margin)
    ax.set_ylim(-0.1, rows + 0.1)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)


def _source_element(index: tuple, out: tuple, shape: tuple) -> int:
    """Which element (row-major number) of an input of ``shape`` the output ``index`` reads."""
    src = broadcast_index(index, out, shape)
    return sum(i * s for i, s in zip(src, contiguous_strides(shape), strict=True))


def draw_broadcast(shape_a: Sequence[int], shape_b: Sequence[int]) -> Figure:
    """Broadcasting ``shape_a`` with ``shape_b`` (at most 2-d): shapes align at the right.

    Each operand is drawn at the result's shape; cells that repeat an element (read through
    a size-1 or missing dim, which ``expand`` gives stride 0) are ghosted.
    """
    a, b = tuple(shape_a), tuple(shape_b)
    out = broadcast_shapes(a, b)
    (rows, cols), _ = _as_2d(out, out)

    def index(i: int, j: int) -> tuple:
        return (i, j)[2 - len(out) :]

    def operand(shape: tuple, name: str, color: str) -> Any:
        padded = (1,) * (len(out) - len(shape)) + shape

        def cell(i: int, j: int) -> tuple:
            k = _source_element(index(i, j), out, shape)
            repeat = any(x > 0 for x, n in zip(index(i, j), padded, strict=True) if n == 1)
            return f"{name}{k}", color, repeat, 10

        return cell

    unit, width = 0.62, max(cols, _MIN_GRID_WIDTH) + 0.2  # inches per cell, cells per panel
    fig = Figure(figsize=(3 * unit * width + 0.4, unit * (rows + 0.2) + 1.2), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, shape, name, color in ((axes[0], a, "a", "tab:blue"), (axes[1], b, "b", "tab:orange")):
        strides = zeros(*shape).expand(*out).stride()  # the package's own expand
        label = f"expand to {out}\nstrides {strides}"
        _grid_panel(ax, rows, cols, operand(shape, name, color), f"{name}: shape {shape}", label)

    def result(i: int, j: int) -> tuple:
        ka, kb = _source_element(index(i, j), out, a), _source_element(index(i, j), out, b)
        return f"a{ka}+b{kb}", "0.85", False, 8

    _grid_panel(axes[2], rows, cols, result, f"a + b: shape {out}", "a new contiguous tensor\n")
    fig.suptitle(f"broadcasting {a} with {b} gives {out}", fontsize=11)
    return fig


def plot_loop_vs_vectorized(
    sizes: Sequence[int], loop_times: Sequence[float], vec_times: Sequence[float]
) -> Figure:
    """Log-log plot of seconds per call for a Python loop and a vectorized op, by input size."""
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    ax.loglog(sizes, loop_times, "o-", label="Python loop over a list")
    ax.loglog(sizes, vec_times, "s-", label="minitorch op (numpy underneath)")
    n, slow, fast = sizes[-1], loop_times[-1], vec_times[-1]  # the gap at the largest size
    ax.annotate("", xy=(n, fast), xytext=(n, slow), arrowprops=dict(arrowstyle="<->", color="0.3"))
    ax.annotate(
        f"{slow / fast:.0f}x faster",
        xy=(n, (slow * fast) ** 0.5),
        xytext=(-8, 0),
        textcoords="offset points",
        ha="right",
        va="center",
    )
    ax.set_xlabel("number of elements")
    ax.set_ylabel("seconds per call")
    ax.set_title("Elementwise add: interpreter loop vs one vectorized call")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig
