"""The teeth checks, run on the fixture chapter: they pass, and they catch what they should."""

from __future__ import annotations

from pathlib import Path

import pytest
from grading_fixtures import FIXTURE_TESTS, build_notebook, fixture_chapter, solution_cells

from minitorch.course.generate import exercise_text
from minitorch.course.grading import grade
from minitorch.course.grading.audit import exercise_problems, id_problems, solution_problems

TOOTHLESS = """\
from minitorch.course.grading import exercise, probe


@probe
def has_add(nb):
    return callable(nb.add)


@exercise("99.1")
def test_add_exists(run):
    assert run(has_add)  # true even on the blank notebook: a test without teeth
"""


@pytest.fixture
def chapter(tmp_path: Path):
    chapter = fixture_chapter(tmp_path)
    build_notebook(chapter.solution, solution_cells())
    chapter.exercise_notebook.parent.mkdir()
    chapter.exercise_notebook.write_text(exercise_text(chapter.solution))
    return chapter


def test_the_fixture_chapter_has_teeth(chapter):
    solved = grade(chapter.solution, chapter=chapter, timeout=5)
    assert solution_problems(solved) == []
    assert solved.score == solved.max_score == 6
    blank = grade(chapter.exercise_notebook, chapter=chapter, timeout=5)
    assert exercise_problems(blank) == []
    assert blank.score == 0 and {r.status for r in blank.results} == {"not implemented"}
    # greet's region was the whole cell: the name is missing, and that is "not implemented"
    assert blank.result("99.3").reason == (
        "`greet` is not defined: cells 5 and 6 still raise NotImplementedError; "
        "replace those raises with your code"
    )
    assert id_problems(chapter) == []


def test_a_test_that_passes_on_the_blank_notebook_is_caught(chapter, tmp_path: Path):
    toothless = tmp_path / "test_toothless.py"
    toothless.write_text(TOOTHLESS)
    blank = grade(chapter.exercise_notebook, chapter=chapter, test_files=[FIXTURE_TESTS, toothless])
    assert exercise_problems(blank) == [
        "99.1: not implemented with 0.67 points on the blank notebook",
        "99.1 test_add_exists: passed on the blank notebook "
        "(every test must fail there with NotImplementedError)",
    ]


def test_a_failing_solution_is_caught(chapter, make_notebook):
    wrong = make_notebook("def add(a, b):\n    return a - b", "def mul(a, b):\n    return a * b")
    problems = solution_problems(grade(wrong, chapter=chapter, timeout=5))
    assert problems[0] == "99.1 test_add_small_numbers: failed: add(2, 3) returned -1, expected 5"
    assert problems[-1].startswith("99.3 test_greet: error: the notebook defines no `greet`")


def test_ids_must_match_the_manifest(chapter, tmp_path: Path):
    module = tmp_path / "test_ids.py"
    module.write_text(
        "from minitorch.course.grading import exercise\n\n"
        "@exercise('99.1')\ndef test_add(run):\n    pass\n\n"
        "@exercise('99.7')\ndef test_stray(run):\n    pass\n\n"
        "def test_undecorated(run):\n    pass\n"
    )
    assert id_problems(chapter, module) == [
        "test_ids.py: `test_stray` grades '99.7', which is not in chapter 99's manifest",
        "test_ids.py: exercise 99.2 (Multiply two numbers) has no test",
        "test_ids.py: exercise 99.3 (Greet someone) has no test",
        "test_ids.py: `test_undecorated` has no @exercise(...) decorator",
    ]
