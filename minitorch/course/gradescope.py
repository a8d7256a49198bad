"""A Gradescope autograder for one chapter: built, and run inside Gradescope's container.

    python -m minitorch.grade gradescope --chapter 04 [--tests private/] -o autograder.zip

The zip holds what Gradescope asks for at its top: ``setup.sh`` (run once, when the
autograder image is built: it installs Python and this very copy of the course, the one
the zip was built from) and ``run_autograder`` (run for every submission). Gradescope
unpacks the zip into ``/autograder/source``; the course goes to ``course/`` (the package,
``pyproject.toml`` and the chapter's tests), private tests to ``private/``, and
``autograder.json`` says which chapter, version and commit it is.

``run_autograder`` finds the notebook in ``/autograder/submission`` whatever its name,
grades it as the chapter (``--chapter``: a submission's metadata is the student's), and
writes ``/autograder/results/results.json`` with the score, one test per exercise, private
tests with ``visibility`` ``after_due_date`` (unless the zip was built with another), the
seed and the execution time. An upload that is not a notebook gets a results.json with 0
points and a message saying why. Its root is ``$AUTOGRADER_ROOT`` (default
``/autograder``), so a test can run it in a folder laid out like Gradescope's.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minitorch.course import hints, manifest
from minitorch.course.batch import read_json, ungraded_results

#: Gradescope's values for a test's visibility.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --upgrade pip
# this very copy of the course (the one the zip was built from), with the course's extra
/autograder/venv/bin/python -m pip install --quiet "/autograder/source/course[course]"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade /autograder/submission's notebook.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
export MINITORCH_COURSE="$ROOT/source/course"
# the tests for the grader's eyes only: the worker runs under a user id of its own
chmod -R go-rwx "$ROOT/source/private" "$ROOT/source/course/tests" 2>/dev/null || true
exec "$PYTHON" -m minitorch.course.gradescope run --root "$ROOT" --chapter {chapter} {tests}
"""


def _course_files(root: Path, chapter: manifest.Chapter) -> list[tuple[Path, str]]:
    """(file, name in the zip) for the course: the package, its metadata, the tests."""
    files = [(root / "pyproject.toml", "course/pyproject.toml")]
    if (root / "README.md").is_file():
        files.append((root / "README.md", "course/README.md"))
    package = root / "minitorch"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files.append((path, f"course/{path.relative_to(root).as_posix()}"))
    files.append((chapter.tests, f"course/{chapter.tests.relative_to(root).as_posix()}"))
    return files


def _commit(root: Path) -> str | None:
    """The checkout's commit, with ``-dirty`` (as ``git describe --dirty``) when tracked
    files have uncommitted changes: the zip then holds code no commit has."""

    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None

    head = git("rev-parse", "HEAD")
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return None
    changes = git("status", "--porcelain", "--untracked-files=no")
    dirty = changes is None or changes.returncode != 0 or bool(changes.stdout.strip())
    return head.stdout.strip() + ("-dirty" if dirty else "")


def build(
    chapter: manifest.Chapter,
    output: str | Path,
    tests: Sequence[str | Path] = (),
    private_visibility: str = "after_due_date",
    hint_cost: float = 0.0,
) -> Path:
    """Write the autograder zip for ``chapter`` (with private test folders ``tests``); each
    hint level a submission opened costs ``hint_cost`` points of its exercise."""
    if hint_cost < 0:
        raise ValueError(f"--hint-cost must be 0 or more points, got {hint_cost}")
    if private_visibility not in VISIBILITIES:
        raise ValueError(
            f"private test visibility must be one of {', '.join(VISIBILITIES)}, got "
            f"{private_visibility!r}"
        )
    root = manifest.ROOT
    if not chapter.tests.is_file():
        raise FileNotFoundError(f"the tests of chapter {chapter.id} are missing: {chapter.tests}")
    private: list[tuple[Path, str]] = []
    for n, folder in enumerate(Path(t) for t in tests):
        if not folder.is_dir():
            raise FileNotFoundError(f"--tests {folder}: no such folder")
        found = [p for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts]
        if not any(p.name.startswith("test_") for p in found):
            raise FileNotFoundError(f"--tests {folder}: no test_*.py file in it")
        private += [(p, f"private/{n}/{p.relative_to(folder).as_posix()}") for p in found]
    test_args = " ".join(f'--tests "$ROOT/source/private/{n}"' for n in range(len(tests)))
    info = {
        "chapter": chapter.id,
        "title": chapter.title,
        "minitorch": _version(),
        "commit": _commit(root),
        "private_visibility": private_visibility,
        "hint_cost": hint_cost,
        "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as zf:
        _write_script(zf, "setup.sh", SETUP_SH)
        _write_script(
            zf, "run_autograder", RUN_AUTOGRADER.format(chapter=chapter.id, tests=test_args)
        )
        zf.writestr("autograder.json", json.dumps(info, indent=2) + "\n")
        for path, name in _course_files(root, chapter) + private:
            zf.write(path, name)
    return output


def _write_script(zf: zipfile.ZipFile, name: str, text: str) -> None:
    _write_file(zf, name, text, mode=0o755)  # an executable file


def _write_file(zf: zipfile.ZipFile, name: str, text: str, mode: int = 0o644) -> None:
    entry = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    entry.external_attr = (0o100000 | mode) << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(entry, text)


def _version() -> str:
    from minitorch import __version__

    return __version__


# --- inside the container --------------------------------------------------------------------
def find_notebook(folder: Path, chapter: manifest.Chapter) -> tuple[Path | None, str]:
    """The submitted notebook (whatever its name) and a note about the choice: the only
    ``.ipynb``; of several, the one whose metadata names the chapter, else the newest."""
    from minitorch.course.grading.errors import NotebookError
    from minitorch.course.grading.notebook import notebook_chapter

    files = [
        p for p in sorted(folder.rglob("*")) if p.is_file() and ".ipynb_checkpoints" not in p.parts
    ]
    notebooks = [p for p in files if p.suffix.lower() == ".ipynb"]
    if not notebooks:
        names = ", ".join(p.name for p in files[:5]) or "nothing"
        return None, (
            f"No notebook was found in your submission (it holds {names}): upload the "
            f"exercise notebook of chapter {chapter.id}, a .ipynb file."
        )
    if len(notebooks) == 1:
        return notebooks[0], ""

    def names_chapter(p: Path) -> bool:
        try:
            return notebook_chapter(p) == chapter.id
        except NotebookError:
            return False

    ours = [p for p in notebooks if names_chapter(p)] or notebooks
    chosen = max(ours, key=lambda p: p.stat().st_mtime)
    others = ", ".join(p.name for p in notebooks if p != chosen)
    return chosen, f"Several notebooks were uploaded; graded {chosen.name} (not {others})."


def run(root: str | Path, chapter: manifest.Chapter, tests: Sequence[str] = ()) -> dict[str, Any]:
    """Grade the submission under ``root`` (Gradescope's layout) into its results.json."""
    from minitorch.course.grading import grade
    from minitorch.course.grading.errors import GradingError, NotebookError

    root = Path(root)
    started = time.monotonic()
    info = read_json(root / "source" / "autograder.json") or {}
    notebook, note = find_notebook(root / "submission", chapter)
    if notebook is None:
        results = ungraded_results(chapter, note)
    else:
        try:
            cost = float(info.get("hint_cost") or 0.0)
            report = grade(notebook, chapter=chapter, extra_test_dirs=list(tests), hint_cost=cost)
        except NotebookError as err:
            results = ungraded_results(chapter, f"{notebook.name} was not graded: {err}")
        except GradingError as err:
            results = ungraded_results(chapter, f"{notebook.name} could not be graded: {err}")
        else:
            visibility = info.get("private_visibility", "after_due_date")
            results = report.to_gradescope(visibility, for_students=True)
            # stdout reaches instructors only: the whole report, private tests included
            print(report.text(width=None), flush=True)
            if note:
                results["output"] = f"{note}\n{results['output']}"
    results["execution_time"] = round(time.monotonic() - started, 2)
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


# --- the commands ----------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minitorch.grade gradescope ...`` (build) and ``... gradescope run`` (the
    container's side, which ``run_autograder`` calls)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:
        return _run_command(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.grade gradescope",
        description="Build a Gradescope autograder zip for one chapter.",
    )
    parser.add_argument("--chapter", required=True, metavar="ID", help="the chapter, e.g. 04")
    parser.add_argument(
        "--tests", action="append", default=[], metavar="DIR", help="private tests (repeatable)"
    )
    parser.add_argument(
        "-o", "--output", default="autograder.zip", metavar="ZIP", help="the zip to write"
    )
    parser.add_argument(
        "--private-visibility",
        default="after_due_date",
        choices=VISIBILITIES,
        help="when students see private tests' results (default after_due_date)",
    )
    hints.add_cost_option(parser)
    args = parser.parse_args(argv)
    if not math.isfinite(args.hint_cost):
        print(f"error: --hint-cost must be 0 or more points, got {args.hint_cost}", file=sys.stderr)
        return 2
    if Path(args.output).is_dir():
        print(f"error: -o {args.output}: a folder, not a zip file to write", file=sys.stderr)
        return 2
    try:
        chapter = manifest.chapter(args.chapter)
        path = build(chapter, args.output, args.tests, args.private_visibility, args.hint_cost)
    except (KeyError, FileNotFoundError, ValueError) as err:
        print(f"error: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    print(f"wrote {path}: upload it as the autograder of chapter {chapter.id} ({chapter.title})")
    return 0


def _run_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitorch.course.gradescope run")
    parser.add_argument("--root", default="/autograder")
    parser.add_argument("--chapter", required=True)
    parser.add_argument("--tests", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        chapter = manifest.chapter(args.chapter)
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 2
    if not Path(args.root).is_dir():
        print(f"error: --root {args.root}: no such folder", file=sys.stderr)
        return 2
    run(args.root, chapter, args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
