"""Chapter 06's graded tests have teeth: every wrong answer in ``mutants_06.py`` loses
points on its exercise, while the solution keeps full marks.

A mutant's source runs in the solution notebook's namespace, replacing the learner's
definition of its exercise; that exercise's tests then run on it, as ``check()`` would.
"""

from __future__ import annotations

import pytest
from mutants_06 import MUTANTS  # (tests/exercises is on sys.path under pytest)

from minitorch import manifest
from minitorch.grading import LocalRunner, Namespace, load_notebook
from minitorch.grading.registry import collect
from minitorch.grading.runner import run_exercise

CHAPTER = manifest.chapter("06")


@pytest.fixture(scope="module")
def solution():
    return load_notebook(CHAPTER.solution)


@pytest.fixture(scope="module")
def tests():
    return {t.id: t for t in collect([CHAPTER.tests], CHAPTER.exercises)}


def _grade(namespace, exercise_tests):
    return run_exercise(exercise_tests, LocalRunner(namespace), timeout=60)


def test_every_exercise_has_mutants():
    assert {m[0] for m in MUTANTS} == {e.id for e in CHAPTER.exercises}
    assert len(MUTANTS) >= 3 * len(CHAPTER.exercises)


@pytest.mark.parametrize(
    ("exercise_id", "source"),
    [pytest.param(m[0], m[2], id=f"{m[0]} {m[1]}") for m in MUTANTS],
)
def test_mutant_loses_points(exercise_id, source, solution, tests):
    definitions = dict(solution._globals)
    exec(compile(source, f"<mutant {exercise_id}>", "exec"), definitions)
    result = _grade(Namespace(definitions, origin="a mutant"), tests[exercise_id])
    assert result.score < result.max_score, f"the mutant kept {result.score}/{result.max_score}"


def test_the_solution_keeps_full_marks(solution, tests):
    for exercise_id, exercise_tests in tests.items():
        result = _grade(solution, exercise_tests)
        assert result.score == result.max_score, (exercise_id, result.reason)
