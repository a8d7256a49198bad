"""What judges use to compare a probe's reply with the expected value, safely.

A reply is the learner's: it may be an empty array that broadcasts against anything (so
``np.allclose(values, expected)`` passes), a list where an array was expected, or an array
of millions of elements whose comparison with a column builds gigabytes of temporaries.
:func:`checked_array` checks the type, dtype and exact shape first, and only then does a
judge compute with it; :func:`assert_close` compares values after that check.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def checked_array(got: Any, expected: Any, what: str) -> np.ndarray:
    """``got`` as a numeric ndarray of exactly ``expected``'s shape, else AssertionError.

    Lists and tuples of numbers are accepted as arrays (a probe may return ``tolist()``);
    nothing is broadcast, and nothing is computed before the shape has been checked.
    """
    shape = np.shape(expected)
    if got is None:
        raise AssertionError(f"{what} is None, expected an array of shape {shape}")
    if isinstance(got, (list, tuple)):
        if len(got) != (shape[0] if shape else -1):
            raise AssertionError(
                f"{what} is a {type(got).__name__} of length {len(got)}, expected "
                f"an array of shape {shape}"
            )
        try:
            got = np.asarray(got)
        except (ValueError, TypeError):
            raise AssertionError(f"{what} is a ragged {type(got).__name__}, not an array") from None
    elif isinstance(got, (int, float, np.generic)) and not isinstance(got, bool) and shape == ():
        got = np.asarray(got)
    if not isinstance(got, np.ndarray) or got.dtype.kind not in "biuf":
        raise AssertionError(f"{what} is {_describe(got)}, expected numbers of shape {shape}")
    if got.shape != shape:
        raise AssertionError(f"{what} has shape {got.shape}, expected {shape}")
    return got


def assert_close(
    got: Any, expected: Any, what: str, *, rtol: float = 1e-5, atol: float = 1e-8
) -> np.ndarray:
    """Assert ``got`` is an array of ``expected``'s shape whose values are close to it;
    the message names the first element that differs. Returns ``got`` as an array."""
    got = checked_array(got, expected, what)
    expected = np.asarray(expected)
    bad = ~np.isclose(got, expected, rtol=rtol, atol=atol)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        at = f" at index {index}" if index else ""
        raise AssertionError(f"{what} is {got[index]!r}{at}, expected {expected[index]!r}")
    return got
