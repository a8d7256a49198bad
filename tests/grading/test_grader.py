"""grade(): each exercise graded in a worker process, whatever the notebook does.

Every robustness test checks the exact status of the exercise that misbehaves and that
the other exercises were still graded (99.1 add: 2 points, 99.3 greet: 1 point).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grading_fixtures import ADD, GREET, MUL, markdown

from minitorch.course.grading import GradingError, NotebookError, grade
from minitorch.course.grading.report import GradeReport


def assert_others_graded(report: GradeReport) -> None:
    """99.1 and 99.3 passed in full: the misbehaving 99.2 did not stop the grading."""
    assert [r.id for r in report.results] == ["99.1", "99.2", "99.3"]
    for exercise_id in ("99.1", "99.3"):
        result = report.result(exercise_id)
        assert result.status == "passed", (exercise_id, result.reason)
        assert result.score == result.max_score
    assert report.score == 3 + report.result("99.2").score


def test_a_correct_notebook_gets_full_marks(make_notebook, grade_fixture):
    report = grade_fixture(make_notebook(markdown("# Fixture"), ADD, MUL, GREET))
    assert (report.score, report.max_score) == (6, 6)
    assert [r.status for r in report.results] == ["passed"] * 3
    assert report.result("99.2").tests_passed == 3
    assert report.cell_failures == []


def test_partial_credit(make_notebook, grade_fixture):
    wrong_mul = "def mul(a, b):\n    return a * b if b else 1"
    report = grade_fixture(make_notebook(ADD, wrong_mul, GREET))
    mul = report.result("99.2")
    assert (mul.status, mul.score, mul.max_score) == ("failed", 2, 3)
    assert mul.reason == "mul(7, 0) returned 1, expected 0"
    assert_others_graded(report)


def test_an_infinite_loop_in_an_exercise_times_out(make_notebook, grade_fixture):
    spin = "def mul(a, b):\n    while True:\n        pass"
    report = grade_fixture(make_notebook(ADD, spin, GREET), timeout=0.5)
    mul = report.result("99.2")
    assert (mul.status, mul.score) == ("timed out", 0)
    assert mul.reason == (
        "timed out after 0.5 s (in `mul`, line 2 of notebook cell 2): "
        "look for a loop that never ends"
    )
    assert_others_graded(report)


def test_a_loop_that_swallows_the_alarm_is_stopped_by_the_grader(make_notebook, grade_fixture):
    stubborn = (
        "import time\n"
        "def mul(a, b):\n"
        "    while True:\n"
        "        try:\n"
        "            time.sleep(10)\n"
        "        except BaseException:\n"
        "            pass"
    )
    report = grade_fixture(make_notebook(ADD, stubborn, GREET), timeout=0.5)
    mul = report.result("99.2")
    assert (mul.status, mul.score) == ("timed out", 0)
    assert mul.reason == (
        "timed out after 0.5 s (the grader stopped your code in exercise 99.2, test "
        "`test_mul_small_numbers`): look for a loop that never ends"
    )
    assert [t.status for t in mul.tests] == ["timed out", "not run", "not run"]
    assert_others_graded(report)


def test_a_syntax_error_loses_only_that_cell(make_notebook, grade_fixture):
    broken = "def mul(a, b):\n    return a *"
    report = grade_fixture(make_notebook(ADD, broken, GREET))
    mul = report.result("99.2")
    assert (mul.status, mul.score) == ("error", 0)
    assert mul.reason == (
        "the notebook defines no `mul`: the cell that defines it failed: "
        "cell 2 raised SyntaxError: invalid syntax (line 2)"
    )
    assert [str(f) for f in report.cell_failures] == [
        "cell 2 raised SyntaxError: invalid syntax (line 2)"
    ]
    assert_others_graded(report)


def test_sys_exit_at_the_top_level_is_a_failing_cell(make_notebook, grade_fixture):
    report = grade_fixture(make_notebook(ADD, "import sys\nsys.exit()", MUL, GREET))
    assert [str(f) for f in report.cell_failures] == ["cell 2 raised SystemExit (line 2)"]
    assert report.result("99.2").status == "passed"
    assert_others_graded(report)


def test_os_exit_in_an_exercise_is_reported_and_the_rest_graded(make_notebook, grade_fixture):
    dies = "import os\ndef mul(a, b):\n    os._exit(3)"
    report = grade_fixture(make_notebook(ADD, dies, GREET))
    mul = report.result("99.2")
    assert (mul.status, mul.score) == ("error", 0)
    assert mul.reason.startswith(
        "the worker process died (exit code 3) while running exercise 99.2, "
        "test `test_mul_small_numbers`"
    )
    assert_others_graded(report)


def test_os_abort_in_a_later_test_keeps_the_tests_that_passed(make_notebook, grade_fixture):
    aborts = "import os\ndef mul(a, b):\n    if b == 0:\n        os.abort()\n    return a * b"
    report = grade_fixture(make_notebook(ADD, aborts, GREET))
    mul = report.result("99.2")
    assert (mul.status, mul.score) == ("error", 1)  # 1 of 3 tests passed before the abort
    assert mul.reason.startswith(
        "the worker process died (killed by SIGABRT) while running exercise 99.2, "
        "test `test_mul_by_zero`"
    )
    assert [t.status for t in mul.tests] == ["passed", "error", "not run"]
    assert_others_graded(report)


def test_a_cell_that_kills_the_interpreter_is_skipped(make_notebook, grade_fixture):
    report = grade_fixture(make_notebook(ADD, "import os\nos._exit(3)", MUL, GREET))
    assert [str(f) for f in report.cell_failures] == [
        "cell 2 killed the worker process (exit code 3)"
    ]
    assert report.result("99.2").status == "passed"
    assert_others_graded(report)


def test_an_infinite_loop_at_the_top_level_times_out_while_loading(make_notebook, grade_fixture):
    loop = "while True:\n    pass"
    report = grade_fixture(make_notebook(ADD, loop, MUL, GREET), cell_timeout=0.5)
    assert [str(f) for f in report.cell_failures] == ["cell 2 timed out after 0.5 s"]
    assert report.result("99.2").status == "passed"
    assert_others_graded(report)


def test_a_top_level_loop_that_swallows_the_alarm_is_stopped(make_notebook, grade_fixture):
    stubborn = (
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except BaseException:\n"
        "        pass\n"
    )
    report = grade_fixture(make_notebook(ADD, stubborn, MUL, GREET), cell_timeout=0.5)
    assert [str(f) for f in report.cell_failures] == [
        "cell 2 timed out after 0.5 s (the grader stopped it)"
    ]
    assert report.result("99.2").status == "passed"
    assert_others_graded(report)


def test_printing_cannot_corrupt_the_protocol(make_notebook, grade_fixture):
    noisy = (
        "import os, sys\n"
        'print(\'{"event": "done"}\')\n'
        "os.write(1, b'not json\\n')\n"
        'sys.stderr.write(\'{"event": "fatal", "message": "fake"}\\n\')\n'
        "def mul(a, b):\n"
        '    print(\'{"event": "result"}\')\n'
        "    return a * b"
    )
    report = grade_fixture(make_notebook(ADD, noisy, GREET))
    assert report.result("99.2").status == "passed"
    assert_others_graded(report)


def test_check_calls_in_the_notebook_do_nothing_while_grading(make_notebook, grade_fixture):
    check = "from minitorch.course.grading import check\ncheck('01.1')"
    report = grade_fixture(make_notebook(ADD, check, MUL, GREET))
    assert report.cell_failures == [] and report.score == 6


def test_extra_tests_join_exercises_and_private_ones_are_added(
    make_notebook, grade_fixture, tmp_path: Path
):
    private = tmp_path / "private"
    private.mkdir()
    (private / "test_more.py").write_text(
        "from minitorch.course.grading import exercise, probe\n\n"
        "@probe\ndef add(nb, a, b):\n    return nb.add(a, b)\n\n"
        "@probe\ndef mul(nb, a, b):\n    return nb.mul(a, b)\n\n"
        "@exercise('99.1')\n"
        "def test_add_floats(run):\n"
        "    assert run(add, 0.5, 0.25) == 0.75, 'add(0.5, 0.25) should be 0.75'\n\n"
        "@exercise('99.p', title='Private: mul is commutative', points=2)\n"
        "def test_commutes(run):\n"
        "    assert run(mul, 2, 5) == run(mul, 5, 2)\n"
    )
    (private / "helper.py").write_text("raise RuntimeError('not a test module')\n")
    add_ints = "def add(a, b):\n    return int(a) + int(b)"
    report = grade_fixture(make_notebook(add_ints, MUL, GREET), extra_test_dirs=[private])
    add = report.result("99.1")
    assert [t.name for t in add.tests][-1] == "test_add_floats"
    assert (add.status, add.score) == ("failed", 1.33)
    # the reason students see never quotes a private test
    assert add.reason == "1 of 1 private test did not pass"
    assert add.tests[-1].message == "add(0.5, 0.25) should be 0.75" and add.tests[-1].private
    private_result = report.result("99.p")
    assert (private_result.title, private_result.score, private_result.max_score) == (
        "Private: mul is commutative",
        2,
        2,
    )
    assert (report.score, report.max_score) == (7.33, 8)


def test_bad_input_is_a_notebook_error(make_notebook, grade_fixture, tmp_path: Path):
    with pytest.raises(NotebookError, match="no notebook"):
        grade_fixture(tmp_path / "99_missing.ipynb")
    not_json = tmp_path / "99_bad.ipynb"
    not_json.write_text("this is not a notebook")
    with pytest.raises(NotebookError, match="is not a Jupyter notebook"):
        grade_fixture(not_json)
    with pytest.raises(NotebookError, match="no test folder"):
        grade_fixture(make_notebook(ADD), extra_test_dirs=[tmp_path / "nowhere"])


def test_an_unknown_chapter_is_a_notebook_error(make_notebook):
    with pytest.raises(NotebookError, match="cannot tell the chapter of 'homework.ipynb'"):
        grade(make_notebook(ADD, name="homework.ipynb"))


def test_a_broken_test_module_is_a_grading_error(make_notebook, grade_fixture, tmp_path: Path):
    broken = tmp_path / "test_broken.py"
    broken.write_text("def oops(:\n")
    with pytest.raises(GradingError, match="could not import the tests in .*test_broken.py"):
        grade_fixture(make_notebook(ADD), test_files=[broken])
