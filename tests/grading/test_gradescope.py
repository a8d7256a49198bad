"""The Gradescope autograder: the zip built, then run end to end in a folder laid out as
Gradescope's container is (source/, submission/, results/)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from minitorch.course import manifest
from minitorch.grade import main

CH01 = manifest.chapter("01")

PRIVATE_TEST = """
from minitorch.course.grading import exercise, probe


@probe
def strides_of(nb, shape):
    return list(nb.contiguous_strides(shape))


@exercise("01.1")
def test_private_strides_of_a_wide_shape(run):
    assert run(strides_of, (5, 1, 7, 2)) == [14, 14, 2, 1], "contiguous_strides((5, 1, 7, 2))"
"""


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("autograder")
    private = folder / "private"
    private.mkdir()
    (private / "test_private_01.py").write_text(PRIVATE_TEST, encoding="utf-8")
    zip_path = folder / "autograder.zip"
    assert (
        main(["gradescope", "--chapter", "01", "--tests", str(private), "-o", str(zip_path)]) == 0
    )
    return zip_path


def _gradescope_root(tmp_path: Path, zip_path: Path, files: dict[str, bytes | Path]) -> Path:
    """/autograder as Gradescope lays it out: the zip unpacked in source/, run_autograder
    beside it, the upload in submission/."""
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
        for info in zf.infolist():  # zipfile drops the mode bits: put them back
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, stat.S_IMODE(mode))
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    for name, content in files.items():
        target = root / "submission" / name
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_bytes(content)
    return root


def _run(root: Path) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(root / "run_autograder")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


# catches: a zip without Gradescope's two scripts at its top (or not executable), without
# the course it was built from, or without the private tests
def test_the_zip_holds_what_gradescope_runs(autograder):
    with zipfile.ZipFile(autograder) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        info = json.loads(zf.read("autograder.json"))
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "autograder.json"} <= names
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "course/pyproject.toml" in names and "course/minitorch/__init__.py" in names
    assert "course/minitorch/course/grading/grader.py" in names
    assert "course/tests/exercises/test_01_tensors.py" in names
    assert "course/tests/exercises/test_02_autograd.py" not in names
    assert "private/0/test_private_01.py" in names
    assert not any("__pycache__" in n or n.startswith("course/solutions") for n in names)
    assert (info["chapter"], info["private_visibility"]) == ("01", "after_due_date")
    assert info["hint_cost"] == 0.0  # hints are free unless the instructor says otherwise
    assert '"/autograder/source/course[course]"' in setup
    assert "--chapter 01" in run and "AUTOGRADER_ROOT" in run


# catches: an upload under another name not found, private tests shown before the due
# date, no execution time or seed in results.json
def test_a_solved_notebook_under_any_name_gets_full_marks(tmp_path, autograder):
    root = _gradescope_root(tmp_path, autograder, {"My Homework (final).ipynb": CH01.solution})
    results = _run(root)
    assert (results["score"], results["max_score"]) == (20, 20)
    assert results["execution_time"] > 0 and isinstance(results["seed"], int)
    private = [t for t in results["tests"] if t["name"].endswith("(private tests)")]
    assert [t["number"] for t in private] == ["01.1"]
    assert private[0]["visibility"] == "after_due_date" and private[0]["score"] > 0
    public = [t for t in results["tests"] if t not in private]
    assert all(t["visibility"] == "visible" for t in public)
    assert [t["number"] for t in public] == [e.id for e in CH01.exercises]
    for folder in (root / "source" / "private", root / "source" / "course" / "tests"):
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, f"{folder} readable by others"


# catches: before the due date, a visible entry that reveals a private test's verdict
# ("failed: 1 of 1 private test did not pass", or fewer points than the public tests
# earned) or an output that states the total, so that a student resubmits until it passes
def test_before_the_due_date_students_see_only_the_public_tests(tmp_path, autograder):
    import nbformat

    notebook = nbformat.read(CH01.solution, as_version=4)
    cell = next(c for c in notebook.cells if "def contiguous_strides" in c.source)
    cell.source = cell.source.replace(  # wrong only where the private test looks
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n"
        "    if tuple(shape) == (5, 1, 7, 2):\n"
        "        return (0, 0, 0, 0)\n",
    )
    upload = tmp_path / "hw.ipynb"
    nbformat.write(notebook, upload)
    root = _gradescope_root(tmp_path, autograder, {"hw.ipynb": upload})
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(root / "run_autograder")], env=env, capture_output=True, text=True, timeout=300
    )
    results = json.loads((root / "results" / "results.json").read_text())
    visible = [t for t in results["tests"] if t["visibility"] == "visible"]
    hidden = [t for t in results["tests"] if t["visibility"] != "visible"]
    first = next(t for t in visible if t["number"] == "01.1")
    assert first["status"] == "passed" and "private" not in first["output"], first
    assert first["score"] == first["max_score"] > 0
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in visible)
    assert [(t["number"], t["status"], t["score"]) for t in hidden] == [("01.1", "failed", 0)]
    total = f"/{results['max_score']:g} points"
    assert total not in results["output"] and "exercises passed" not in results["output"]
    # the parts add up to the grade, which an instructor sees whole in stdout
    assert sum(t["score"] for t in results["tests"]) == results["score"] < results["max_score"]
    assert "private test" in done.stdout and "01.1" in done.stdout


def test_a_blank_notebook_gets_nothing_and_says_why(tmp_path, autograder):
    root = _gradescope_root(tmp_path, autograder, {"hw.ipynb": CH01.exercise_notebook})
    results = _run(root)
    assert results["score"] == 0
    assert "still raises NotImplementedError" in results["tests"][0]["output"]


# catches: run_autograder crashing (no results.json: Gradescope shows an error to the
# student) on an upload that is no notebook
@pytest.mark.parametrize(
    "files, message",
    [
        ({"answers.py": b"print('hi')\n"}, "No notebook was found in your submission"),
        ({"hw.ipynb": b"{ not a notebook"}, "hw.ipynb was not graded"),
        ({}, "No notebook was found"),
    ],
)
def test_an_upload_that_is_no_notebook_gets_a_message(tmp_path, autograder, files, message):
    results = _run(_gradescope_root(tmp_path, autograder, files))
    assert results["score"] == 0 and results["max_score"] == 20
    assert message in results["output"]


def test_bad_build_options_are_refused(tmp_path, capsys):
    assert main(["gradescope", "--chapter", "42", "-o", str(tmp_path / "a.zip")]) == 2
    assert "42" in capsys.readouterr().err
    args = ["gradescope", "--chapter", "01", "--tests", str(tmp_path / "none")]
    assert main([*args, "-o", str(tmp_path / "a.zip")]) == 2
    assert "no such folder" in capsys.readouterr().err
    args = ["gradescope", "--chapter", "01", "--hint-cost", "-0.5"]
    assert main([*args, "-o", str(tmp_path / "a.zip")]) == 2
    assert "--hint-cost must be 0 or more points, got -0.5" in capsys.readouterr().err
    assert main([*args[:-1], "nan", "-o", str(tmp_path / "a.zip")]) == 2
    assert "--hint-cost must be 0 or more points, got nan" in capsys.readouterr().err
    assert main(["gradescope", "--chapter", "01", "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: -o {tmp_path}: a folder, not a zip file to write\n"
    assert main(["gradescope", "run", "--chapter", "42", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: no chapter '42'")
    assert main(["gradescope", "run", "--chapter", "01", "--root", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == f"error: --root {tmp_path / 'x'}: no such folder\n"


# catches: autograder.json naming a commit while the zip holds uncommitted edits
def test_the_commit_recorded_says_when_the_tree_had_uncommitted_edits(tmp_path):
    from minitorch.course.gradescope import _commit

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    clean = _commit(tmp_path)
    assert clean is not None and len(clean) == 40
    (tmp_path / "a.py").write_text("x = 2\n")
    assert _commit(tmp_path) == f"{clean}-dirty"
    assert _commit(tmp_path / "nowhere") is None
