"""python -m minitorch.grade: a table and results.json; exit 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from grading_fixtures import ADD, GREET, MUL, fixture_chapter

from minitorch.course import manifest
from minitorch.grade import main


@pytest.fixture
def fixture_course(monkeypatch):
    monkeypatch.setattr(manifest, "CHAPTERS", (fixture_chapter(),))


def test_grading_prints_the_table_and_writes_results_json(
    fixture_course, make_notebook, tmp_path, capsys
):
    notebook = make_notebook(ADD, "def mul(a, b):\n    return 0", GREET)
    results = tmp_path / "results.json"
    assert main([str(notebook), "--json", str(results), "--timeout", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("99_fixture.ipynb (chapter 99): 4/6 points, 2 of 3 exercises passed")
    assert "99.2   Multiply two numbers  1/3     failed           mul(2, 3) returned 0" in out
    assert "TOTAL" in out and f"wrote {results}" in out
    data = json.loads(results.read_text())
    assert (data["score"], data["max_score"]) == (4, 6)


def test_the_chapter_can_be_given(fixture_course, make_notebook, capsys):
    notebook = make_notebook(ADD, MUL, GREET, name="submission.ipynb")
    assert main([str(notebook), "--chapter", "99"]) == 0
    assert "6/6 points" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.ipynb"], "error: no notebook missing.ipynb"),
        (["{nb}", "--chapter", "42"], "error: no chapter '42'; the chapters are: 99_fixture"),
        (["{bad}"], "error: {bad} is not a Jupyter notebook: "),
        (["{other}"], "error: cannot tell the chapter of 'homework.ipynb'"),
        (["{nb}", "--tests", "nowhere"], "error: no test folder nowhere"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    fixture_course, make_notebook, tmp_path, capsys, args, message
):
    paths = {
        "nb": make_notebook(ADD),
        "bad": tmp_path / "99_bad.ipynb",
        "other": make_notebook(ADD, name="homework.ipynb"),
    }
    paths["bad"].write_text("{")
    args = [a.format(**paths) for a in args]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message.format(**paths))
    assert captured.err.count("\n") == 1


def test_the_module_runs_as_a_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "minitorch.grade", str(tmp_path / "01_nothing.ipynb")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == f"error: no notebook {tmp_path / '01_nothing.ipynb'}\n"


def test_the_chapter_comes_from_the_notebooks_metadata(tmp_path, capsys):
    renamed = tmp_path / "my homework.ipynb"
    renamed.write_bytes(manifest.chapter("01").exercise_notebook.read_bytes())
    assert main([str(renamed), "--timeout", "10"]) == 0
    assert "my homework.ipynb (chapter 01): 0/20 points" in capsys.readouterr().out


def test_a_notebook_of_no_chapter_names_the_option(make_notebook, capsys):
    assert main([str(make_notebook(ADD, name="homework.ipynb"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot tell the chapter of 'homework.ipynb'")
    assert "--chapter" in err and err.count("\n") == 1


def test_reasons_are_never_cut_when_the_output_is_not_a_terminal(
    fixture_course, make_notebook, capsys
):
    long_reason = "x" * 150
    wrong = f"def mul(a, b):\n    raise ValueError({long_reason!r})"
    assert main([str(make_notebook(ADD, wrong, GREET)), "--timeout", "5"]) == 0
    out = capsys.readouterr().out
    assert f"ValueError: {long_reason} (in `mul`, line 2 of notebook cell 2)" in out


def test_a_failure_in_the_learners_code_points_at_the_learners_line(
    fixture_course, make_notebook, capsys
):
    helper = "def helper(x):\n    y = x\n    return y[5]"
    wrong = "def mul(a, b):\n    return helper([a])"
    assert main([str(make_notebook(ADD, helper, wrong, GREET)), "--timeout", "5"]) == 0
    out = capsys.readouterr().out
    assert "IndexError: list index out of range (in `helper`, line 3 of notebook cell 2)" in out
    assert "test_" not in out.split("99.2", 1)[1].split("\n", 1)[0]
