"""Loading a notebook: run its code cells, one by one, into a fresh namespace."""

from __future__ import annotations

import builtins
import json
import linecache
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from minitorch.grading.errors import NotebookError
from minitorch.grading.namespace import CellFailure, Namespace
from minitorch.grading.timelimit import TimeLimitExceeded, time_limit
from minitorch.grading.tracebacks import describe_exception, line_in
from minitorch.manifest import ROOT

#: Seconds one cell may run while a notebook loads.
CELL_TIMEOUT = 10.0

_loading_depth = 0


def is_loading() -> bool:
    """True while :func:`load_notebook` runs cells (``check(...)`` then does nothing)."""
    return _loading_depth > 0


@contextmanager
def _loading() -> Iterator[None]:
    global _loading_depth
    _loading_depth += 1
    try:
        yield
    finally:
        _loading_depth -= 1


def code_cells(path: str | Path) -> list[tuple[int, str]]:
    """The code cells of a notebook as ``(cell number, source)``; cells count from 1.

    Raises :class:`NotebookError` for a missing file or one that is not a notebook.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotebookError(f"no notebook {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError(f"{path} is not a Jupyter notebook: {exc}") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookError(f"{path} is not a Jupyter notebook: it has no list of cells")
    found = []
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found.append((number, "".join(source) if isinstance(source, list) else str(source)))
    return found


def without_magics(source: str) -> str:
    """The cell's Python code: IPython magics (``%``) and shell lines (``!``) become ``pass``.

    A cell magic (``%%time``, ``%%writefile``, ...) makes the whole cell non-Python: "".
    Replacing lines (not deleting them) keeps the line numbers of errors right.
    """
    if source.lstrip().startswith("%%"):
        return ""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            line = line[: len(line) - len(stripped)] + "pass"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _display(*objects: Any, **kwargs: Any) -> None:
    """Stands in for IPython's ``display`` (a builtin in Jupyter) while grading."""


def run_cell(
    number: int, source: str, namespace: dict[str, Any], filename: str, timeout: float | None
) -> CellFailure | None:
    """Run one cell's code in ``namespace``; say how it failed, or None when it ran."""
    code_text = without_magics(source)
    linecache.cache[filename] = (len(code_text), None, code_text.splitlines(True), filename)
    try:
        code = compile(code_text, filename, "exec")
    except (SyntaxError, ValueError) as exc:
        line = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        problem = f"raised {describe_exception(exc)}{line}"
        return CellFailure(number, problem, type(exc).__name__, source)
    try:
        with time_limit(timeout):
            exec(code, namespace)
    except TimeLimitExceeded as exc:
        problem = f"timed out after {exc.seconds:g} s"
        return CellFailure(number, problem, "TimeLimitExceeded", source)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: keep loading
        line = line_in(exc.__traceback__, filename)
        where = f" (line {line})" if line else ""
        problem = f"raised {describe_exception(exc)}{where}"
        return CellFailure(number, problem, type(exc).__name__, source)
    return None


def load_notebook(
    path: str | Path,
    cell_timeout: float | None = CELL_TIMEOUT,
    skip_cells: Mapping[int, str] | None = None,
    on_cell: Callable[[int], None] | None = None,
) -> Namespace:
    """Run a notebook's code cells, each on its own, and return what they defined.

    A cell that raises (or times out after ``cell_timeout`` seconds) is recorded and
    the next cells still run. ``skip_cells`` maps cell numbers not to run to the reason
    (the grader uses it for a cell that killed the worker); ``on_cell(number)`` is
    called before each code cell runs.
    """
    path = Path(path)
    cells = code_cells(path)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    namespace["display"] = _display
    failures: list[CellFailure] = []
    filenames: dict[str, int] = {}
    skip_cells = skip_cells or {}
    with _loading():
        for number, source in cells:
            if number in skip_cells:
                failures.append(CellFailure(number, skip_cells[number], "", source))
                continue
            if on_cell is not None:
                on_cell(number)
            filename = f"<{path.name} cell {number}>"
            filenames[filename] = number
            failure = run_cell(number, source, namespace, filename, cell_timeout)
            if failure is not None:
                failures.append(failure)
    return Namespace(namespace, failures, filenames, origin=path.name)
