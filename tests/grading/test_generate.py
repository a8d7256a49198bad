"""The generator: solutions/ -> exercises/, solution regions replaced, outputs cleared."""

from __future__ import annotations

import nbformat
import pytest
from grading_fixtures import build_notebook, fixture_chapter, solution_cells

from minitorch.course import generate, manifest
from minitorch.course.generate import (
    SolutionMarkerError,
    exercise_text,
    generate_notebook,
    leaked_lines,
    render,
    solution_regions,
)
from minitorch.course.notebook import normalize_metadata


@pytest.fixture
def solution(tmp_path) -> nbformat.NotebookNode:
    path = build_notebook(tmp_path / "solutions" / "99_fixture.ipynb", solution_cells())
    nb = nbformat.read(path, as_version=4)
    nb.metadata["widgets"] = {"state": "dropped"}
    return nb


def test_regions_become_one_raise_at_the_markers_indentation(solution):
    exercise = generate_notebook(solution)
    sources = [cell.source for cell in exercise.cells]
    assert sources[2] == 'def add(a, b):\n    raise NotImplementedError("hint: use the + operator")'
    assert sources[4] == (
        'def mul(a, b):\n    raise NotImplementedError("write your solution here")\n\n\nmul(2, 3)'
    )
    assert sources[5] == 'raise NotImplementedError("write your solution here")'
    assert sources[0] == "# Fixture exercises" and sources[3] == "check('99.1')"


def test_outputs_counts_and_execution_metadata_are_cleared(solution):
    exercise = generate_notebook(solution)
    add = exercise.cells[2]
    assert add.outputs == [] and add.execution_count is None
    assert "execution" not in add.metadata
    assert exercise.metadata == normalize_metadata(nbformat.v4.new_notebook()).metadata
    assert [cell.id for cell in exercise.cells] == [cell.id for cell in solution.cells]
    assert solution.cells[2].outputs != []  # the solution is left as it was


def test_cells_with_a_region_are_tagged_raises_exception(solution):
    tags = [cell.metadata.get("tags", []) for cell in generate_notebook(solution).cells]
    assert tags == [
        [],
        [],
        ["keep-me", "raises-exception"],
        [],
        ["raises-exception"],
        ["raises-exception"],
    ]


def test_the_output_is_byte_for_byte_stable(solution, tmp_path):
    first = render(generate_notebook(solution))
    assert render(generate_notebook(solution)) == first
    path = tmp_path / "solutions" / "99_fixture.ipynb"
    assert exercise_text(path) == exercise_text(path)
    nbformat.validate(nbformat.reads(first, as_version=4))


def test_a_hint_with_quotes_is_still_valid_python(solution):
    solution.cells[2].source = solution.cells[2].source.replace(
        "hint: use the + operator", "use \"+\" and 'sum'"
    )
    source = generate_notebook(solution).cells[2].source
    assert "raise NotImplementedError('use \"+\" and \\'sum\\'')" in source
    compile(source, "cell", "exec")


def test_solution_regions_and_leaks(solution):
    assert solution_regions(solution) == [
        "    total = a + b\n    return total",
        "    product = a * b\n    return product",
        'def greet(name):\n    return f"hello {name}"',
    ]
    exercise = generate_notebook(solution)
    assert leaked_lines(solution, exercise) == []
    exercise.cells[3].source += "\ntotal = a + b"
    assert leaked_lines(solution, exercise) == ["total = a + b"]


@pytest.mark.parametrize(
    "source, message",
    [
        (
            "x = 1\n### END SOLUTION",
            "cell 3, line 2: ### END SOLUTION without a ### BEGIN SOLUTION",
        ),
        (
            "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
            "cell 3, line 2: ### BEGIN SOLUTION inside the region opened on line 1",
        ),
        (
            "def f():\n    ### BEGIN SOLUTION\n    pass",
            "cell 3, line 2: ### BEGIN SOLUTION is never closed",
        ),
        ("## BEGIN SOLUTION\npass", "cell 3, line 1: malformed marker '## BEGIN SOLUTION'"),
    ],
)
def test_unpaired_markers_name_the_notebook_and_cell(solution, source, message):
    solution.cells[2].source = source
    with pytest.raises(SolutionMarkerError) as caught:
        generate_notebook(solution, name="solutions/99_fixture.ipynb")
    assert str(caught.value).startswith(f"solutions/99_fixture.ipynb, {message}")


def test_write_and_check_over_the_chapters(tmp_path, monkeypatch, capsys):
    chapter = fixture_chapter(tmp_path)
    build_notebook(chapter.solution, solution_cells())
    monkeypatch.setattr(manifest, "CHAPTERS", (chapter,))
    assert generate.stale() == [chapter.exercise_notebook]
    assert generate.main(["--check"]) == 1
    assert "run `make exercises`" in capsys.readouterr().out
    assert generate.main([]) == 0
    assert chapter.exercise_notebook.read_text() == exercise_text(chapter.solution)
    assert generate.write() == []  # nothing changed: nothing written
    assert generate.main(["--check"]) == 0
    chapter.exercise_notebook.write_text(chapter.exercise_notebook.read_text().replace("hint", "h"))
    assert generate.stale() == [chapter.exercise_notebook]


def test_a_marker_error_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    chapter = fixture_chapter(tmp_path)
    build_notebook(chapter.solution, ["### END SOLUTION"])
    monkeypatch.setattr(manifest, "CHAPTERS", (chapter,))
    assert generate.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cell 1, line 1: ### END SOLUTION without" in err
    assert err.count("\n") == 1


def test_the_chapter_is_written_into_the_exercise_notebooks_metadata():
    chapter = manifest.chapter("02")
    exercise = nbformat.reads(exercise_text(chapter.solution), as_version=4)
    assert exercise.metadata["minitorch"] == {"chapter": "02"}
