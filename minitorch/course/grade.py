"""Grade one notebook: a score table on the terminal and, if asked, a results.json.

    python -m minitorch.grade exercises/01_tensors_exercises.ipynb
    python -m minitorch.grade submission.ipynb --chapter 01 --json results.json --tests private/

The chapter comes from ``--chapter``, else the notebook's metadata (the generator writes
it), else the file name. Exit status: 0 when grading ran (whatever the score), 2 for a
missing or invalid notebook, an unknown chapter or test folder, 1 when grading could not
run (the tests themselves failed to load).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence

from minitorch.course import manifest
from minitorch.course.grading import grade
from minitorch.course.grading.errors import GradingError, NotebookError
from minitorch.course.grading.grader import TOTAL_TIMEOUT
from minitorch.course.grading.notebook import CELL_TIMEOUT
from minitorch.course.grading.report import WIDTH
from minitorch.course.grading.runner import EXERCISE_TIMEOUT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.grade",
        description="Grade a chapter notebook with its exercise tests.",
    )
    parser.add_argument(
        "notebook", help="the notebook to grade, e.g. exercises/01_tensors_exercises.ipynb"
    )
    parser.add_argument("--json", metavar="PATH", help="also write Gradescope's results.json")
    parser.add_argument(
        "--tests",
        metavar="DIR",
        action="append",
        default=[],
        help="a folder of extra test_*.py files (e.g. private tests); may be repeated",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=EXERCISE_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit per exercise (default {EXERCISE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=CELL_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit per cell while the notebook loads (default {CELL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--total-timeout",
        type=float,
        default=TOTAL_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit for the whole notebook (default {TOTAL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed for the inputs the tests draw (default: a new one each run)",
    )
    parser.add_argument(
        "--chapter",
        metavar="ID",
        help="the chapter (e.g. 01), when neither the notebook's metadata nor its name says",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        chapter = manifest.chapter(args.chapter) if args.chapter else None
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    try:
        report = grade(
            args.notebook,
            extra_test_dirs=args.tests,
            timeout=args.timeout,
            chapter=chapter,
            cell_timeout=args.cell_timeout,
            total_timeout=args.total_timeout,
            seed=args.seed,
        )
    except NotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except GradingError as exc:
        print(f"error: could not grade {args.notebook}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if sys.stdout.isatty():
        columns = shutil.get_terminal_size((WIDTH, 24)).columns
        print(report.text(width=max(WIDTH, columns)))
    else:  # a file or a pipe: never cut the reasons
        print(report.text(width=None))
    if args.json:
        report.write_json(args.json)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
