"""check("99.2") inside a notebook: the same tests, in the kernel, one plain line back."""

from __future__ import annotations

import pytest
from grading_fixtures import fixture_chapter

from minitorch.course import manifest
from minitorch.course.grading import CheckResult


@pytest.fixture(autouse=True)
def fixture_course(monkeypatch):
    """Make the fixture chapter the course's only chapter."""
    monkeypatch.setattr(manifest, "CHAPTERS", (fixture_chapter(),))


def run_in_kernel(code: str) -> CheckResult:
    """Run ``code`` as notebook cells would (module globals), then ``check`` from there."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code, "<kernel cell>", "exec"), namespace)
    exec(
        "from minitorch.course.grading import check\nresult = check('99.2', timeout=0.3)", namespace
    )
    return namespace["result"]


def test_a_correct_solution_passes():
    result = run_in_kernel("def mul(a, b):\n    return a * b")
    assert result.passed
    assert repr(result) == "99.2 Multiply two numbers: passed (3/3 tests, 3/3 points)"
    assert "#1a7f37" in result._repr_html_()  # green


def test_a_wrong_answer_says_what_was_expected():
    result = run_in_kernel("def mul(a, b):\n    return a * b if b else 1")
    assert repr(result) == (
        "99.2 Multiply two numbers: failed (2/3 tests): mul(7, 0) returned 1, expected 0"
    )
    html = result._repr_html_()
    assert "#cf222e" in html and "mul(7, 0) returned 1, expected 0" in html


def test_the_blank_exercise_says_to_replace_the_raise():
    result = run_in_kernel(
        "def mul(a, b):\n    raise NotImplementedError('write your solution here')"
    )
    assert repr(result) == (
        "99.2 Multiply two numbers: not implemented yet:\n"
        "    `mul` still raises NotImplementedError: replace that raise with your code"
    )
    assert "#6e7781" in result._repr_html_()  # grey


def test_a_missing_function_says_to_run_its_cell():
    result = run_in_kernel("x = 1")
    assert repr(result) == (
        "99.2 Multiply two numbers: error (0/3 tests):\n"
        "    the notebook defines no `mul`: run the cell that defines it first "
        "(and check the spelling)"
    )


def test_an_error_names_the_function_and_line():
    result = run_in_kernel("def mul(a, b):\n    return a + None")
    assert repr(result) == (
        "99.2 Multiply two numbers: error (0/3 tests):\n"
        "    TypeError: unsupported operand type(s) for +: 'int' and 'NoneType' "
        "(in `mul`, line 2 of its notebook cell)"
    )


def test_an_infinite_loop_times_out():
    result = run_in_kernel("def mul(a, b):\n    while True:\n        pass")
    assert repr(result) == (
        "99.2 Multiply two numbers: timed out (0/3 tests):\n"
        "    timed out after 0.3 s (in `mul`, line 2 of its notebook cell): "
        "look for a loop that never ends"
    )


def test_the_output_is_deterministic():
    outputs = {repr(run_in_kernel("def mul(a, b):\n    return a - b")) for _ in range(2)}
    [text] = outputs
    assert "0x" not in text and "Traceback" not in text


def test_an_unknown_exercise_is_a_clear_error():
    with pytest.raises(ValueError, match=r"no exercise '99\.9' in the course; the exercises are: "):
        run_in_kernel("from minitorch.course.grading import check\ncheck('99.9')")


def test_a_broken_test_module_is_not_blamed_on_the_learner(tmp_path):
    broken = tmp_path / "test_broken.py"
    broken.write_text("import nothing_by_this_name\n")
    namespace: dict = {}
    exec(
        f"from minitorch.course.grading import check\nr = check('99.1', test_file={str(broken)!r})",
        namespace,
    )
    text = repr(namespace["r"])
    assert text.startswith(
        "99.1 Add two numbers: error:\n    could not load the tests (not your fault"
    )
