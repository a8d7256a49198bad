"""hint("99.2"): the next level on request, recorded in the notebook, read by the grader into
results.json, the gradebook and the feedback; check() says a hint exists after two misses."""

from __future__ import annotations

import csv
import json

import nbformat
import pytest
from grading_fixtures import GOOD_CELLS, build_notebook, fixture_chapter, markdown

from minitorch.course import batch, hints, manifest
from minitorch.course.grading import grade
from minitorch.course.grading.check import _not_passed
from minitorch.grade import main

FIXTURE_HINTS = """# Chapter 99 hints

## 99.1

### 1

Adding is what `+` does (lesson, section 1).

### 2

Return the sum.

### 3

One line.

## 99.2

### 1

The idea of 99.2.

### 2

The approach of 99.2.

### 3

The last step of 99.2.
"""


@pytest.fixture(autouse=True)
def fixture_course(monkeypatch, tmp_path):
    """The fixture chapter is the course's only chapter, and its hints file is ours."""
    monkeypatch.setattr(manifest, "CHAPTERS", (fixture_chapter(tmp_path),))
    folder = tmp_path / "hints"
    folder.mkdir()
    (folder / "99_fixture.md").write_text(FIXTURE_HINTS, encoding="utf-8")
    monkeypatch.setattr(hints, "FOLDER", folder)
    monkeypatch.setattr(hints, "_shown", {})
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    _not_passed.clear()


def test_each_call_shows_the_next_level_and_records_it():
    # catches: a hint that repeats level 1, skips ahead, or leaves no record in the output
    first = hints.hint("99.2")
    assert (first.level, first.of, first.text) == (1, 3, "The idea of 99.2.")
    data, metadata = first._repr_mimebundle_()
    assert metadata == {"minitorch": {"hint": "99.2", "level": 1, "shown": [1]}}
    assert "Hint 1 of 3 for 99.2 (the idea)" in data["text/markdown"]
    assert 'hint("99.2") again shows level 2.' in data["text/plain"]
    second = hints.hint("99.2")
    assert second.level == 2  # its record keeps level 1: re-running a cell replaces its output
    assert second.record() == {"minitorch": {"hint": "99.2", "level": 2, "shown": [1, 2]}}
    last = hints.hint("99.2")
    assert (last.level, last.footer) == (3, "That was the last hint for this exercise.")
    assert hints.hint("99.2").level == 3  # after the last, the last again
    assert hints.hint("99.1", level=2).text == "Return the sum."
    assert hints.shown("99.2") == [1, 2, 3] and hints.shown("99.1") == [2]


def test_bad_requests_say_what_exists():
    # catches: an unknown id or level failing with a KeyError/IndexError instead of a message
    with pytest.raises(ValueError, match="no exercise '42.1' in the course; the exercises are"):
        hints.hint("42.1")
    with pytest.raises(ValueError, match="exercise 99.3 has no hints written yet"):
        hints.hint("99.3")
    with pytest.raises(ValueError, match="has hint levels 1 to 3, not 4"):
        hints.hint("99.1", level=4)


def test_the_saved_notebook_continues_the_count(tmp_path, monkeypatch):
    # catches: a restarted kernel starting again at level 1 although the notebook shows 2
    path = _notebook_with_hints(tmp_path / "nb.ipynb", [("99.2", 1), ("99.2", 2)])
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    assert hints.hint("99.2").level == 3


def test_the_hints_file_format_is_checked():
    # catches: a hints file whose levels are out of order being read silently wrong
    with pytest.raises(ValueError, match="99.1: levels must be ### 1, ### 2, ... in order"):
        hints.parse("## 99.1\n\n### 2\n\ntext\n")


def test_opened_in_reads_only_well_formed_records():
    # catches: a hostile or hand-edited notebook crashing the grader, or a forged bad level
    good = {
        "output_type": "display_data",
        "data": {},
        "metadata": {"minitorch": {"hint": "99.1", "level": 2}},
    }
    odd = [
        {"metadata": "not a dict"},
        {"metadata": {"minitorch": {"hint": 3, "level": 1}}},
        {"metadata": {"minitorch": {"hint": "99.1", "level": 99}}},
        "not an output",
    ]
    later = {"metadata": {"minitorch": {"hint": "99.2", "level": 3, "shown": [1, 3, "x", 0]}}}
    notebook = {"cells": [{"outputs": [good, *odd, later]}, {"outputs": None}, "not a cell"]}
    assert hints.opened_in(notebook) == {"99.1": [2], "99.2": [1, 3]}
    assert hints.opened_in({"cells": "nope"}) == {} and hints.opened_in([]) == {}
    assert hints.describe({"99.1": [1, 2, 3], "99.2": [2]}) == "99.1: 1-3; 99.2: 2"


def _run_check(code: str):
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code, "<kernel cell>", "exec"), namespace)
    exec("from minitorch.course.grading import check\nr = check('99.2', timeout=0.5)", namespace)
    return namespace["r"]


def test_check_mentions_the_hint_after_the_second_miss_and_reports_opened_levels():
    # catches: a nudge on the first failure (or never), and check() forgetting the hints
    wrong = "def mul(a, b):\n    return a + b"
    assert repr(_run_check(wrong)).count("\n") == 0  # first miss: the result line alone
    second = repr(_run_check(wrong))
    assert second.endswith('stuck? hint("99.2") shows a hint, one level at a time (3 levels)')
    hints.hint("99.2")
    assert repr(_run_check(wrong)).endswith("(hints opened: 1)")
    passed = _run_check("def mul(a, b):\n    return a * b")
    assert passed.passed and repr(passed).endswith("hints opened: 1")


def _notebook_with_hints(path, shown):
    """The fixture's solved notebook, with hint() outputs for ``shown`` (id, level) pairs."""
    cells = [markdown("# Fixture"), *GOOD_CELLS]
    for exercise_id, level in shown:
        cell = nbformat.v4.new_code_cell(f'hint("{exercise_id}")')
        data = {"text/plain": f"Hint {level}", "text/markdown": f"**Hint {level}**"}
        output = nbformat.v4.new_output("display_data", data=data)
        output.metadata = {"minitorch": {"hint": exercise_id, "level": level}}
        cell.outputs = [output]
        cells.append(cell)
    return build_notebook(path, cells)


def test_the_grader_records_opened_hints_and_charges_only_when_asked(tmp_path):
    # catches: hints lost between the notebook and results.json, a cost charged by default,
    # a cost that takes an exercise below 0 or charges an exercise that earned nothing
    path = _notebook_with_hints(tmp_path / "nb.ipynb", [("99.1", 1), ("99.2", 1), ("99.2", 2)])
    chapter = fixture_chapter(tmp_path)
    free = grade(path, chapter=chapter, seed=1)
    assert free.hints == {"99.1": [1], "99.2": [1, 2]} and free.score == free.max_score
    assert "Hints opened: 99.1: 1; 99.2: 1-2" in free.text()
    results = free.to_gradescope()
    assert results["hints"] == {"99.1": [1], "99.2": [1, 2]} and results["hint_cost"] == 0.0
    charged = grade(path, chapter=chapter, seed=1, hint_cost=1.5)
    assert [r.score for r in charged.results] == [0.5, 0.0, 1.0]
    assert charged.results[0].reason == "hints 1: -1.5"
    assert charged.results[1].reason == "hints 1-2: -3"
    assert "Hints opened (1.5 points a level): 99.1: 1; 99.2: 1-2" in charged.text()


def test_the_class_gradebook_and_feedback_show_the_hints(tmp_path, capsys):
    # catches: an instructor who cannot see, per student, which hints were opened
    folder = tmp_path / "class"
    _notebook_with_hints(folder / "ann_1_2_hw.ipynb", [("99.2", 1)])
    build_notebook(folder / "bob_3_4_hw.ipynb", [markdown("# Fixture"), *GOOD_CELLS])
    out = tmp_path / "out"
    rows = batch.grade_class([folder], manifest.CHAPTERS[0], out, hint_cost=0.5, progress=str)
    assert {r["student"]: r["hints"] for r in rows} == {"ann_1": "99.2: 1", "bob_3": ""}
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        book = {row["student"]: row for row in csv.DictReader(f)}
    assert (book["ann_1"]["hints"], book["ann_1"]["99.2"], book["ann_1"]["total"]) == (
        "99.2: 1",
        "2.5",
        "5.5",
    )
    feedback = (out / "ann_1" / "feedback.md").read_text()
    assert "Hints opened (0.5 points a level): 99.2: 1" in feedback
    assert json.loads((out / "bob_3" / "results.json").read_text())["hints"] == {}


def test_the_command_refuses_a_negative_cost(tmp_path, capsys):
    # catches: a negative cost that would add points
    path = _notebook_with_hints(tmp_path / "nb.ipynb", [])
    assert main([str(path), "--chapter", "99", "--hint-cost", "-1"]) == 2
    assert "--hint-cost must be 0 or more points, got -1.0" in capsys.readouterr().err
