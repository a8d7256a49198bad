"""A failing numpy comparison reaches the learner as one line that says what was compared,
where it differs, what came back and what was expected, never numpy's bare "Not equal to
tolerance" first line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from minitorch.course.grading.numpy_messages import rephrase

sys.path.insert(0, str(Path(__file__).parents[1] / "exercises"))


def _message(check) -> str:
    with pytest.raises(AssertionError) as caught:
        check()
    return str(caught.value)


def test_a_value_mismatch_names_what_where_yours_and_expected() -> None:
    text = _message(
        lambda: np.testing.assert_allclose([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], rtol=1e-6, err_msg="g")
    )
    assert rephrase(text) == (
        "g: 1 of 3 elements differ; first at index [1]: yours 2.0, expected 2.5 "
        "(tolerance rtol=1e-06, atol=0)"
    )


def test_shapes_scalars_and_exact_comparisons() -> None:
    shapes = _message(lambda: np.testing.assert_allclose(np.zeros(3), np.zeros(4), err_msg="L"))
    assert rephrase(shapes) == "L: yours have shape (3,), expected (4,)"
    scalar = rephrase(_message(lambda: np.testing.assert_allclose(1.0, 2.0, err_msg="s")))
    assert scalar.startswith("s: 1 of 1 elements differ: yours 1., expected 2.")
    exact = rephrase(_message(lambda: np.testing.assert_array_equal([1, 2], [1, 3])))
    assert exact == "the values: 1 of 2 elements differ; first at index [1]: yours 2, expected 3"


def test_other_messages_are_left_alone() -> None:
    assert rephrase("the scale is 2.0, expected 4.0") is None
    assert rephrase("") is None


@pytest.mark.parametrize(
    ("exercise", "name"), [("04.3", "multiplies_by_scale"), ("04.6", "forgets_zero_grad")]
)
def test_chapter_04s_failures_read_in_the_learners_terms(exercise: str, name: str) -> None:
    from mutants import first_failure, mutant_namespace
    from mutants_04 import MUTANTS

    message = first_failure("04", exercise, mutant_namespace("04", MUTANTS, exercise, name))
    assert message is not None and "Not equal to tolerance" not in message
    assert "yours" in message and "expected" in message, message
