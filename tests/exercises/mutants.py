"""The mutant harness every chapter shares: the graded tests have teeth.

A chapter's ``mutants_NN.py`` keeps wrong answers written the way learners write them,
and answers that delegate to a ready-made implementation, in one of two forms:

- ``MUTANTS[exercise_id] = {name: source}``: the source is run in a copy of the solution
  notebook's namespace, where it redefines the exercise's function or class (chapters
  01-03);
- ``MUTANTS[exercise_id] = (function, {name: body})``: the body replaces the solution
  region of the cell that defines ``function`` (dedented, then put at the region's
  indentation), and the notebook is loaded again (chapters 05 and 07).

A chapter's ``test_NN_*_mutants.py`` is a few lines::

    from mutants import alternative_tests, mutant_tests
    from mutants_01 import CORRECT, MUTANTS

    test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests("01", MUTANTS)
    test_correct_alternatives_keep_full_marks = alternative_tests("01", CORRECT)

Every mutant must lose points on its exercise, through the same probes and judges the
grader runs (in this process, as ``check()`` does); a mutant whose name starts with
``delegates`` must get no points at all and the message "your answer used ...". The
solution keeps full marks, and so does every legitimate alternative kept in ``CORRECT``
(same form as ``MUTANTS``). ``python tests/exercises/mutants.py 01 02 03`` prints the
catch rate per exercise.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import textwrap
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from minitorch.course import manifest
from minitorch.course.grading import LocalRunner, Namespace
from minitorch.course.grading.delegation import is_delegation
from minitorch.course.grading.notebook import code_cells, load_cells
from minitorch.course.grading.registry import ExerciseTests, collect
from minitorch.course.grading.results import PASSED
from minitorch.course.grading.runner import run_exercise, run_test

#: Seconds one mutant's exercise may run (a mutant with an endless loop fails, not hangs).
MUTANT_TIMEOUT = 60.0

_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION", re.M | re.S
)


@functools.cache
def solution(chapter_id: str) -> Namespace:
    """The chapter's solution notebook, loaded once."""
    return load_cells(code_cells(manifest.chapter(chapter_id).solution), "solution")


@functools.cache
def exercise_tests(chapter_id: str) -> dict[str, ExerciseTests]:
    chapter = manifest.chapter(chapter_id)
    return {t.id: t for t in collect([chapter.tests], chapter.exercises)}


def _region_cells(chapter_id: str, function: str, body: str, whole: bool) -> list[tuple[int, str]]:
    """The solution's code cells with ``body`` in ``function``'s solution region; without
    ``whole``, up to the last cell with a solution region (the cells after it, such as
    chapter 04's digits classifier, show the pieces at work but define nothing the judges
    read, and would run again for every mutant)."""
    cells, last = [], 0
    for i, (number, source) in enumerate(code_cells(manifest.chapter(chapter_id).solution)):
        if _REGION.search(source):
            last = i
        found = re.search(rf"^[ \t]*(def|class) {function}\b", source, re.M)
        if found:  # the first solution region inside that definition
            match = _REGION.search(source, found.start())
            indent = match.group("indent")
            code = textwrap.indent(textwrap.dedent(body).strip("\n"), indent)
            source = source[: match.start()] + code + source[match.end() :]
        cells.append((number, source))
    return cells if whole else cells[: last + 1]


def _imports_torch(mutants: dict, exercise_id: str, name: str) -> bool:
    """Whether mutant ``name``'s code imports PyTorch (it cannot run where torch is missing)."""
    entry = mutants[exercise_id]
    body = entry[1][name] if isinstance(entry, tuple) else entry[name]
    return re.search(r"^\s*(import|from) torch\b", body, re.M) is not None


def mutant_namespace(
    chapter_id: str, mutants: dict, exercise_id: str, name: str, whole: bool = False
) -> Namespace:
    """The definitions of the solution notebook with mutant ``name`` of ``exercise_id``
    (``whole``: all its cells run, not only those up to the last exercise)."""
    entry = mutants[exercise_id]
    origin = f"mutant {exercise_id} {name}"
    if isinstance(entry, tuple):
        function, bodies = entry
        return load_cells(_region_cells(chapter_id, function, bodies[name], whole), origin)
    definitions = dict(solution(chapter_id)._globals)
    source = textwrap.dedent(entry[name])
    exec(compile(source, f"<{origin}>", "exec"), definitions)
    return Namespace(definitions, origin=origin)


def first_failure(chapter_id: str, exercise_id: str, nb: Namespace) -> str | None:
    """The message of the exercise's first test that fails on ``nb`` (None: full marks)."""
    run = LocalRunner(nb, seed=0)
    run.deadline, run.limit = time.monotonic() + MUTANT_TIMEOUT, MUTANT_TIMEOUT
    for test in exercise_tests(chapter_id)[exercise_id].tests:
        outcome = run_test(test, run)
        if outcome.status != PASSED:
            return f"{outcome.name}: {outcome.message}"
    return None


def grade(chapter_id: str, exercise_id: str, nb: Namespace) -> Any:
    """The exercise's full result on ``nb`` (all its tests), as the grader computes it."""
    return run_exercise(exercise_tests(chapter_id)[exercise_id], LocalRunner(nb, seed=0))


def cases(mutants: dict) -> list[tuple[str, str]]:
    found = []
    for exercise_id, entry in mutants.items():
        bodies = entry[1] if isinstance(entry, tuple) else entry
        found += [(exercise_id, name) for name in bodies]
    return found


def mutant_tests(
    chapter_id: str, mutants: dict, other_refusals: tuple[str, ...] = ()
) -> tuple[Any, Any]:
    """The two tests of a chapter's mutants: each loses points; the solution does not.

    A delegating mutant gets no points, with the delegation message or (for a chapter
    whose own language refuses libraries, such as chapter 07's kernels) a reason that
    starts with one of ``other_refusals``.
    """
    found = cases(mutants)

    @pytest.mark.parametrize(("exercise_id", "name"), found, ids=[f"{e}-{n}" for e, n in found])
    def test_every_mutant_loses_points(exercise_id: str, name: str) -> None:
        if _imports_torch(mutants, exercise_id, name):
            if find_spec("torch") is None:
                pytest.skip("this mutant delegates to PyTorch, which is not installed (REFERENCE)")
            importlib.import_module("torch")  # here, not under the watch, where it takes 25 s
        nb = mutant_namespace(chapter_id, mutants, exercise_id, name)
        if name.startswith("delegates"):
            result = grade(chapter_id, exercise_id, nb)
            refused = is_delegation(result.reason) or result.reason.startswith(other_refusals)
            assert result.score == 0 and refused, (
                f"the delegating mutant {name} of {exercise_id} got {result.score} points "
                f"({result.reason!r}); it should get none, with 'your answer used ...'"
            )
            return
        failure = first_failure(chapter_id, exercise_id, nb)
        assert failure is not None, f"mutant {name} of {exercise_id} keeps full marks"

    def test_the_solution_keeps_full_marks() -> None:
        for exercise_id in mutants:
            failure = first_failure(chapter_id, exercise_id, solution(chapter_id))
            assert failure is None, f"the solution of {exercise_id} fails: {failure}"

    return test_every_mutant_loses_points, test_the_solution_keeps_full_marks


def alternative_tests(chapter_id: str, correct: dict) -> Any:
    """The test that every legitimate alternative answer (``CORRECT``) keeps full marks."""
    found = cases(correct)

    @pytest.mark.parametrize(("exercise_id", "name"), found, ids=[f"{e}-{n}" for e, n in found])
    def test_correct_alternatives_keep_full_marks(exercise_id: str, name: str) -> None:
        nb = mutant_namespace(chapter_id, correct, exercise_id, name)
        failure = first_failure(chapter_id, exercise_id, nb)
        assert failure is None, f"the correct alternative {name} of {exercise_id} fails: {failure}"

    return test_correct_alternatives_keep_full_marks


def catch_rates(chapter_id: str) -> dict[str, tuple[int, int, list[str]]]:
    """Per exercise: (mutants caught, mutants, names of those that kept full marks)."""
    module = importlib.import_module(f"mutants_{chapter_id}")
    rates: dict[str, tuple[int, int, list[str]]] = {}
    for exercise_id, name in cases(module.MUTANTS):
        nb = mutant_namespace(chapter_id, module.MUTANTS, exercise_id, name)
        caught, total, missed = rates.get(exercise_id, (0, 0, []))
        if first_failure(chapter_id, exercise_id, nb) is None:
            missed = [*missed, name]
        else:
            caught += 1
        rates[exercise_id] = (caught, total + 1, missed)
    return rates


def main(chapters: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    for chapter_id in chapters:
        rates = catch_rates(chapter_id)
        caught = sum(c for c, _, _ in rates.values())
        total = sum(t for _, t, _ in rates.values())
        for exercise_id, (c, t, missed) in rates.items():
            note = f"  kept full marks: {', '.join(missed)}" if missed else ""
            print(f"{exercise_id}: {c}/{t} caught{note}")
        print(f"chapter {chapter_id}: {caught}/{total} caught ({caught / total:.1%})")


if __name__ == "__main__":
    main(sys.argv[1:] or ["01", "02", "03"])
