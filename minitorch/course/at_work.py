""" "Your framework at work", the section that closes every exercise notebook: a workload run
on the package's pieces and on the learner's (:func:`minitorch.mine.compare`), and a
picture of both."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from minitorch import mine

_PACKAGE_STYLE = dict(color="#b0b7bf", linewidth=5.0, solid_capstyle="round")
_YOURS_STYLE = dict(color="#0969da", linewidth=1.6)


def run(
    workload: Callable[[], Any],
    namespace: Mapping[str, Any],
    picture: Callable[[Any, Any], Figure] | None = None,
    tol: float = 1e-4,
) -> Any:
    """``mine.compare(workload, namespace)``: print whose pieces ran and the verdict, and show
    ``picture(package_result, your_result)``. When the results differ, the picture is shown
    first and then :class:`minitorch.mine.Mismatch` names the exercise(s) to look at."""
    try:
        result = mine.compare(workload, dict(namespace), tol)
    except mine.Mismatch as err:
        if picture is not None and err.yours is not None:  # (None: your run raised)
            show_figure(picture(err.package, err.yours))
        raise
    print(result.mine)
    yours = result.mine.yours()
    if yours:
        print(
            f"\nOn your {len(yours)} piece(s) the framework computed what the package's computes."
        )
    else:
        print("\nNo piece of yours is finished yet: it ran once, on the package's pieces.")
    if picture is not None:
        show_figure(picture(result.package, result.yours))
    return result


def show_figure(fig: Figure) -> None:
    """Show the figure as a PNG in the notebook (it is shown before an error is raised, so it
    can't wait to be the cell's last value)."""
    try:
        from IPython.display import Image, display
    except ImportError:  # (a plain script: nothing to show it in)
        return
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96)
    display(Image(buffer.getvalue()))


def plot_against_package(
    package: Mapping[str, Sequence[float]],
    yours: Mapping[str, Sequence[float]],
    *,
    xlabel: str = "step",
    title: str | None = None,
    log: Sequence[str] = (),
) -> Figure:
    """One panel per series: the package's run as a wide grey band, yours as a thin blue line
    on top (right pieces: the line stays inside the band)."""
    names = list(package)
    fig = Figure(figsize=(min(5.0 * len(names), 11.0), 3.4), layout="constrained")
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for ax, name in zip(axes, names, strict=True):
        steps = range(1, len(package[name]) + 1)
        ax.plot(steps, list(package[name]), label="the package's pieces", **_PACKAGE_STYLE)
        ax.plot(
            range(1, len(yours[name]) + 1), list(yours[name]), label="your pieces", **_YOURS_STYLE
        )
        if name in log:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(name)
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=9)
    if title:
        fig.suptitle(title, fontsize=12)
    return fig
