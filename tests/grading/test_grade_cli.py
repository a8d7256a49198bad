"""python -m minitorch.grade: a table and results.json; exit 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize(
    "args, message",
    [
        (["--timeout", "-1"], "error: --timeout must be a number of seconds above 0, got -1.0"),
        (["--timeout", "nan"], "error: --timeout must be a number of seconds above 0"),
        (["--cell-timeout", "0"], "error: --cell-timeout must be a number of seconds above 0"),
        (["--total-timeout", "-5"], "error: --total-timeout must be a number of seconds"),
        (["--jobs", "0"], "error: --jobs must be at least 1, got 0"),
        (["--out", "{file}"], "error: --out {file}: a file, not a folder"),
        (["--roster", "{binary}"], "error: --roster {binary}: a binary file, not a CSV roster"),
        (["--roster", "{nowhere}"], "error: --roster {nowhere}: no such file"),
        (["--adjustments", "{binary}"], "error: --adjustments {binary}: not UTF-8 text"),
        (["--late-penalty", "150"], "error: --late-penalty must be a percentage from 0 to 100"),
        (["--similarity", "0"], "error: --similarity must be a ratio above 0 and at most 1"),
        (["--canvas", " "], "error: --canvas needs the name of the Canvas column"),
        (["--hint-cost", "nan"], "error: --hint-cost must be 0 or more points"),
    ],
)
def test_nonsense_arguments_are_one_line_and_exit_2(
    fixture_course, tmp_path, capsys, args, message
):
    paths = {
        "file": tmp_path / "graded.txt",
        "binary": tmp_path / "roster.csv",
        "nowhere": tmp_path / "none.csv",
    }
    paths["file"].write_text("x")
    paths["binary"].write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    args = [a.format(**paths) for a in args]
    assert main([str(tmp_path), "--chapter", "99", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(message.format(**paths))
    assert captured.err.count("\n") == 1


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "gradescope" in out and "--keep" in out and "--canvas" in out
    assert "check-tests" in out and "new-exercise" in out


# catches: MINITORCH_COURSE pointing at a course whose own manifest differs from the one
# the grader imported (its chapter graded against another manifest, silently)
def test_a_course_folder_with_another_manifest_is_refused(tmp_path, monkeypatch, capsys):
    own = tmp_path / "minitorch" / "course"
    own.mkdir(parents=True)
    (own / "manifest.py").write_text("CHAPTERS = ()\n")
    monkeypatch.setenv("MINITORCH_COURSE", str(tmp_path))
    monkeypatch.setattr(manifest, "ROOT", tmp_path)
    assert main([str(tmp_path / "01_x.ipynb"), "--chapter", "01"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: MINITORCH_COURSE={tmp_path} has its own manifest")
    assert err.count("\n") == 1
    (own / "manifest.py").write_bytes(Path(manifest.__file__).read_bytes())
    assert manifest.course_mismatch() is None


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
