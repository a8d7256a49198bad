"""Chapter 05's graded tests have teeth: every kept wrong answer loses points.

Each mutant (``mutants_05.py``) replaces one exercise's solution region in the solution
notebook; the notebook is loaded and that exercise's tests run on it, as ``check()``
would. The solution itself keeps full marks (``test_exercise_notebooks.py`` checks that).
"""

from __future__ import annotations

import re
import textwrap

import pytest
from mutants_05 import MUTANTS  # (tests/exercises is on sys.path under pytest)

from minitorch import manifest
from minitorch.grading import LocalRunner
from minitorch.grading.notebook import code_cells, load_cells
from minitorch.grading.registry import load_test_module, registered

CHAPTER = manifest.chapter("05")
_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION", re.M | re.S
)


def _mutated_cells(function: str, body: str) -> list[tuple[int, str]]:
    cells = []
    for number, source in code_cells(CHAPTER.solution):
        if re.search(rf"^def {function}\(", source, re.M):
            match = _REGION.search(source)
            indent = match.group("indent")
            code = textwrap.indent(textwrap.dedent(body).strip("\n"), indent)
            source = source[: match.start()] + code + source[match.end() :]
        cells.append((number, source))
    return cells


def _passes(exercise_id: str, cells: list) -> list[str]:
    """The names of ``exercise_id``'s tests that pass on the notebook made of ``cells``."""
    nb = load_cells(cells, "mutant")
    module = load_test_module(CHAPTER.tests)
    passed = []
    for test in registered(module.__name__):
        if test.exercise_id != exercise_id:
            continue
        try:
            test.func(LocalRunner(nb, seed=0))
        except Exception:
            continue
        passed.append(test.name)
    return passed


CASES = [(eid, name) for eid, (_, bodies) in MUTANTS.items() for name in bodies]


@pytest.mark.parametrize("exercise_id, mutant", CASES, ids=[f"{e}-{m}" for e, m in CASES])
def test_every_mutant_loses_points(exercise_id, mutant):
    function, bodies = MUTANTS[exercise_id]
    cells = _mutated_cells(function, bodies[mutant])
    all_tests = [
        t.name
        for t in registered(load_test_module(CHAPTER.tests).__name__)
        if t.exercise_id == exercise_id
    ]
    passed = _passes(exercise_id, cells)
    assert len(passed) < len(all_tests), f"mutant {mutant} of {exercise_id} keeps full marks"


def test_the_unmutated_solution_passes_everything():
    cells = code_cells(CHAPTER.solution)
    for exercise_id in MUTANTS:
        module = load_test_module(CHAPTER.tests)
        wanted = [t.name for t in registered(module.__name__) if t.exercise_id == exercise_id]
        assert _passes(exercise_id, cells) == wanted
