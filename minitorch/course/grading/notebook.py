"""Loading a notebook: run its code cells, one by one, into a fresh namespace."""

from __future__ import annotations

import builtins
import json
import linecache
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from minitorch.course.grading.delegation import watching_new_threads
from minitorch.course.grading.errors import NotebookError
from minitorch.course.grading.namespace import CellFailure, Namespace
from minitorch.course.grading.timelimit import TimeLimitExceeded, time_limit
from minitorch.course.grading.tracebacks import describe_exception, line_in
from minitorch.course.manifest import ROOT

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


#: The biggest notebook file the grader reads.
MAX_NOTEBOOK_BYTES = 64 * 2**20


def read_notebook(path: str | Path) -> dict[str, Any]:
    """The notebook's JSON, checked to be an nbformat 4 notebook whose code cells hold text.

    Raises :class:`NotebookError` with one line naming the file and the problem.
    """
    path = Path(path)
    name = str(path)
    try:
        if path.is_dir():
            raise NotebookError(f"{name} is a folder, not a notebook")
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO, /dev/zero: would block or never end
            raise NotebookError(f"{name} is not a regular file")
        with open(path, "rb") as f:
            raw = f.read(MAX_NOTEBOOK_BYTES + 1)
        if len(raw) > MAX_NOTEBOOK_BYTES:
            size = path.stat().st_size
            raise NotebookError(f"{name} is too big for a notebook ({size // 2**20} MB)")
    except FileNotFoundError:
        raise NotebookError(f"no notebook {name}") from None
    except OSError as exc:
        raise NotebookError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"{name} is not a Jupyter notebook: it is not UTF-8 text "
            f"(byte 0x{raw[exc.start]:02x} at position {exc.start})"
        ) from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = f"line {exc.lineno}, column {exc.colno}: {exc.msg}" if hasattr(exc, "msg") else ""
        raise NotebookError(
            f"{name} is not a Jupyter notebook: it is not valid JSON ({detail})"
        ) from None
    if not isinstance(data, dict):
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not a JSON object")
    version = data.get("nbformat")
    if version != 4:
        if isinstance(version, int) and not isinstance(version, bool) and version < 4:
            raise NotebookError(
                f"{name} is an nbformat {version} notebook: open and save it in JupyterLab "
                "(or run `jupyter nbconvert --to notebook`) to convert it to nbformat 4"
            )
        raise NotebookError(f"{name} is not a Jupyter notebook: it has no nbformat 4 version")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f"{name} is not a Jupyter notebook: it has no list of cells")
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"{name}: cell {number} is not a notebook cell")
        source = cell.get("source", "")
        if not (
            isinstance(source, str)
            or (isinstance(source, list) and all(isinstance(line, str) for line in source))
        ):
            raise NotebookError(
                f"{name}: the source of cell {number} is not text (a string or a list of strings)"
            )
    return data


#: The heading of the section that closes every exercise notebook: it runs the framework on
#: the learner's pieces (``minitorch.mine``) and is no exercise, so loading stops there.
AT_WORK = "Your framework at work"


def opens_at_work(cell: Mapping[str, Any]) -> bool:
    """Whether ``cell`` is the markdown heading that opens the "Your framework at work"
    section."""
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    return cell["cell_type"] == "markdown" and source.lstrip("# ").startswith(AT_WORK)


def code_cells(path: str | Path) -> list[tuple[int, str]]:
    """The code cells of a notebook as ``(cell number, source)``; cells count from 1. The
    cells from the "Your framework at work" heading on are left out (see ``AT_WORK``).

    Raises :class:`NotebookError` for a missing file or one that is not a notebook.
    """
    cells = read_notebook(path)["cells"]
    found = []
    for number, cell in enumerate(cells, start=1):
        if opens_at_work(cell):
            break
        if cell["cell_type"] == "code":
            source = cell.get("source", "")
            found.append((number, "".join(source) if isinstance(source, list) else source))
    return found


def notebook_chapter(path: str | Path) -> str | None:
    """The chapter id the generator wrote into the notebook's metadata, if any."""
    metadata = read_notebook(path).get("metadata")
    info = metadata.get("minitorch") if isinstance(metadata, dict) else None
    chapter = info.get("chapter") if isinstance(info, dict) else None
    return chapter if isinstance(chapter, str) else None


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


def load_cells(
    cells: list[tuple[int, str]],
    origin: str = "the notebook",
    cell_timeout: float | None = CELL_TIMEOUT,
    skip_cells: Mapping[int, str] | None = None,
    on_cell: Callable[[int], None] | None = None,
) -> Namespace:
    """Run code cells ``(number, source)``, each on its own; return what they defined.

    A cell that raises (or times out after ``cell_timeout`` seconds) is recorded and
    the next cells still run. ``skip_cells`` maps cell numbers not to run to the reason
    (the grader uses it for a cell that killed the worker); ``on_cell(number)`` is
    called before each code cell runs.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    namespace["display"] = _display
    failures: list[CellFailure] = []
    filenames: dict[str, int] = {}
    skip_cells = skip_cells or {}
    with _loading(), watching_new_threads():
        for number, source in cells:
            if number in skip_cells:
                failures.append(CellFailure(number, skip_cells[number], "", source))
                continue
            if on_cell is not None:
                on_cell(number)
            filename = f"<{origin} cell {number}>"
            filenames[filename] = number
            failure = run_cell(number, source, namespace, filename, cell_timeout)
            if failure is not None:
                failures.append(failure)
    return Namespace(namespace, failures, filenames, origin=origin)


def load_notebook(
    path: str | Path,
    cell_timeout: float | None = CELL_TIMEOUT,
    skip_cells: Mapping[int, str] | None = None,
    on_cell: Callable[[int], None] | None = None,
) -> Namespace:
    """Run a notebook's code cells in this process (see :func:`load_cells`)."""
    path = Path(path)
    return load_cells(code_cells(path), path.name, cell_timeout, skip_cells, on_cell)
