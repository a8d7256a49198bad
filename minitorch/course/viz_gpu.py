"""Pictures for chapter 07: a grid over a matrix, coalescing, a reduction tree, a roofline,
and the memory traffic fusion saves. Each function draws one figure and returns it."""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle


def plot_grid_over_matrix(rows: int, cols: int, block: tuple[int, int]) -> Any:
    """Each block of ``block`` threads (x, y) coloured over a ``rows x cols`` matrix;
    threads outside the matrix hatched."""
    bx, by = block
    gx, gy = math.ceil(cols / bx), math.ceil(rows / by)
    fig, ax = plt.subplots(figsize=(7, 5.5))
    colors = plt.get_cmap("tab20")
    for j in range(gy):
        for i in range(gx):
            color = colors((j * gx + i) % 20)
            for y in range(by):
                for x in range(bx):
                    r, c = j * by + y, i * bx + x
                    inside = r < rows and c < cols
                    ax.add_patch(Rectangle((c, r), 1, 1, facecolor=color if inside else "white",
                                           edgecolor="grey", lw=0.4, hatch=None if inside else "//",
                                           alpha=0.9 if inside else 0.6))  # fmt: skip
            ax.add_patch(Rectangle((i * bx, j * by), bx, by, fill=False, lw=2, edgecolor="black"))
            ax.text(i * bx + bx / 2, j * by + by / 2, f"block\n({i}, {j})", ha="center",
                    va="center", fontsize=8)  # fmt: skip
    ax.add_patch(Rectangle((0, 0), cols, rows, fill=False, lw=3, edgecolor="crimson"))
    ax.set_xlim(0, gx * bx)
    ax.set_ylim(gy * by, 0)
    ax.set_aspect("equal")
    ax.set_xlabel("column = blockIdx.x * blockDim.x + threadIdx.x")
    ax.set_ylabel("row = blockIdx.y * blockDim.y + threadIdx.y")
    ax.set_title(
        f"a {gx} x {gy} grid of {bx} x {by} blocks over a {rows} x {cols} matrix (red); "
        "hatched threads must do nothing",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def plot_coalescing(row_length: int = 64, warp: int = 32, sector_bytes: int = 32) -> Any:
    """Which 32-byte sectors the 32 threads of a warp touch: reading along a row vs down a
    column of a row-major float32 matrix."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 3.6))
    floats_per_sector = sector_bytes // 4
    cases = [
        ("thread t reads a[0, t] (along a row)", [t for t in range(warp)]),
        ("thread t reads a[t, 0] (down a column)", [t * row_length for t in range(warp)]),
    ]
    for ax, (title, addresses) in zip(axes, cases, strict=True):
        span = max(addresses) + 1
        sectors = sorted({a // floats_per_sector for a in addresses})
        for s in sectors:
            ax.add_patch(Rectangle((s * floats_per_sector, 0), floats_per_sector, 1,
                                   facecolor="#fdd49e", edgecolor="#d7301f"))  # fmt: skip
        ax.scatter(np.array(addresses) + 0.5, np.full(warp, 0.5), s=8, color="black", zorder=3)
        used = warp * 4
        moved = len(sectors) * sector_bytes
        ax.set_title(f"{title}: {len(sectors)} sectors, {moved} bytes moved for {used} used "
                     f"({used / moved:.0%} useful)", fontsize=9)  # fmt: skip
        ax.set_xlim(0, max(span, warp * floats_per_sector))
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.set_xlabel("float index in memory")
    fig.tight_layout()
    return fig


def plot_reduction_tree(width: int = 8) -> Any:
    """The tree sum of ``width`` cells: at each step thread t adds cell t + stride."""
    steps = int(math.log2(width))
    fig, ax = plt.subplots(figsize=(8, 1.1 * (steps + 1) + 0.6))
    values = list(range(1, width + 1))
    levels = [values[:]]
    stride = width // 2
    while stride:
        values = [values[t] + values[t + stride] if t < stride else values[t] for t in range(width)]
        levels.append(values[:])
        stride //= 2
    for level, row in enumerate(levels):
        active = width >> level
        for t, v in enumerate(row):
            live = t < active
            face, edge = ("#9ecae1", "black") if live else ("#eeeeee", "#cccccc")
            ax.add_patch(Rectangle((t, -level), 0.9, 0.6, facecolor=face, edgecolor=edge))
            ax.text(t + 0.45, -level + 0.3, str(v), ha="center", va="center",
                    color="black" if live else "#aaaaaa")  # fmt: skip
        if level < steps:
            stride = width >> (level + 1)
            for t in range(stride):
                for src in (t, t + stride):
                    arrow = {"arrowstyle": "->", "color": "#3182bd", "lw": 1}
                    ax.annotate("", xy=(t + 0.45, -level - 0.4), xytext=(src + 0.45, -level),
                                arrowprops=arrow)  # fmt: skip
            ax.text(width + 0.2, -level - 0.2, f"stride {stride}: threads 0..{stride - 1} add, "
                    "then syncthreads()", fontsize=8, va="center")  # fmt: skip
    ax.set_xlim(-0.2, width + 5)
    ax.set_ylim(-steps - 0.2, 0.8)
    ax.axis("off")
    ax.set_title(f"a reduction tree over {width} shared-memory cells: {steps} steps", fontsize=10)
    fig.tight_layout()
    return fig


def plot_roofline(intensity: dict[str, float], peak_tflops: float, bandwidth_tbs: float) -> Any:
    """The roofline min(peak, intensity x bandwidth), with kernels placed by intensity."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    x = np.logspace(-2, 3, 200)
    roof = np.minimum(peak_tflops, x * bandwidth_tbs)
    ax.loglog(x, roof, color="black", lw=2, label="roofline (data-sheet peaks)")
    ridge = peak_tflops / bandwidth_tbs
    ax.axvline(ridge, color="grey", ls=":", lw=1)
    ax.text(ridge * 1.1, peak_tflops / 30, f"ridge: {ridge:.0f} flop/byte", fontsize=8)
    markers = iter("osD^v<>p")
    for name, value in intensity.items():
        attainable = min(peak_tflops, value * bandwidth_tbs)
        ax.scatter([value], [attainable], marker=next(markers), s=60, zorder=3, label=name)
    ax.set_xlabel("arithmetic intensity (flop per byte of global memory traffic)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title(
        f"roofline, {peak_tflops:g} TFLOP/s fp32 and {bandwidth_tbs:g} TB/s (an H200's peaks); "
        "intensities from the simulator's counts",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_fusion_traffic(traffic: dict[str, list[tuple[str, int, int]]], elements: int) -> Any:
    """Global reads and writes, in whole-array passes, of each launch: unfused vs fused.
    Reads are blue, writes orange and hatched; each launch is framed and named above it."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    labels = list(traffic)
    styles = {"reads": ("#6baed6", None), "writes": ("#fd8d3c", "//")}
    for row, label in enumerate(labels):
        left = 0.0
        for kernel, reads, writes in traffic[label]:
            start = left
            for what, amount in (("reads", reads), ("writes", writes)):
                color, hatch = styles[what]
                width = amount / elements
                ax.barh(row, width, left=left, height=0.6, color=color, edgecolor="black",
                        hatch=hatch, lw=0.6)  # fmt: skip
                left += width
            ax.barh(
                row, left - start, left=start, height=0.6, fill=False, edgecolor="black", lw=1.8
            )
            ax.text((start + left) / 2, row - 0.34, kernel, ha="center", va="bottom", fontsize=8)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.75)  # top to bottom, with room for the launch names
    ax.set_xlabel(f"global memory traffic, in passes over {elements} elements")
    handles = [
        Patch(facecolor=color, edgecolor="black", hatch=hatch, label=f"{what} (global memory)")
        for what, (color, hatch) in styles.items()
    ]
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    ax.set_title("exp(x * y) + 1: what fusion saves (simulator counts)", fontsize=10)
    fig.tight_layout()
    return fig


# -- printed reports for the exercise notebook ------------------------------------------------


def elide_index_arithmetic(source: str) -> str:
    """A fused kernel's source with the lines exercises 07.1 and 07.2 ask for folded into
    comments: the thread's global index, and where its element of each input lies."""
    lines = source.splitlines()
    index = "blockIdx.x * blockDim.x + threadIdx.x"
    for k, line in enumerate(lines):
        if line.strip().startswith("i = ") and index in line:  # (Python)
            indent = line[: len(line) - len(line.lstrip())]
            lines[k] = f"{indent}i = ...  # this thread's global index (07.1)"
        elif index in line:  # (CUDA C++)
            lines[k] = line.replace(index, "/* this thread's global index (07.1) */")
    start = next((k for k, line in enumerate(lines) if line.strip() == "if i < n:"), None)
    end = next((k for k, line in enumerate(lines) if line.strip().startswith("x0 =")), None)
    if start is None or end is None or end <= start + 1:
        return "\n".join(lines)
    indent = lines[end][: len(lines[end]) - len(lines[end].lstrip())]
    folded = (
        f"{indent}# ... {end - start - 1} lines: where thread i's element of each input lies (07.2)"
    )
    return "\n".join([*lines[: start + 1], folded, *lines[end:]])


def show_fused_run(lines: list[str], steps: list, shapes: list[tuple[int, ...]]) -> None:
    """Build the fused kernel from ``lines`` (07.6), print its source (the index arithmetic
    folded away), run it on random float64 inputs of ``shapes`` in the simulator, and
    compare with the steps evaluated op by op (as the grader does)."""
    from minitorch.cuda import fusion_codegen

    lines = [str(line) for line in lines]
    print(elide_index_arithmetic(fusion_codegen.kernel_source(lines, len(shapes))))
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, size=s) for s in shapes]
    kernel = fusion_codegen.compile_lines(lines, len(arrays))
    shape = np.broadcast_shapes(*shapes)
    got = fusion_codegen.launch_fused(kernel, arrays, shape, np.float64, block=32)
    expected = fusion_codegen.reference(steps, arrays)
    worst = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)))
    data = {k: v for k, v in kernel.stats.array_traffic.items() if k.startswith(("in", "out"))}
    traffic = ", ".join(f"{k}: {r} read, {w} written" for k, (r, w) in data.items())
    print(f"on inputs of shapes {shapes}: largest relative difference from the graph {worst:.1e}")
    print(f"memory traffic of the data ({got.size} outputs): {traffic}")


def _launch_rows(launches: list) -> list[tuple[str, int, int, int, int]]:
    """(kernel, launches, most barriers per block, global reads, most by one thread)."""
    rows: dict[str, list[int]] = {}
    for s in launches:
        row = rows.setdefault(s.kernel, [0, 0, 0, 0])
        row[0] += 1
        row[1] = max(row[1], s.barriers)
        row[2] += s.global_reads
        row[3] = max(row[3], s.max_thread_global_reads)
    return [(name, *values) for name, values in sorted(rows.items())]  # type: ignore[misc]


def print_launches(package: list, yours: list) -> None:
    """The simulator's counts per kernel for two runs of one workload: the package's
    kernels, then yours (``simulator.recording()`` lists)."""
    header = (
        f"  {'kernel':22} {'launches':>8} {'barriers':>9} {'global reads':>13} {'by 1 thread':>12}"
    )
    for title, launches in (("the package's kernels", package), ("your kernels", yours)):
        print(f"{title}: (barriers per block, the most; reads by the busiest thread)")
        print(header)
        for name, count, barriers, reads, most in _launch_rows(launches):
            print(f"  {name:22} {count:8} {barriers:9} {reads:13} {most:12}")
