"""``minitorch.testing.assert_close`` against ``torch.testing.assert_close`` (issue 40: the
FX fuser tutorial checks its result with it): the same inputs pass or fail alike, with
PyTorch's default tolerances per dtype and its message."""

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch")

CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0 + 1e-6], "float32"),  # within float32's defaults
    ([1.0, 2.0, 3.0], [1.0, 2.0, 3.001], "float32"),  # outside
    ([1.0, 2.0], [1.0, 2.0 + 1e-6], "float64"),  # float64 is stricter
    ([1, 2], [1, 3], "int64"),  # integers compare exactly
    ([float("nan")], [float("nan")], "float32"),  # NaN != NaN unless equal_nan
]


def outcome(lib, check, a, b):
    try:
        check(a, b)
    except AssertionError as err:
        return str(err).splitlines()[0]
    return "ok"


@pytest.mark.parametrize("a, b, dtype", CASES)
def test_passes_and_fails_as_torch(a, b, dtype):
    ours = outcome(
        mt, mt.testing.assert_close, mt.tensor(np.array(a, dtype)), mt.tensor(np.array(b, dtype))
    )
    theirs = outcome(
        torch,
        torch.testing.assert_close,
        torch.tensor(np.array(a, dtype)),
        torch.tensor(np.array(b, dtype)),
    )
    assert ours == theirs


def test_shape_dtype_and_tolerance_arguments():
    with pytest.raises(AssertionError, match="'shape' do not match"):
        mt.testing.assert_close(mt.ones(2), mt.ones(3))
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        mt.testing.assert_close(mt.ones(2), mt.ones(2, dtype=mt.float64))
    mt.testing.assert_close(mt.ones(2), mt.ones(2) * 1.01, rtol=0.02, atol=0.0)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        mt.testing.assert_close(mt.ones(2), mt.ones(2), rtol=0.1)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        mt.testing.assert_close(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 2.5]))
    mt.testing.assert_close(mt.tensor([float("nan")]), mt.tensor([float("nan")]), equal_nan=True)
