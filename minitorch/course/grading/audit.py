"""Checks that the exercise tests have teeth, for the test suite and for instructors.

Each function returns a list of problems, one readable line each; empty means fine.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from minitorch.course.grading.registry import load_test_module, registered
from minitorch.course.grading.report import GradeReport
from minitorch.course.grading.results import NOT_IMPLEMENTED, PASSED
from minitorch.course.manifest import Chapter


def solution_problems(report: GradeReport) -> list[str]:
    """On the solution notebook, every test of every exercise must pass."""
    problems = []
    for r in report.results:
        if not r.tests:
            problems.append(f"{r.id}: {r.status}: {r.reason}")
        for t in r.tests:
            if t.status != PASSED:
                problems.append(f"{r.id} {t.name}: {t.status}: {t.message}")
    return problems


def exercise_problems(report: GradeReport) -> list[str]:
    """On the blank exercise notebook, every test must fail as "not implemented".

    A test that passes, or fails for another reason, on the blank notebook does not
    test the learner's code (or the blank notebook is broken).
    """
    problems = []
    for r in report.results:
        if not r.tests:
            continue  # solution_problems reports exercises without tests
        if r.score != 0 or r.status != NOT_IMPLEMENTED:
            problems.append(f"{r.id}: {r.status} with {r.score} points on the blank notebook")
        for t in r.tests:
            if t.status != NOT_IMPLEMENTED:
                detail = f": {t.message}" if t.message else ""
                problems.append(
                    f"{r.id} {t.name}: {t.status} on the blank notebook{detail} "
                    f"(every test must fail there with NotImplementedError)"
                )
    return problems


def id_problems(chapter: Chapter, test_file: str | Path | None = None) -> list[str]:
    """The chapter's test module and manifest must agree on the exercise ids.

    Every manifest exercise has a test, every test grades a manifest exercise, and
    every ``test_*`` function of the module is registered with ``@exercise``.
    """
    path = Path(test_file or chapter.tests)
    module = load_test_module(path)
    tests = registered(module.__name__)
    wanted = {e.id for e in chapter.exercises}
    problems = [
        f"{path.name}: `{t.name}` grades {t.exercise_id!r}, which is not in chapter "
        f"{chapter.id}'s manifest"
        for t in tests
        if t.exercise_id not in wanted
    ]
    tested = {t.exercise_id for t in tests}
    problems += [
        f"{path.name}: exercise {e.id} ({e.title}) has no test"
        for e in chapter.exercises
        if e.id not in tested
    ]
    names = {t.func for t in tests}
    for name, func in vars(module).items():
        if name.startswith("test_") and inspect.isfunction(func) and func not in names:
            problems.append(f"{path.name}: `{name}` has no @exercise(...) decorator")
    return problems
