"""Do an instructor's tests have teeth? Each must pass on the solution notebook and fail
(as "not implemented") on the blank exercise notebook.

    python -m minitorch.grade check-tests --chapter 04 --tests private/

The suite checks the course's own tests this way; this command checks the private ones
(and any other ``--tests`` folder) before they grade a class. Exit status 0 when every
test does both, 1 when one does not (each is listed), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from minitorch.course import manifest
from minitorch.course.grading.report import GradeReport
from minitorch.course.grading.results import NOT_IMPLEMENTED, PASSED


def problems(report_solution: GradeReport, report_blank: GradeReport) -> list[str]:
    """One line per private test that does not pass on the solution and fail, as not
    implemented, on the blank notebook; and one per exercise with no private test run."""
    lines = []
    blank = {(r.id, t.name): t for r in report_blank.results for t in r.tests if t.private}
    for r in report_solution.results:
        for t in (t for t in r.tests if t.private):
            if t.status != PASSED:
                detail = f": {t.message}" if t.message else ""
                lines.append(f"{r.id} {t.name}: {t.status} on the solution{detail}")
            other = blank.get((r.id, t.name))
            if other is not None and other.status != NOT_IMPLEMENTED:
                detail = f": {other.message}" if other.message else ""
                lines.append(
                    f"{r.id} {t.name}: {other.status} on the blank notebook{detail} "
                    "(it must fail there with NotImplementedError)"
                )
    return lines


def check(chapter: manifest.Chapter, test_dirs: Sequence[str | Path]) -> list[str]:
    """Grade the chapter's solution and blank notebooks with ``test_dirs``' tests."""
    from minitorch.course.grading import grade

    solution = grade(chapter.solution, chapter=chapter, extra_test_dirs=list(test_dirs))
    blank = grade(chapter.exercise_notebook, chapter=chapter, extra_test_dirs=list(test_dirs))
    if not any(t.private for r in solution.results for t in r.tests):
        return [f"no test_*.py in {', '.join(map(str, test_dirs))} grades chapter {chapter.id}"]
    return problems(solution, blank)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.grade check-tests",
        description="Check that private tests pass on the solution and fail on the blank "
        "exercise notebook.",
    )
    parser.add_argument("--chapter", required=True, metavar="ID", help="the chapter, e.g. 04")
    parser.add_argument(
        "--tests", action="append", required=True, metavar="DIR", help="a folder of tests"
    )
    args = parser.parse_args(argv)
    try:
        chapter = manifest.chapter(args.chapter)
    except KeyError as err:
        parser.error(str(err.args[0]))
    for folder in args.tests:
        if not Path(folder).is_dir():
            parser.error(f"--tests {folder}: no such folder")
    found = check(chapter, args.tests)
    for line in found:
        print(line)
    if not found:
        print(
            f"every test in {', '.join(args.tests)} passes on the solution and fails on the blank"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
