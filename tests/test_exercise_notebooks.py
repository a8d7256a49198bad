"""The exercise notebooks are generated, leak nothing, and the graded tests have teeth.

For every chapter in the manifest:

1. exercises/NN_*.ipynb is exactly what the generator makes from solutions/NN_*.ipynb;
2. no line of a solution region appears in the exercise notebook;
3. grading the solution gives full marks with every test passed, and grading the blank
   exercise notebook gives zero, every test failing as "not implemented";
4. the chapter's test module and the manifest agree on the exercise ids.
"""

from __future__ import annotations

import nbformat
import pytest

from minitorch.course import manifest
from minitorch.course.generate import exercise_text, leaked_lines
from minitorch.course.grading import grade
from minitorch.course.grading.audit import exercise_problems, id_problems, solution_problems

CHAPTERS = [pytest.param(ch, id=ch.stem) for ch in manifest.CHAPTERS]


def _require(path) -> None:
    if not path.exists():
        pytest.fail(f"{path.relative_to(manifest.ROOT)} does not exist", pytrace=False)


def _problems(title: str, problems: list[str]) -> str:
    return title + "\n" + "\n".join(f"  - {p}" for p in problems)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_exercise_notebook_is_generated_from_the_solution(chapter: manifest.Chapter):
    _require(chapter.solution)
    target = chapter.exercise_notebook
    assert target.exists(), f"{target.name} is missing: run `make exercises`"
    assert target.read_text(encoding="utf-8") == exercise_text(chapter.solution), (
        f"exercises/{target.name} is stale or was edited by hand: edit "
        f"solutions/{chapter.solution.name} instead and run `make exercises`"
    )


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_solution_text_leaks_into_the_exercise(chapter: manifest.Chapter):
    _require(chapter.solution)
    _require(chapter.exercise_notebook)
    solution = nbformat.read(chapter.solution, as_version=4)
    exercise = nbformat.read(chapter.exercise_notebook, as_version=4)
    leaked = leaked_lines(solution, exercise)
    assert not leaked, _problems(
        f"solution lines found in {chapter.exercise_notebook.name}:", leaked
    )


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_graded_test_passes_on_the_solution(chapter: manifest.Chapter):
    _require(chapter.solution)
    report = grade(chapter.solution, chapter=chapter)
    problems = solution_problems(report)
    assert not problems, _problems(f"on {chapter.solution.name}:", problems)
    assert report.score == report.max_score == chapter.max_score


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_graded_test_fails_on_the_blank_exercise(chapter: manifest.Chapter):
    _require(chapter.exercise_notebook)
    report = grade(chapter.exercise_notebook, chapter=chapter)
    problems = exercise_problems(report)
    assert not problems, _problems(f"on the blank {chapter.exercise_notebook.name}:", problems)
    assert report.score == 0


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_test_ids_match_the_manifest(chapter: manifest.Chapter):
    _require(chapter.tests)
    problems = id_problems(chapter)
    assert not problems, _problems(f"{chapter.tests.name} and the manifest disagree:", problems)
