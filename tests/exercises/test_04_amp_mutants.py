"""Chapter 04's graded tests have teeth: every kept wrong answer loses points.

Each mutant (``mutants_04.py``) replaces one exercise's solution region in the solution
notebook; the notebook is loaded and that exercise's tests run on it, as ``check()``
would. The unmutated solution keeps full marks.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from mutants_04 import MUTANTS  # (tests/exercises is on sys.path under pytest)

from minitorch import manifest
from minitorch.grading import LocalRunner
from minitorch.grading.notebook import code_cells, load_cells
from minitorch.grading.registry import load_test_module, registered

CHAPTER = manifest.chapter("04")
_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION", re.M | re.S
)


def _mutated_cells(name: str, body: str) -> list[tuple[int, str]]:
    cells = []
    for number, source in code_cells(CHAPTER.solution):
        if re.search(rf"^(def|class) {name}\b", source, re.M):
            match = _REGION.search(source)
            code = textwrap.indent(textwrap.dedent(body).strip("\n"), match.group("indent"))
            source = source[: match.start()] + code + source[match.end() :]
        cells.append((number, source))
    return cells


def _tests_of(exercise_id: str) -> list:
    module = load_test_module(CHAPTER.tests)
    return [t for t in registered(module.__name__) if t.exercise_id == exercise_id]


def _passes(exercise_id: str, cells: list) -> list[str]:
    """The names of ``exercise_id``'s tests that pass on the notebook made of ``cells``."""
    nb = load_cells(cells, "mutant")
    passed = []
    for test in _tests_of(exercise_id):
        try:
            test.func(LocalRunner(nb, seed=0))
        except Exception:
            continue
        passed.append(test.name)
    return passed


CASES = [(eid, name) for eid, (_, bodies) in MUTANTS.items() for name in bodies]


@pytest.mark.parametrize("exercise_id, mutant", CASES, ids=[f"{e}-{m}" for e, m in CASES])
def test_every_mutant_loses_points(exercise_id, mutant):
    name, bodies = MUTANTS[exercise_id]
    passed = _passes(exercise_id, _mutated_cells(name, bodies[mutant]))
    assert len(passed) < len(_tests_of(exercise_id)), (
        f"{exercise_id} mutant {mutant} keeps full marks"
    )


def test_every_exercise_has_mutants_and_the_solution_keeps_full_marks():
    assert sorted(MUTANTS) == [e.id for e in CHAPTER.exercises]
    cells = code_cells(CHAPTER.solution)
    for exercise_id in MUTANTS:
        assert _passes(exercise_id, cells) == [t.name for t in _tests_of(exercise_id)]
