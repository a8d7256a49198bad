"""Matplotlib pictures for chapter 03: training curves and grids of digit images.

Like :mod:`minitorch.course.viz`, each helper returns a ``matplotlib.figure.Figure`` without
touching pyplot's global state, so a notebook shows it exactly once when it is a cell's
last value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

_BAD = "#cf222e"  # the red of wrong predictions and blown-up runs
_GOOD = "#1a7f37"


def _first_nonfinite(values: Sequence[float]) -> int | None:
    for i, v in enumerate(values):
        if not math.isfinite(v):
            return i
    return None


def _plot_series(
    ax: Any, x: Sequence[float], y: Sequence[float], label: str, top: float | None = None
) -> None:
    """Plot a curve; if it turns NaN or infinite, stop there and mark the spot with a red x.

    With ``top`` (the y axis limit) the mark stays inside the axes even when the curve
    shot far above it.
    """
    y = [float(v) for v in y]
    stop = _first_nonfinite(y)
    end = len(y) if stop is None else stop
    ax.plot(x[:end], y[:end], label=label, linewidth=1.4)
    if stop is not None and stop > 0:
        mark = y[stop - 1] if top is None else min(y[stop - 1], top)
        ax.plot(
            x[stop - 1], mark, "x", color=_BAD, markersize=10, markeredgewidth=2.5, clip_on=False
        )
        ax.annotate(
            f"{y[stop]} from step {x[stop]} on",
            xy=(x[stop - 1], mark),
            xytext=(9, -3),
            textcoords="offset points",
            color=_BAD,
            fontsize=9,
            va="top",
        )


def compare_runs(
    runs: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    log: Sequence[str] = (),
    ylim: Mapping[str, tuple[float, float]] | None = None,
    xlabel: str = "step",
    title: str | None = None,
) -> Figure:
    """One panel per metric, one line per run: ``runs[run_name][metric] = values per step``.

    Metrics named in ``log`` get a logarithmic y axis, and ``ylim`` fixes the y range of
    some metrics (a run that blows up would otherwise squash the others flat). A run whose
    values turn NaN or infinite is drawn up to that point and marked with a red x.
    """
    metrics: list[str] = []
    for series in runs.values():
        metrics += [m for m in series if m not in metrics]
    fig = Figure(figsize=(5.2 * len(metrics), 3.6), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, metric in zip(axes, metrics, strict=True):
        limits = (ylim or {}).get(metric)
        for name, series in runs.items():
            if metric in series:
                values = series[metric]
                steps = list(range(1, len(values) + 1))
                _plot_series(ax, steps, values, name, None if limits is None else limits[1])
        if metric in log:
            ax.set_yscale("log")
        if limits is not None:
            ax.set_ylim(*limits)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(metric)
        ax.set_title(metric)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=9)
    if title:
        fig.suptitle(title, fontsize=12)
    return fig


def plot_history(histories: Mapping[str, Mapping[str, Sequence[float]]]) -> Figure:
    """Training loss and test accuracy per epoch, side by side, for one or more models.

    Each history holds ``"train_loss"`` and ``"test_acc"`` (one value per epoch); the
    best accuracy of each model is marked.
    """
    fig = Figure(figsize=(10.5, 3.8), layout="constrained")
    loss_ax, acc_ax = fig.subplots(1, 2)
    for name, h in histories.items():
        epochs = list(range(1, len(h["train_loss"]) + 1))
        (line,) = loss_ax.plot(epochs, h["train_loss"], "o-", markersize=3, label=name)
        acc = [100 * a for a in h["test_acc"]]
        acc_ax.plot(epochs, acc, "o-", markersize=3, color=line.get_color(), label=name)
        acc_ax.annotate(
            f"{acc[-1]:.1f}%",
            xy=(epochs[-1], acc[-1]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=9,
            color=line.get_color(),
        )
    loss_ax.set_yscale("log")
    loss_ax.set_title("training loss (mean over each epoch)")
    loss_ax.set_xlabel("epoch")
    loss_ax.set_ylabel("cross-entropy")
    acc_ax.axhline(97, color="0.5", linestyle="--", linewidth=1)
    acc_ax.text(1, 97.15, "97%", color="0.4", fontsize=8, va="bottom")
    acc_ax.set_title("test accuracy")
    acc_ax.set_xlabel("epoch")
    acc_ax.set_ylabel("% of the 360 test digits")
    low = min(min(h["test_acc"]) for h in histories.values()) * 100
    acc_ax.set_ylim(max(low - 2, 0), 100.5)
    acc_ax.set_xlim(0.5, max(len(h["test_acc"]) for h in histories.values()) + 2)
    for ax in (loss_ax, acc_ax):
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=9, loc="center right" if ax is loss_ax else "lower right")
    return fig


def _as_images(images: Any) -> np.ndarray:
    array = np.asarray(images.detach().cpu() if hasattr(images, "detach") else images)
    if array.ndim == 4:  # (N, 1, H, W) -> (N, H, W)
        array = array[:, 0]
    return array


def show_images(
    images: Any,
    labels: Sequence[int],
    predictions: Sequence[int] | None = None,
    *,
    ncols: int = 10,
    title: str | None = None,
) -> Figure:
    """A grid of small grey images, each titled with its label.

    With ``predictions`` each title reads ``"true 3 / pred 8"``, red where they disagree.
    """
    array = _as_images(images)
    labels = [int(v) for v in labels]
    n = len(array)
    if n == 0:
        raise ValueError("show_images: no images to show")
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    cell = 1.05 if predictions is None else 1.25  # inches per image, with its title
    head = 0.5 if title else 0.1  # inches above the grid, for the figure title
    height = cell * nrows + head
    fig = Figure(figsize=(cell * ncols, height))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if k >= n:
            continue
        ax.imshow(array[k], cmap="gray_r", vmin=0.0, vmax=1.0, interpolation="nearest")
        if predictions is None:
            ax.set_title(str(labels[k]), fontsize=10)
        else:
            pred = int(predictions[k])
            colour = _GOOD if pred == labels[k] else _BAD
            ax.set_title(f"true {labels[k]} / pred {pred}", fontsize=8, color=colour)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=1 - head / height, hspace=0.35)
    return fig
