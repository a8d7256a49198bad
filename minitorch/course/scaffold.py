"""A new exercise's skeleton, in every place an exercise lives.

    python -m minitorch.grade new-exercise --chapter 03 --title "Weight decay" --points 3
    python -m minitorch.grade new-exercise --chapter 03 --title "..." --private private/

A course exercise gets the next free id of its chapter and, each marked TODO: its entry in
the manifest; its heading, contract and solution region (a function that raises
``NotImplementedError`` until you write it) with a ``check(...)`` cell in the solution
notebook, before the chapter's "at work" section; and a probe and a judge in the chapter's
test module. The judge fails until you write it, so the suite (every test passes on the
solution and fails on the blank notebook) keeps the exercise red until it is done.

With ``--private DIR`` it is an instructor's own exercise: only a test file in DIR,
registered with ``@exercise(id, title=..., points=...)``, which the grader adds as a
column of the gradebook and shows students only after the due date.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from minitorch.course import manifest

_AT_WORK = "## Your framework at work"


def next_id(chapter: manifest.Chapter, taken: Sequence[str] = ()) -> str:
    """The chapter's first unused exercise id after its last (``03.9`` -> ``03.10``)."""
    numbers = [int(e.id.split(".")[1]) for e in chapter.exercises]
    numbers += [int(i.split(".")[1]) for i in taken if i.startswith(f"{chapter.id}.")]
    return f"{chapter.id}.{max(numbers, default=0) + 1}"


def function_name(title: str) -> str:
    """A Python name from a title: ``"Weight decay"`` -> ``weight_decay``."""
    words = re.findall(r"[A-Za-z0-9]+", title.lower())
    name = "_".join(words) or "piece"
    return name if not name[0].isdigit() else f"piece_{name}"


def add_to_manifest(path: Path, chapter: manifest.Chapter, exercise: manifest.Exercise) -> None:
    """Insert ``exercise`` as the last of ``chapter``'s exercises in the manifest's source."""
    text = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "Chapter"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == chapter.id
        ):
            exercises = node.args[3] if len(node.args) > 3 else None
            break
    else:
        raise ValueError(f"{path}: no Chapter({chapter.id!r}, ...) to add {exercise.id} to")
    if not isinstance(exercises, ast.Tuple):
        raise ValueError(f"{path}: chapter {chapter.id}'s exercises are not a tuple literal")
    lines = text.splitlines(keepends=True)
    entry = f"            Exercise({exercise.id!r}, {exercise.title!r}, {exercise.points}),\n"
    end = exercises.end_lineno - 1  # the line holding the tuple's closing parenthesis
    lines.insert(end, entry)
    path.write_text("".join(lines), encoding="utf-8")


def add_to_solution(path: Path, exercise: manifest.Exercise, name: str) -> None:
    """The exercise's heading, contract, solution region and check cell, before the
    notebook's "at work" section (or at its end)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    heading = nbformat.v4.new_markdown_cell(
        f"## {exercise.id} {exercise.title} ({exercise.points} points)\n\n"
        f"TODO: the contract. What `{name}` takes and returns, every rule the tests check, "
        "why the piece matters, and the lesson section that teaches the method (no recipe: "
        'see the README, "Exercise texts").'
    )
    code = nbformat.v4.new_code_cell(
        f"def {name}(x):\n"
        f'    """TODO: what it takes and returns."""\n'
        "    ### BEGIN SOLUTION\n"
        "    raise NotImplementedError  # TODO: your solution; the generator blanks this region\n"
        "    ### END SOLUTION"
    )
    check = nbformat.v4.new_code_cell(f'check("{exercise.id}")')
    at = next(
        (i for i, c in enumerate(notebook.cells) if c.source.startswith(_AT_WORK)),
        len(notebook.cells),
    )
    notebook.cells[at:at] = [heading, code, check]
    nbformat.write(notebook, path)


def judge_stub(exercise_id: str, name: str, private: tuple[str, float] | None = None) -> str:
    """A probe that calls the learner's piece, and a judge that fails until written."""
    registration = f'"{exercise_id}"'
    if private is not None:
        registration += f", title={private[0]!r}, points={private[1]:g}"
    return (
        f"\n\n@probe\ndef {name}_of(nb, x):\n    return nb.{name}(x)\n\n\n"
        f"@exercise({registration})\n"
        f"def test_{name}(run):\n"
        f"    got = run({name}_of, 1)  # TODO: inputs that tell right from wrong\n"
        f'    raise AssertionError(f"TODO: judge {{got!r}} (this judge is not written yet)")\n'
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.grade new-exercise",
        description="Write a new exercise's skeleton: manifest entry, solution notebook "
        "cells and a probe/judge stub (or, with --private, a private test file only).",
    )
    parser.add_argument("--chapter", required=True, metavar="ID", help="the chapter, e.g. 03")
    parser.add_argument("--title", required=True, help="the exercise's title")
    parser.add_argument("--points", type=int, default=3, help="its points (default 3)")
    parser.add_argument("--name", help="the function the learner writes (default: from the title)")
    parser.add_argument("--private", metavar="DIR", help="an instructor's own exercise, in DIR")
    args = parser.parse_args(argv)
    try:
        chapter = manifest.chapter(args.chapter)
    except KeyError as err:
        parser.error(str(err.args[0]))
    if args.points < 1:
        parser.error(f"--points must be 1 or more, got {args.points}")
    if not args.title.strip():
        parser.error("--title must not be empty")
    name = args.name or function_name(args.title)
    if not name.isidentifier():
        parser.error(f"--name {name!r} is not a Python name")
    if args.private:
        folder = Path(args.private)
        taken = re.findall(r'@exercise\("(\d+\.\d+)"', _read_all(folder))
        exercise_id = next_id(chapter, taken)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"test_{exercise_id.replace('.', '_')}_{name}.py"
        header = "from minitorch.course.grading import exercise, probe\n"
        target.write_text(header + judge_stub(exercise_id, name, (args.title, args.points)))
        print(f"wrote {target}: exercise {exercise_id} (instructor's own), its judge to write")
        return 0
    exercise = manifest.Exercise(next_id(chapter), args.title.strip(), args.points)
    add_to_manifest(Path(manifest.__file__), chapter, exercise)
    add_to_solution(chapter.solution, exercise, name)
    with chapter.tests.open("a", encoding="utf-8") as tests:
        tests.write(judge_stub(exercise.id, name))
    print(
        f"exercise {exercise.id} added: the manifest ({manifest.__file__}), "
        f"{chapter.solution.name} and {chapter.tests.name}. Write its contract, solution and "
        "judge (each marked TODO), then regenerate the exercises (make exercises)."
    )
    return 0


def _read_all(folder: Path) -> str:
    if not folder.is_dir():
        return ""
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("test_*.py")))


if __name__ == "__main__":
    sys.exit(main())
