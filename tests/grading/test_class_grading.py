"""Grading a class: a folder of submissions into a gradebook, feedback and a class summary."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from minitorch.course import manifest
from minitorch.course.batch import find_submissions, student_id
from minitorch.grade import main

CH01 = manifest.chapter("01")


def _class_folder(tmp_path: Path) -> Path:
    """A class as Canvas and Gradescope export it: solved, blank, broken and stray files."""
    folder = tmp_path / "submissions"
    (folder / "submission_777").mkdir(parents=True)
    shutil.copy(CH01.solution, folder / "doejane_12345_678901_01_tensors_exercises.ipynb")
    shutil.copy(CH01.exercise_notebook, folder / "smithbob_LATE_222_333_hw1.ipynb")
    (folder / "leeann_444_555_hw1.ipynb").write_text("{ not json", encoding="utf-8")
    shutil.copy(manifest.chapter("02").exercise_notebook, folder / "submission_777" / "hw.ipynb")
    (folder / "kimsam_666_777_screenshot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / ".DS_Store").write_bytes(b"")
    return folder


def _gradebook(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


# catches: a batch that stops at a broken file, a status that does not say why a
# submission got 0 (not a notebook, wrong chapter, missing), student ids lost, points of
# the wrong exercise in a column, a roster student without a submission left out
def test_a_class_is_graded_in_parallel_into_a_gradebook(tmp_path):
    folder = _class_folder(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "id,name,email\n12345,Jane Doe,jane@uni.edu\n222,Bob Smith,bob@uni.edu\n"
        "999,Nora None,nora@uni.edu\n",
        encoding="utf-8",
    )
    out = tmp_path / "graded"
    args = [str(folder), "--chapter", "01", "--out", str(out), "--jobs", "2"]
    assert main([*args, "--roster", str(roster), "--seed", "7"]) == 0
    book = _gradebook(out)
    assert set(book) == {
        "doejane_12345", "smithbob_222", "leeann_444", "submission_777", "kimsam_666", "999",
    }  # fmt: skip
    jane = book["doejane_12345"]
    assert (jane["status"], jane["total"], jane["max"]) == ("graded", "20", "20")
    assert [jane[e.id] for e in CH01.exercises] == [str(e.points) for e in CH01.exercises]
    assert (jane["name"], jane["email"], jane["seed"]) == ("Jane Doe", "jane@uni.edu", "7")
    assert (book["smithbob_222"]["status"], book["smithbob_222"]["total"]) == ("graded", "0")
    assert book["leeann_444"]["status"] == "not a notebook"
    assert "not valid JSON" in book["leeann_444"]["reason"]
    assert book["kimsam_666"]["status"] == "not a notebook"
    assert book["submission_777"]["status"] == "wrong chapter"
    assert "chapter 02" in book["submission_777"]["reason"]
    assert (book["999"]["status"], book["999"]["name"]) == ("missing", "Nora None")
    for student in ("doejane_12345", "smithbob_222", "leeann_444", "submission_777"):
        results = json.loads((out / student / "results.json").read_text())
        assert "score" in results and "output" in results
        assert (out / student / "feedback.md").read_text().startswith("# Chapter 01")
    feedback = (out / "smithbob_222" / "feedback.md").read_text()
    assert "| 01.7 Sum along a dim over raw storage | 0/5 | failed |" in feedback
    assert "still raises NotImplementedError" in feedback


# catches: a summary without per-exercise figures, failures not grouped (the same mistake
# on different inputs counted as different ones), the picture missing
def test_the_class_summary_says_how_each_exercise_went(tmp_path):
    folder = _class_folder(tmp_path)
    out = tmp_path / "graded"
    assert main([str(folder), "--chapter", "01", "--out", str(out)]) == 0
    summary = (out / "summary.md").read_text()
    assert "5 students: 2 graded, 2 not a notebook, 1 wrong chapter." in summary
    assert "Mean total 6.67 of 20 points over the 3 notebooks graded" in summary
    assert "| 01.1 | Strides of a contiguous shape | 2 | 0.67 | 33% |" in summary
    assert "## Slowest submissions" in summary and "## Not graded" in summary
    assert (out / "summary.png").read_bytes()[:4] == b"\x89PNG"


# catches: a regrade that throws the other exercises' results away, draws new inputs
# (another seed), or keeps the old result of the regraded exercise
def test_regrading_one_exercise_keeps_the_rest_and_the_seed(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    submission = folder / "doejane_12345_678901_hw.ipynb"
    shutil.copy(CH01.solution, submission)
    out = tmp_path / "graded"
    assert main([str(folder), "--chapter", "01", "--out", str(out)]) == 0
    first = json.loads((out / "doejane_12345" / "results.json").read_text())
    shutil.copy(CH01.exercise_notebook, submission)  # 01.1 is now blank
    assert main([str(folder), "--chapter", "01", "--out", str(out), "--exercise", "01.1"]) == 0
    again = json.loads((out / "doejane_12345" / "results.json").read_text())
    assert again["seed"] == first["seed"]
    by_id = {t["number"]: t for t in again["tests"]}
    assert by_id["01.1"]["score"] == 0 and by_id["01.7"]["score"] == 5
    assert [t["number"] for t in again["tests"]] == [e.id for e in CH01.exercises]
    assert again["score"] == 18 and "Regraded 01.1" in again["output"]
    assert _gradebook(out)["doejane_12345"]["total"] == "18"


def test_regrading_one_exercise_of_one_notebook_keeps_its_results_json(tmp_path, capsys):
    notebook = tmp_path / "01_tensors_exercises.ipynb"
    shutil.copy(CH01.solution, notebook)
    results = tmp_path / "results.json"
    assert main([str(notebook), "--chapter", "01", "--json", str(results)]) == 0
    seed = json.loads(results.read_text())["seed"]
    shutil.copy(CH01.exercise_notebook, notebook)
    args = [str(notebook), "--chapter", "01", "--json", str(results), "--exercise", "01.2"]
    assert main(args) == 0
    data = json.loads(results.read_text())
    assert (data["score"], data["seed"]) == (18, seed)
    assert main([*args[:-1], "09.9"]) == 2
    assert "chapter 01 has no exercise 09.9" in capsys.readouterr().err


# catches: a notebook of another chapter graded silently as this one ("defines no ..."
# six times with no word of what happened)
def test_a_notebook_of_another_chapter_is_said_plainly(tmp_path, capsys):
    notebook = tmp_path / "submission.ipynb"
    shutil.copy(manifest.chapter("02").exercise_notebook, notebook)
    assert main([str(notebook), "--chapter", "01"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("WRONG CHAPTER: this notebook's metadata says chapter 02")
    assert "graded as chapter 01" in out


@pytest.mark.parametrize(
    "name, expected",
    [
        ("doejane_12345_678901_01_tensors_exercises.ipynb", "doejane_12345"),
        ("DoeJane_LATE_12345_678901_hw.ipynb", "doejane_12345"),
        ("submission_4242/anything.ipynb", "submission_4242"),
        ("alice.ipynb", "alice"),
    ],
)
def test_student_ids_come_from_the_platforms_export_names(tmp_path, name, expected):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    assert student_id(path) == expected
    assert [s.student for s in find_submissions([tmp_path])] == [expected]


def test_two_files_of_one_student_are_one_student_newest_last(tmp_path):
    for name in ("doejane_1_3_b.ipynb", "doejane_LATE_1_12_a.ipynb", "doejane_1_2_c.ipynb"):
        (tmp_path / name).write_text("{}")
    subs = find_submissions([tmp_path])
    assert {s.student for s in subs} == {"doejane_1"} and len({s.key for s in subs}) == 1
    newest = max(subs, key=lambda s: s.order)
    assert (newest.path.name, newest.late) == ("doejane_LATE_1_12_a.ipynb", True)


def test_a_class_needs_a_chapter_and_an_output_folder(tmp_path, capsys):
    assert main([str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "needs --chapter" in capsys.readouterr().err
    assert main([str(tmp_path / "nowhere"), "--chapter", "01", "--out", str(tmp_path)]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    args = [str(tmp_path), "--chapter", "01", "--out", str(tmp_path / "o"), "--jobs", "0"]
    assert main(args) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
