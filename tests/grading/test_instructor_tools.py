"""The instructor's tools around the grader: ``check-tests`` (do private tests have teeth?)
and ``new-exercise`` (an exercise's skeleton in every place an exercise lives)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import nbformat
from grading_fixtures import GOOD_CELLS, build_notebook, fixture_chapter

from minitorch.course import check_tests, manifest, scaffold
from minitorch.course.grading.registry import load_test_module, registered

PRIVATE = """
from minitorch.course.grading import exercise, probe


@probe
def add_of(nb, a, b):
    return nb.add(a, b)


@exercise("99.1")
def test_good(run):
    assert run(add_of, 4, 5) == 9


@exercise("99.1")
def test_toothless(run):
    run(add_of, 4, 5) if False else None


@exercise("99.1")
def test_wrong(run):
    assert run(add_of, 1, 1) == 3, "expects 3"
"""


# catches: a private test that cannot fail (passes on the blank notebook) or that fails
# the solution going into a class's grades unreported
def test_check_tests_names_each_private_test_without_teeth(tmp_path):
    chapter = fixture_chapter(tmp_path)
    build_notebook(chapter.solution, list(GOOD_CELLS))
    blank = [f"def {n}(*args):\n    raise NotImplementedError" for n in ("add", "mul", "greet")]
    build_notebook(chapter.exercise_notebook, blank)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "test_private.py").write_text(PRIVATE, encoding="utf-8")
    problems = check_tests.check(chapter, [tmp_path / "private"])
    assert len(problems) == 2, problems
    assert any("test_toothless: passed on the blank notebook" in p for p in problems)
    assert any("test_wrong: failed on the solution: expects 3" in p for p in problems)
    assert not any("test_good" in p for p in problems)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def _fields(exercises) -> list[tuple]:
    return [(e.id, e.title, e.points, e.pieces) for e in exercises]


# catches: a scaffold that breaks the manifest, misnumbers the exercise, puts its cells
# after the at-work section, or writes a judge that passes before anyone wrote it
def test_new_exercise_writes_the_manifest_entry_cells_and_a_failing_judge(tmp_path):
    chapter = manifest.chapter("03")
    source = tmp_path / "manifest_copy.py"
    shutil.copy(manifest.__file__, source)
    exercise = manifest.Exercise(scaffold.next_id(chapter), "Weight decay", 3)
    scaffold.add_to_manifest(source, chapter, exercise)
    edited = _load(source, "manifest_copy")
    assert _fields(edited.chapter("03").exercises) == _fields((*chapter.exercises, exercise))
    assert exercise.id == f"03.{len(chapter.exercises) + 1}"
    others = [_fields(c.exercises) for c in manifest.CHAPTERS if c.id != "03"]
    assert [_fields(c.exercises) for c in edited.CHAPTERS if c.id != "03"] == others

    notebook = tmp_path / "solution.ipynb"
    shutil.copy(chapter.solution, notebook)
    scaffold.add_to_solution(notebook, exercise, "weight_decay")
    cells = nbformat.read(notebook, as_version=4).cells
    at = next(i for i, c in enumerate(cells) if c.source.startswith(f"## {exercise.id} "))
    assert "### BEGIN SOLUTION" in cells[at + 1].source
    assert cells[at + 2].source == f'check("{exercise.id}")'
    later = [c.source for c in cells[:at] if c.cell_type == "markdown"]
    assert not any(s.startswith("## Your framework at work") for s in later)

    tests = tmp_path / "test_copy.py"
    shutil.copy(chapter.tests, tests)
    with tests.open("a") as f:
        f.write(scaffold.judge_stub(exercise.id, "weight_decay"))
    module = load_test_module(tests)
    new = [t for t in registered(module.__name__) if t.exercise_id == exercise.id]
    assert [t.name for t in new] == ["test_weight_decay"]


def test_new_exercise_private_writes_an_instructors_own_test(tmp_path, capsys):
    folder = tmp_path / "private"
    args = ["--chapter", "03", "--title", "Weight decay!", "--points", "2"]
    assert scaffold.main([*args, "--private", str(folder)]) == 0
    assert scaffold.main([*args, "--private", str(folder)]) == 0  # the next id, not the same
    files = sorted(p.name for p in folder.glob("test_*.py"))
    n = len(manifest.chapter("03").exercises)
    assert set(files) == {f"test_03_{n + 1}_weight_decay.py", f"test_03_{n + 2}_weight_decay.py"}
    files = [f"test_03_{n + 1}_weight_decay.py"]
    text = (folder / files[0]).read_text()
    assert f"@exercise(\"03.{n + 1}\", title='Weight decay!', points=2)" in text
    assert "raise AssertionError" in text
