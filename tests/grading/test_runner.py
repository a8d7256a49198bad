"""run_exercise: statuses, one-line reasons a learner can act on, partial credit."""

from __future__ import annotations

import pytest
from grading_fixtures import EXERCISES, FIXTURE_TESTS

from minitorch.course.grading import LocalRunner, Namespace
from minitorch.course.grading.namespace import CellFailure
from minitorch.course.grading.probes import learner_error
from minitorch.course.grading.registry import ExerciseTests, Registration, collect
from minitorch.course.grading.results import TestOutcome, format_points
from minitorch.course.grading.runner import run_exercise, summarize


def notebook(code: str, failures: tuple[CellFailure, ...] = ()) -> LocalRunner:
    """Probes run on the definitions made by running ``code`` as cell 4 of a notebook."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code, "<cell four>", "exec"), namespace)
    return LocalRunner(Namespace(namespace, failures, {"<cell four>": 4}), seed=0)


@pytest.fixture(scope="module")
def exercises() -> dict[str, ExerciseTests]:
    return {e.id: e for e in collect([FIXTURE_TESTS], EXERCISES)}


def test_all_tests_passing_is_full_points(exercises):
    result = run_exercise(exercises["99.2"], notebook("def mul(a, b):\n    return a * b"))
    assert (result.status, result.score, result.max_score, result.reason) == ("passed", 3, 3, "")
    assert [t.status for t in result.tests] == ["passed"] * 3


def test_partial_credit_and_the_assertion_message(exercises):
    nb = notebook("def mul(a, b):\n    return a * b if b else 1")
    result = run_exercise(exercises["99.2"], nb)
    assert (result.status, result.score) == ("failed", 2.0)
    assert result.reason == "mul(7, 0) returned 1, expected 0"
    assert [(t.name, t.status) for t in result.tests] == [
        ("test_mul_small_numbers", "passed"),
        ("test_mul_by_zero", "failed"),
        ("test_mul_by_one", "passed"),
    ]
    one_of_three = run_exercise(exercises["99.2"], notebook("def mul(a, b):\n    return 6"))
    assert one_of_three.score == 1.0 and one_of_three.tests_passed == 1
    one_passed = [TestOutcome("a", "passed")]
    assert summarize("x", "x", 2, ["a", "b", "c"], one_passed).score == 0.67


def test_not_implemented_names_the_function(exercises):
    nb = notebook("def mul(a, b):\n    raise NotImplementedError('write your solution here')")
    result = run_exercise(exercises["99.2"], nb)
    assert (result.status, result.score) == ("not implemented", 0)
    assert result.reason == (
        "`mul` still raises NotImplementedError: replace that raise with your code"
    )
    assert {t.status for t in result.tests} == {"not implemented"}


def test_a_definition_lost_to_a_raising_cell_is_not_implemented(exercises):
    failure = CellFailure(7, "raised NotImplementedError: hint (line 1)", "NotImplementedError")
    result = run_exercise(exercises["99.2"], notebook("", (failure,)))
    assert result.status == "not implemented"
    assert result.reason == (
        "`mul` is not defined: cell 7 still raises NotImplementedError; "
        "replace that raise with your code"
    )


def test_another_exception_is_an_error_located_in_the_notebook(exercises):
    nb = notebook("def mul(a, b):\n    x = a\n    return x + 'b'")
    result = run_exercise(exercises["99.2"], nb)
    assert result.status == "error"
    assert result.reason == (
        "TypeError: unsupported operand type(s) for +: 'int' and 'str' "
        "(in `mul`, line 3 of notebook cell 4)"
    )


def test_a_missing_definition_is_an_error_naming_the_broken_cell(exercises):
    problem = "raised SyntaxError: invalid syntax (line 2)"
    failure = CellFailure(3, problem, "SyntaxError", "def mul(a, b)\n    return a *")
    result = run_exercise(exercises["99.2"], notebook("", (failure,)))
    assert result.status == "error"
    assert result.reason == (
        "the notebook defines no `mul`: the cell that defines it failed: "
        "cell 3 raised SyntaxError: invalid syntax (line 2)"
    )


def test_sys_exit_in_learner_code_is_an_error_not_an_exit(exercises):
    result = run_exercise(exercises["99.3"], notebook("import sys\ndef greet(n):\n    sys.exit(1)"))
    assert result.status == "error"
    assert result.reason == "SystemExit: 1 (in `greet`, line 3 of notebook cell 4)"


def test_an_assertion_without_a_message_shows_the_statement(tmp_path):
    module = tmp_path / "test_bare.py"  # loaded by path: no pytest assertion rewriting
    module.write_text(
        "from minitorch.course.grading import exercise, probe\n\n@probe\ndef value(nb):\n"
        "    return nb.value\n\n@exercise('1', title='t', points=1)\n"
        "def test_bare(run):\n    assert run(value) == 2\n"
    )
    [bare] = collect([module], [])
    result = run_exercise(bare, notebook("value = 1"))
    assert result.status == "failed"
    assert result.reason == (
        "assertion failed: `assert run(value) == 2` (in `test_bare`, line 9 of test_bare.py)"
    )


def test_a_runaway_exercise_times_out_where_it_loops(exercises):
    nb = notebook("def mul(a, b):\n    while True:\n        pass")
    result = run_exercise(exercises["99.2"], nb, timeout=0.3)
    assert (result.status, result.score) == ("timed out", 0)
    assert result.reason == (
        "timed out after 0.3 s (in `mul`, line 2 of notebook cell 4): "
        "look for a loop that never ends"
    )
    assert [t.status for t in result.tests] == ["timed out", "not run", "not run"]


def test_the_status_shown_is_the_most_telling_one():
    def passing(run):
        pass

    def failing(run):
        raise AssertionError("wrong")

    def missing(run):
        raise learner_error({"status": "not implemented", "message": "write it"})

    tests = [Registration("1", f) for f in (passing, failing, missing)]
    result = run_exercise(ExerciseTests("1", "t", 3, tests), notebook(""))
    assert (result.status, result.score) == ("not implemented", 1.0)
    assert summarize("1", "t", 1, [], []).status == "error"


def test_points_are_printed_briefly():
    assert [format_points(p) for p in (2.0, 1.3333, 0.5, 0, 10)] == ["2", "1.33", "0.5", "0", "10"]


# catches: a learner's code (or a time limit's signal inside autocast's __enter__) leaving
# an autocast region open or grad mode off in this process, so that every judge and test
# after it on the same pytest worker computed in bfloat16 or recorded no graph
def test_a_probe_leaves_the_framework_switches_as_it_found_them():
    from types import SimpleNamespace

    import minitorch as mt
    from minitorch.amp import autocast_mode
    from minitorch.course.grading.probes import call_probe

    def leaves_things_on(nb):
        mt.autocast("cpu").__enter__()  # opened, never closed
        mt.set_grad_enabled(False)
        return nb.value

    def layers():
        return [type(layer).__name__ for layer in mt.function.layers()]

    reply = call_probe(leaves_things_on, SimpleNamespace(value=3), [], timeout=5.0)
    assert reply == {"ok": 3}
    assert not autocast_mode.is_autocast_enabled("cpu") and mt.is_grad_enabled()
    assert "Autocast" not in layers()
    assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float32
    with mt.autocast("cpu") as region:  # a region the caller had open stays open
        closes = SimpleNamespace(region=region)
        call_probe(lambda nb: nb.region.__exit__(None, None, None), closes, [], 5.0)
        assert autocast_mode.is_autocast_enabled("cpu") and "Autocast" in layers()
        region._saved.append(({}, True))  # (what its __exit__ pops: the probe took it)
    assert "Autocast" not in layers()
