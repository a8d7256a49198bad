"""@exercise registers plain test functions; collect() groups them by exercise."""

from __future__ import annotations

from pathlib import Path

import pytest
from grading_fixtures import EXERCISES, FIXTURE_TESTS

from minitorch.course.grading import GradingError, exercise
from minitorch.course.grading.registry import collect, load_test_module, registered


def test_the_decorator_returns_the_function_unchanged_and_registers_it():
    def test_something(nb):
        return nb

    decorated = exercise("99.1")(test_something)
    assert decorated is test_something
    assert test_something.__exercise_id__ == "99.1"
    [reg] = [r for r in registered(__name__) if r.func is test_something]
    assert (reg.exercise_id, reg.name) == ("99.1", "test_something")
    assert (reg.title, reg.points) == (None, None)


def test_reimporting_a_module_does_not_duplicate_its_tests():
    first = load_test_module(FIXTURE_TESTS)
    second = load_test_module(FIXTURE_TESTS)
    assert first.__name__ == second.__name__
    names = [r.name for r in registered(second.__name__)]
    assert len(names) == 6 and len(set(names)) == 6


def test_collect_groups_tests_by_exercise_in_manifest_order():
    found = collect([FIXTURE_TESTS], EXERCISES)
    assert [(e.id, e.title, e.points) for e in found] == [
        ("99.1", "Add two numbers", 2),
        ("99.2", "Multiply two numbers", 3),
        ("99.3", "Greet someone", 1),
    ]
    assert [t.name for t in found[1].tests] == [
        "test_mul_small_numbers",
        "test_mul_by_zero",
        "test_mul_by_one",
    ]


def test_private_exercises_and_extra_tests_join_in(tmp_path: Path):
    extra = tmp_path / "test_private.py"
    extra.write_text(
        "from minitorch.course.grading import exercise\n\n"
        "@exercise('99.1')\ndef test_add_zero(nb):\n    assert nb.add(0, 0) == 0\n\n"
        "@exercise('99.x', title='A private one', points=4)\ndef test_private(nb):\n    pass\n"
    )
    found = collect([FIXTURE_TESTS, extra], EXERCISES)
    assert [e.id for e in found] == ["99.1", "99.2", "99.3", "99.x"]
    assert [t.name for t in found[0].tests][-1] == "test_add_zero"
    assert (found[3].title, found[3].points) == ("A private one", 4)


def test_an_unknown_id_without_title_and_points_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "test_bad.py"
    bad.write_text(
        "from minitorch.course.grading import exercise\n\n"
        "@exercise('99.9')\ndef test_x(nb):\n    pass\n"
    )
    with pytest.raises(GradingError) as caught:
        collect([bad], EXERCISES)
    message = str(caught.value)
    assert "test `test_x`" in message and "'99.9'" in message and "title=" in message


def test_a_test_module_that_fails_to_import_says_where(tmp_path: Path):
    bad = tmp_path / "test_broken.py"
    bad.write_text("import math\n\nx = math.nothing\n")
    with pytest.raises(GradingError) as caught:
        load_test_module(bad)
    assert str(caught.value) == (
        f"could not import the tests in {bad}: AttributeError: module 'math' has no "
        f"attribute 'nothing' (in `<module>`, line 3 of test_broken.py)"
    )


def test_a_test_module_can_import_a_helper_next_to_it(tmp_path: Path):
    (tmp_path / "helper_for_grading.py").write_text("VALUE = 42\n")
    module = tmp_path / "test_uses_helper.py"
    module.write_text("from helper_for_grading import VALUE\n")
    assert load_test_module(module).VALUE == 42
