"""Helpers for the lesson notebooks.

``show_source(obj)`` prints the source of a package function or class straight from the
installed module, so the code a lesson shows is always the code the package runs.

``progress(iterable)`` is tqdm's text bar shown as one updating output, so a saved
notebook keeps the finished bar (a widget bar shows ``0%`` until its kernel runs).

``normalize_metadata(nb)`` gives a notebook the metadata JupyterLab writes when it opens
it, so that opening a committed notebook changes nothing; ``make notebooks`` runs it
after executing (``python -m minitorch.course.notebook FILE...``) and the exercise generator on
what it writes.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import io
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.std import tqdm as _text_tqdm

if TYPE_CHECKING:  # (nbformat is imported where it is used: its import takes seconds, and
    import nbformat  # every lesson imports this module for show_source)


class SourceCode:
    """Source text that Jupyter renders as a highlighted ``python`` block and a terminal as text."""

    def __init__(self, text: str, title: str = "") -> None:
        self.text = text
        self.title = title

    def _repr_markdown_(self) -> str:
        header = f"`{self.title}`\n\n" if self.title else ""
        return f"{header}```python\n{self.text}\n```"

    def __repr__(self) -> str:
        header = f"# {self.title}\n" if self.title else ""
        return header + self.text


def qualified_name(obj: Any) -> str:
    """``minitorch.shape.view_strides`` for a function, class or method."""
    obj = inspect.unwrap(getattr(obj, "__func__", obj))
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return f"{module}.{name}" if module else name


def get_source(obj: Any) -> SourceCode:
    """The source of ``obj`` (function, class, method or property), dedented, with its name."""
    target = obj.fget if isinstance(obj, property) else obj
    text = textwrap.dedent(inspect.getsource(target)).rstrip()
    return SourceCode(text, qualified_name(target))


def show_source(obj: Any) -> None:
    """Display the source of ``obj``: highlighted in Jupyter, plain text anywhere else."""
    source = get_source(obj)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        print(repr(source))
        return
    if get_ipython() is None:
        print(repr(source))
    else:
        display(source)


# ---------------------------------------------------------------------------------------
# A progress bar that a saved notebook shows finished

#: tqdm's text bar without the elapsed time and rate: what it shows does not depend on
#: the machine, and the bar a notebook saves says only how far the loop got.
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}{postfix}"


class _BarText:
    """One state of the bar; Jupyter shows it as plain text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class progress(_text_tqdm):  # lower case, like tqdm and trange
    """tqdm's text bar; in a Jupyter kernel, one output that each refresh replaces.

    The output is an ordinary display (``text/plain``) updated in place, not a widget: the
    notebook saves the bar's last state, so a lesson read before it is run shows the loop
    finished. Outside a kernel it is tqdm's terminal bar. Takes tqdm's arguments.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._handle = None
        self._in_kernel = _in_kernel()
        kwargs.setdefault("bar_format", BAR_FORMAT)
        if self._in_kernel:
            kwargs.setdefault("file", io.StringIO())  # the display shows the bar instead
            kwargs.setdefault("ascii", False)  # a string buffer would make tqdm fall back to #
        super().__init__(*args, **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if not self._in_kernel:
            return super().display(msg, pos)
        from IPython.display import display

        text = _BarText(self.__str__() if msg is None else msg)
        if self._handle is None:
            self._handle = display(text, display_id=True)
        else:
            self._handle.update(text)
        return True


# ---------------------------------------------------------------------------------------
# Notebook metadata as JupyterLab writes it

#: The kernelspec JupyterLab records for ipykernel's ``python3`` kernel.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: The format version JupyterLab 4 saves (4.5: every cell has an id).
NBFORMAT_MINOR = 5
#: Cell metadata that records when a cell last ran (nbclient writes it); JupyterLab does not
#: by default, and it would change on every run.
_TIMING_METADATA = ("execution", "ExecuteTime")
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def installed_language_info() -> dict:
    """``language_info`` as the installed ipykernel reports it (JupyterLab saves this)."""
    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(dict(IPythonKernel.language_info))


def _shows_widgets(nb: nbformat.NotebookNode) -> bool:
    return any(
        _WIDGET_VIEW in output.get("data", {})
        for cell in nb.cells
        for output in cell.get("outputs", [])
    )


def normalize_metadata(
    nb: nbformat.NotebookNode, language_info: Mapping[str, Any] | None = None
) -> nbformat.NotebookNode:
    """Give ``nb`` (in place; also returned) the metadata JupyterLab writes on opening it.

    The kernelspec and ``language_info`` JupyterLab records from the running kernel (by
    default the installed ipykernel's ``language_info``; pass the one to keep, e.g. the
    solution's when generating an exercise), format 4.5, no per-cell run times, and no
    saved widget state that no output uses. Other metadata is kept.
    """
    import nbformat

    info = installed_language_info() if language_info is None else copy.deepcopy(language_info)
    nb.metadata["kernelspec"] = nbformat.from_dict(KERNELSPEC)
    nb.metadata["language_info"] = nbformat.from_dict(dict(info))
    if "widgets" in nb.metadata and not _shows_widgets(nb):
        del nb.metadata["widgets"]
    nb.nbformat, nb.nbformat_minor = 4, NBFORMAT_MINOR
    for cell in nb.cells:
        for key in _TIMING_METADATA:
            cell.metadata.pop(key, None)
    return nb


def normalize_file(path: str | Path, language_info: Mapping[str, Any] | None = None) -> bool:
    """Normalize the notebook file's metadata in place; True if the file changed."""
    import nbformat

    path = Path(path)
    before = path.read_text(encoding="utf-8")
    nb = normalize_metadata(nbformat.reads(before, as_version=4), language_info)
    after = nbformat.writes(nb, version=4)
    after = after if after.endswith("\n") else after + "\n"  # as nbformat.write and Jupyter
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.course.notebook",
        description="Give notebooks the metadata JupyterLab writes, so opening them changes "
        "nothing (kernelspec, language_info, nbformat 4.5, no run times).",
    )
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    missing = [p for p in args.notebooks if not p.is_file()]
    if missing:
        print(f"error: no notebook {missing[0]}", file=sys.stderr)
        return 2
    info = installed_language_info()
    for path in args.notebooks:
        if normalize_file(path, info):
            print(f"normalized {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
