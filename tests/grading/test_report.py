"""GradeReport: the score table and Gradescope's results.json."""

from __future__ import annotations

import json

from minitorch.course.grading.delegation import DELEGATION_PREFIX
from minitorch.course.grading.namespace import CellFailure
from minitorch.course.grading.report import GradeReport
from minitorch.course.grading.results import ExerciseResult, TestOutcome


def sample_report() -> GradeReport:
    long_reason = "mul(7, 0) returned 1, expected 0 " + "and this goes on and on " * 5
    return GradeReport(
        notebook="99_fixture.ipynb",
        chapter="99",
        chapter_title="A fixture chapter",
        results=[
            ExerciseResult(
                "99.1", "Add two numbers", 2, 2, "passed", "", [TestOutcome("t1", "passed")]
            ),
            ExerciseResult(
                "99.2",
                "Multiply two numbers, a title that is far too long for its column",
                1.33,
                2,
                "failed",
                long_reason,
                [
                    TestOutcome("t2", "passed"),
                    TestOutcome("t3", "failed", "mul(7, 0) returned 1, expected 0"),
                    TestOutcome("t4", "not run", "not run: the exercise stopped before this test"),
                ],
            ),
            ExerciseResult(
                "99.3", "Greet someone", 0, 1, "not implemented", "`greet` still raises"
            ),
        ],
        cell_failures=[CellFailure(4, "raised SyntaxError: invalid syntax (line 2)")],
    )


def test_score_is_the_sum_rounded():
    report = sample_report()
    assert (report.score, report.max_score) == (3.33, 5)


def test_the_table_has_a_row_per_exercise_and_a_total():
    lines = sample_report().table(width=100).splitlines()
    assert lines[0].split() == ["ID", "TITLE", "POINTS", "STATUS", "REASON"]
    assert lines[1] == "99.1   Add two numbers" + " " * 31 + "2/2     passed"
    assert lines[2].startswith(
        "99.2   Multiply two numbers, a title that is far...  1.33/2  failed           mul(7, 0)"
    )
    assert lines[2].endswith("returned...") and 95 < len(lines[2]) <= 100
    assert lines[3].startswith(
        "99.3   Greet someone" + " " * 33 + "0/1     not implemented  `greet`"
    )
    assert lines[4] == "TOTAL" + " " * 48 + "3.33/5"
    assert all(len(line) <= 100 for line in lines)


def test_a_wider_table_shows_more_of_the_reason():
    narrow, wide = (sample_report().table(width=w).splitlines()[2] for w in (100, 160))
    assert len(wide) > len(narrow) and "mul(7, 0) returned 1" in wide


def test_the_text_lists_the_cells_that_failed():
    text = sample_report().text()
    assert text.splitlines()[:2] == [
        "99_fixture.ipynb (chapter 99): 3.33/5 points, 1 of 3 exercises passed",
        "Cells that failed while the notebook loaded:",
    ]
    assert "  cell 4 raised SyntaxError: invalid syntax (line 2)" in text


def test_gradescope_results(tmp_path):
    report = sample_report()
    path = tmp_path / "results.json"
    report.write_json(path)
    data = json.loads(path.read_text())
    assert data == report.to_gradescope()
    assert (data["score"], data["max_score"]) == (3.33, 5)
    assert data["output"].startswith("99_fixture.ipynb (chapter 99): 3.33/5 points")
    assert "- cell 4 raised SyntaxError" in data["output"]
    assert [t["name"] for t in data["tests"]] == [
        "99.1 Add two numbers",
        "99.2 Multiply two numbers, a title that is far too long for its column",
        "99.3 Greet someone",
    ]
    assert [t["status"] for t in data["tests"]] == ["passed", "failed", "failed"]
    assert [(t["score"], t["max_score"]) for t in data["tests"]] == [(2, 2), (1.33, 2), (0, 1)]
    assert data["tests"][1]["output"].splitlines()[1:] == [
        "  passed: t2",
        "  failed: t3: mul(7, 0) returned 1, expected 0",
        "  not run: t4: not run: the exercise stopped before this test",
    ]


def _private_report(*results: ExerciseResult) -> GradeReport:
    return GradeReport("hw.ipynb", "99", "A fixture chapter", list(results))


def _entries(report: GradeReport, exercise_id: str) -> dict[str, dict]:
    tests = report.to_gradescope(for_students=True)["tests"]
    return {t["visibility"]: t for t in tests if t["number"] == exercise_id}


# catches: an instructor-only exercise (private tests alone) shown to students as 0/0
def test_an_exercise_with_private_tests_only_has_no_visible_entry():
    own = ExerciseResult(
        "99.9", "The instructor's own", 0, 2, "failed", "1 of 1 private test did not pass",
        [TestOutcome("test_secret", "failed", "wrong", private=True)],
    )  # fmt: skip
    entries = _entries(_private_report(own), "99.9")
    assert list(entries) == ["after_due_date"]
    assert (entries["after_due_date"]["score"], entries["after_due_date"]["max_score"]) == (0, 2)


# catches: hint costs or a delegation's zero charged to the hidden entry (so the visible
# points move with a private verdict) or the two entries not adding up to the score
def test_the_visible_entry_carries_the_hint_cost_and_the_parts_add_up():
    tests = [TestOutcome("t1", "passed"), TestOutcome("p1", "failed", "no", private=True)]
    hinted = ExerciseResult("99.1", "Add", 0.5, 2, "failed", "1 of 1 private ...", tests)
    entries = _entries(_private_report(hinted), "99.1")  # 1 point earned, 0.5 paid for hints
    assert (entries["visible"]["score"], entries["visible"]["status"]) == (0.5, "passed")
    assert entries["after_due_date"]["score"] == 0
    prefix = DELEGATION_PREFIX
    refused = [TestOutcome("t1", "failed", f"{prefix} add called the package's add")]
    refused.append(TestOutcome("p1", "passed", private=True))
    delegated = ExerciseResult("99.1", "Add", 0, 2, "failed", refused[0].message, refused)
    entries = _entries(_private_report(delegated), "99.1")
    assert entries["visible"]["score"] == 0 and prefix in entries["visible"]["output"]
    assert entries["after_due_date"]["score"] == 0
