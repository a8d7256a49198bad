"""Generate the student notebooks in exercises/ from the solution notebooks in solutions/.

In code cells, each region from a line ``### BEGIN SOLUTION`` to a line ``### END
SOLUTION`` becomes one line, ``raise NotImplementedError("<hint>")``, at the BEGIN
marker's indentation; the hint is any text after ``### BEGIN SOLUTION`` on its line. A
chapter whose hints are given on request (``minitorch/course/hints/NN_slug.md``, shown by
``hint("NN.k")``) has bare marker lines, and the message names the exercise and ``hint()``.
Outputs and execution counts are cleared. Every cell that had a region gets the
``raises-exception`` tag (nbval then accepts the NotImplementedError, and JupyterLab's
"Run All" goes on past it): the raise is at the top level, or the cell may call the
function it defines.

    python -m minitorch.course.generate           # write exercises/NN_*.ipynb
    python -m minitorch.course.generate --check   # exit 1 if any of them is stale or missing
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import nbformat

from minitorch.course import hints, manifest
from minitorch.course.notebook import normalize_metadata

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
DEFAULT_HINT = "write your solution here"
RAISES_TAG = "raises-exception"

_BEGIN_LINE = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION(?:[ \t]+(?P<hint>.*?))?[ \t]*$")
_END_LINE = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")
_MARKER_WORDS = re.compile(r"(BEGIN|END)\s+SOLUTION")
_HEADING = re.compile(r"^## (\d\d\.\d+)\b", re.M)
_KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")
_DROPPED_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")


class SolutionMarkerError(ValueError):
    """The solution markers of a cell do not pair up."""


def _string_literal(text: str) -> str:
    if '"' not in text and "\\" not in text:
        return f'"{text}"'
    return repr(text)


def _split_cell(source: str, where: str) -> list[tuple[str, list[str], str, str]]:
    """Split a cell into pieces: ("code", lines, "", "") or ("region", lines, indent, hint)."""
    pieces: list[tuple[str, list[str], str, str]] = []
    code: list[str] = []
    region: list[str] | None = None
    indent = hint = ""
    begin_line = 0
    for number, line in enumerate(source.split("\n"), start=1):
        begin, end = _BEGIN_LINE.match(line), _END_LINE.match(line)
        if begin:
            if region is not None:
                raise SolutionMarkerError(
                    f"{where}, line {number}: {BEGIN} inside the region opened on line "
                    f"{begin_line}; close it with {END} first"
                )
            pieces.append(("code", code, "", ""))
            code, region, begin_line = [], [], number
            indent, hint = begin.group("indent"), begin.group("hint") or DEFAULT_HINT
        elif end:
            if region is None:
                raise SolutionMarkerError(f"{where}, line {number}: {END} without a {BEGIN}")
            pieces.append(("region", region, indent, hint))
            region = None
        elif _MARKER_WORDS.search(line) and line.lstrip().startswith("#"):
            raise SolutionMarkerError(
                f"{where}, line {number}: malformed marker {line.strip()!r}; "
                f"write exactly {BEGIN!r} or {END!r}"
            )
        elif region is not None:
            region.append(line)
        else:
            code.append(line)
    if region is not None:
        raise SolutionMarkerError(f"{where}, line {begin_line}: {BEGIN} is never closed by {END}")
    pieces.append(("code", code, "", ""))
    return pieces


def _where(name: str, cell_number: int) -> str:
    return f"{name}, cell {cell_number}"


def solution_regions(nb: nbformat.NotebookNode, name: str = "the notebook") -> list[str]:
    """The text inside each solution region (markers excluded), in notebook order."""
    regions = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "code":
            for kind, lines, _, _ in _split_cell(cell.source, _where(name, number)):
                if kind == "region":
                    regions.append("\n".join(lines))
    return regions


def leaked_lines(
    solution_nb: nbformat.NotebookNode, exercise_nb: nbformat.NotebookNode
) -> list[str]:
    """The solution lines that appear in the exercise notebook (there should be none).

    Only lines that give something away count: stripped, not comments, over 8 characters.
    """
    shown = {line.strip() for cell in exercise_nb.cells for line in cell.source.splitlines()}
    leaked = []
    for region in solution_regions(solution_nb):
        for line in region.splitlines():
            text = line.strip()
            if len(text) > 8 and not text.startswith("#") and text in shown:
                leaked.append(text)
    return leaked


def _stable_id(name: str, number: int) -> str:
    return hashlib.sha1(f"{name}:{number}".encode()).hexdigest()[:8]


def generate_notebook(
    solution_nb: nbformat.NotebookNode, name: str = "the notebook", chapter: str | None = None
) -> nbformat.NotebookNode:
    """The exercise notebook for a solution notebook (which is left unchanged).

    ``name`` (the solution's file name) is used in error messages and to give cells
    that have no id a stable one. ``chapter`` (an id such as "01") is written into the
    notebook's metadata, where the grader reads it, whatever the learner renames it to.
    """
    nb = copy.deepcopy(solution_nb)
    nb.metadata = nbformat.NotebookNode(
        {k: nb.metadata[k] for k in _KEPT_NOTEBOOK_METADATA if k in nb.metadata}
    )
    # As JupyterLab writes it (opening the exercise changes nothing), with the solution's
    # language_info: the Python that runs the generator must not make the exercise stale.
    normalize_metadata(nb, language_info=nb.metadata.get("language_info"))
    if chapter is not None:
        nb.metadata["minitorch"] = nbformat.NotebookNode({"chapter": chapter})
    on_request = chapter is not None and hints.has_hints(manifest.chapter(chapter))
    current = None  # the exercise whose heading came last
    for number, cell in enumerate(nb.cells, start=1):
        if "id" not in cell:
            cell.id = _stable_id(name, number)
        if cell.cell_type == "markdown" and (m := _HEADING.search(cell.source)):
            current = m.group(1)
        if cell.cell_type != "code":
            continue
        replaced = False
        lines: list[str] = []
        for kind, piece, indent, hint in _split_cell(cell.source, _where(name, number)):
            if kind == "code":
                lines += piece
                continue
            if on_request:
                hint = _on_request(hint, current, _where(name, number))
            lines.append(f"{indent}raise NotImplementedError({_string_literal(hint)})")
            replaced = True
        cell.source = "\n".join(lines)
        cell.outputs = []
        cell.execution_count = None
        for key in _DROPPED_CELL_METADATA:
            cell.metadata.pop(key, None)
        if replaced:
            tags = list(cell.metadata.get("tags", []))
            if RAISES_TAG not in tags:
                cell.metadata["tags"] = [*tags, RAISES_TAG]
    return nb


def _on_request(written: str, exercise: str | None, where: str) -> str:
    """The message of a chapter whose hints are given on request (``hint("NN.k")``): it
    points there, and a marker line may not carry a hint of its own."""
    if written != DEFAULT_HINT:
        raise SolutionMarkerError(
            f"{where}: this chapter's hints are in minitorch/course/hints/, shown by hint(): "
            f"leave the {BEGIN} line bare (it says {written!r})"
        )
    if exercise is None:
        return DEFAULT_HINT
    return f'{exercise}: write your code here (stuck? hint("{exercise}"))'


def render(nb: nbformat.NotebookNode) -> str:
    """The notebook's file text, the same for the same notebook every time."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def exercise_text(solution: str | Path) -> str:
    """The text of the exercise notebook generated from the solution notebook file."""
    solution = Path(solution)
    nb = nbformat.read(solution, as_version=4)
    try:
        chapter = manifest.chapter_for_notebook(solution).id
    except KeyError:
        chapter = None
    return render(generate_notebook(nb, name=_display(solution), chapter=chapter))


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(manifest.ROOT))
    except ValueError:
        return str(path)


def _changed(chapters: Iterable[manifest.Chapter] | None) -> list[tuple[Path, str]]:
    """(exercise notebook, the text the generator makes) for each one missing or different."""
    found = []
    for chapter in manifest.CHAPTERS if chapters is None else chapters:
        if not chapter.solution.exists():
            continue
        target = chapter.exercise_notebook
        text = exercise_text(chapter.solution)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            found.append((target, text))
    return found


def stale(chapters: Iterable[manifest.Chapter] | None = None) -> list[Path]:
    """The exercise notebooks that are missing or differ from what the generator makes."""
    return [target for target, _ in _changed(chapters)]


def write(chapters: Iterable[manifest.Chapter] | None = None) -> list[Path]:
    """Write every chapter's exercise notebook that changed; returns the ones written."""
    written = []
    for target, text in _changed(chapters):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.course.generate",
        description="Generate exercises/NN_*.ipynb from solutions/NN_*.ipynb.",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if any exercise is stale"
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            paths = stale()
            for path in paths:
                print(f"stale or missing: {_display(path)}")
            if paths:
                print(
                    "run `make exercises` (python -m minitorch.course.generate) to regenerate them"
                )
                return 1
            print("exercise notebooks are up to date")
            return 0
        for path in write():
            print(f"wrote {_display(path)}")
    except SolutionMarkerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
