"""Grade a notebook, or a whole class, or build a Gradescope autograder.

    python -m minitorch.grade exercises/01_tensors_exercises.ipynb
    python -m minitorch.grade submission.ipynb --chapter 01 --json results.json --tests private/
    python -m minitorch.grade submissions/ --chapter 04 --out graded/ --jobs 2 [--roster r.csv]
    python -m minitorch.grade submissions/ --chapter 04 --out graded/ --exercise 04.2
    python -m minitorch.grade submissions/ --chapter 04 --out graded/ --roster gradebook.csv \
        --canvas "Homework 4 (123456)" --keep latest --late-penalty 10
    python -m minitorch.grade gradescope --chapter 04 [--tests private/] -o autograder.zip
    python -m minitorch.grade check-tests --chapter 04 --tests private/
    python -m minitorch.grade new-exercise --chapter 03 --title "..." [--points 3] [--private DIR]

One notebook: a score table on the terminal and, if asked, a results.json. The chapter
comes from ``--chapter``, else the notebook's metadata (the generator writes it), else the
file name. A folder, several files or ``--out``: the class, graded in parallel into
``--out`` (see ``minitorch.course.batch``). ``--exercise NN.k`` regrades one exercise and
keeps the rest of the earlier results (``--json``'s file, or each student's in ``--out``),
with the earlier run's seed unless ``--seed`` says otherwise.

Exit status: 0 when grading ran (whatever the score), 2 for a missing or invalid
notebook, an unknown chapter, exercise or test folder or any other bad argument (one
line on stderr, as argparse's), 1 when grading could not run (the tests themselves failed
to load).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from minitorch.course import hints, manifest, similarity
from minitorch.course.grading import grade
from minitorch.course.grading.errors import GradingError, NotebookError
from minitorch.course.grading.grader import TOTAL_TIMEOUT
from minitorch.course.grading.notebook import CELL_TIMEOUT
from minitorch.course.grading.report import WIDTH
from minitorch.course.grading.runner import EXERCISE_TIMEOUT

SUBCOMMANDS = """subcommands:
  gradescope          build a Gradescope autograder zip for one chapter
                      (python -m minitorch.grade gradescope --help)
  gradescope run      grade /autograder/submission inside Gradescope's container
  check-tests         check that private tests pass on the solution and fail on the
                      blank notebook (python -m minitorch.grade check-tests --help)
  new-exercise        write a new exercise's skeleton: manifest entry, solution cells,
                      a probe and a judge to write (... new-exercise --help)"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.grade",
        description="Grade a chapter notebook with its exercise tests, or a whole class.",
        epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "notebook",
        nargs="+",
        help="the notebook to grade (e.g. exercises/01_tensors_exercises.ipynb), or a "
        "class: folders and files of submissions (with --chapter and --out)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="grade a class into DIR: gradebook.csv, summary.md, feedback"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="grade N submissions at a time (a class)"
    )
    parser.add_argument(
        "--roster", metavar="CSV", help="a roster (a class): names, e-mails, missing students"
    )
    parser.add_argument(
        "--exercise", metavar="ID", help="regrade one exercise (e.g. 04.2), keeping the others"
    )
    parser.add_argument(
        "--keep",
        choices=("latest", "best", "all"),
        default="latest",
        help="a class: of several submissions of one student, grade the latest (default), "
        "keep the best, or keep a row for each",
    )
    parser.add_argument(
        "--late-penalty",
        type=float,
        default=0.0,
        metavar="PERCENT",
        help="a class: take PERCENT of its points off a late submission (Canvas's _LATE)",
    )
    parser.add_argument(
        "--adjustments",
        metavar="CSV",
        help="a class: manual adjustments (student, exercise, points, comment)",
    )
    parser.add_argument(
        "--canvas",
        metavar="COLUMN",
        help="a class: also write canvas.csv for Canvas's gradebook import, the total in "
        "COLUMN (e.g. 'Homework 4 (123456)' as Canvas's export names it)",
    )
    parser.add_argument(
        "--similarity",
        type=float,
        default=similarity.THRESHOLD,
        metavar="RATIO",
        help=f"a class: list answers alike at RATIO or more (default {similarity.THRESHOLD})",
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
    hints.add_cost_option(parser)
    parser.add_argument(
        "--chapter",
        metavar="ID",
        help="the chapter (e.g. 01), when neither the notebook's metadata nor its name says",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["gradescope"]:
        from minitorch.course.gradescope import main as gradescope_main

        return gradescope_main(argv[1:])
    if argv[:1] == ["check-tests"]:
        from minitorch.course.check_tests import main as check_tests_main

        return check_tests_main(argv[1:])
    if argv[:1] == ["new-exercise"]:
        from minitorch.course.scaffold import main as scaffold_main

        return scaffold_main(argv[1:])
    args = _parser().parse_args(argv)
    problem = _bad_argument(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        chapter = manifest.chapter(args.chapter) if args.chapter else None
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    paths = args.notebook
    if args.out is not None or len(paths) > 1 or any(Path(p).is_dir() for p in paths):
        return _grade_class(args, chapter)
    previous = None
    if args.exercise and args.json and Path(args.json).is_file():
        previous = json.loads(Path(args.json).read_text(encoding="utf-8"))
        if args.seed is None:
            args.seed = previous.get("seed")
    try:
        report = grade(
            paths[0],
            extra_test_dirs=args.tests,
            timeout=args.timeout,
            chapter=chapter,
            cell_timeout=args.cell_timeout,
            total_timeout=args.total_timeout,
            seed=args.seed,
            exercises=[args.exercise] if args.exercise else None,
            hint_cost=args.hint_cost,
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
        if previous is not None:
            from minitorch.course.batch import merge_results

            merged = merge_results(previous, report.to_gradescope(), [args.exercise])
            Path(args.json).write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
        else:
            report.write_json(args.json)
        print(f"wrote {args.json}")
    return 0


def _bad_argument(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line; None when nothing is."""
    import math

    if args.hint_cost < 0 or not math.isfinite(args.hint_cost):
        return f"--hint-cost must be 0 or more points, got {args.hint_cost}"
    for option in ("timeout", "cell_timeout", "total_timeout"):
        value = getattr(args, option)
        if not (value > 0 and math.isfinite(value)):
            return f"--{option.replace('_', '-')} must be a number of seconds above 0, got {value}"
    if args.jobs < 1:
        return f"--jobs must be at least 1, got {args.jobs}"
    if not 0 <= args.late_penalty <= 100:
        return f"--late-penalty must be a percentage from 0 to 100, got {args.late_penalty}"
    if not 0 < args.similarity <= 1:
        return f"--similarity must be a ratio above 0 and at most 1, got {args.similarity}"
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        return f"--out {args.out}: a file, not a folder"
    if args.json is not None and Path(args.json).is_dir():
        return f"--json {args.json}: a folder, not a file"
    if args.canvas is not None and not args.canvas.strip():
        return "--canvas needs the name of the Canvas column to write"
    for option in ("roster", "adjustments"):
        path = getattr(args, option)
        if path is not None and not Path(path).is_file():
            return f"--{option} {path}: no such file"
    if args.roster is not None:
        from minitorch.course.roster import read_roster

        try:
            read_roster(args.roster)
        except ValueError as exc:
            return str(exc)
    if args.adjustments is not None:
        from minitorch.course.adjustments import read_adjustments

        try:
            read_adjustments(args.adjustments)
        except ValueError as exc:
            return str(exc)
    return manifest.course_mismatch()


def _grade_class(args: argparse.Namespace, chapter: manifest.Chapter | None) -> int:
    """A class: every submission under the given paths into ``--out``."""
    from minitorch.course.batch import grade_class

    if chapter is None or args.out is None:
        print(
            "error: grading a class needs --chapter ID (the assignment's chapter; a "
            "submission's metadata is the student's to edit) and --out DIR",
            file=sys.stderr,
        )
        return 2
    try:
        rows = grade_class(
            args.notebook,
            chapter,
            args.out,
            jobs=args.jobs,
            tests=args.tests,
            roster=args.roster,
            seed=args.seed,
            exercise=args.exercise,
            timeout=args.timeout,
            hint_cost=args.hint_cost,
            keep=args.keep,
            late_penalty=args.late_penalty,
            adjustments=args.adjustments,
            canvas=args.canvas,
            similar=args.similarity,
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    graded = sum(r["status"] == "graded" and r.get("kept") != "no" for r in rows)
    written = ["gradebook.csv", "gradescope.csv", *(["canvas.csv"] if args.canvas else [])]
    print(
        f"{len(rows)} rows ({graded} graded): "
        + ", ".join(str(Path(args.out) / name) for name in [*written, "summary.md"])
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
