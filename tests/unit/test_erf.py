"""``erf`` against ``math.erf``: float32 within 1 ulp, float64 within a few, the special values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch as mt
from minitorch.ops.scalar import erf_array


def _grid(dtype: type) -> np.ndarray:
    """Dense around 0 and the shoulder, the tails out to where erf is 1, and tiny values."""
    tiny = np.geomspace(1e-30 if dtype is np.float32 else 1e-300, 7.0, 4000)
    return np.concatenate([np.linspace(-7.0, 7.0, 60001), tiny, -tiny]).astype(dtype)


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    want = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(x.dtype)
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want)).astype(np.float64)


@pytest.mark.parametrize(("dtype", "ulps"), [(np.float32, 1.0), (np.float64, 4.0)])
def test_erf_is_within_ulps_of_math_erf(dtype, ulps):
    # catches: a coarse approximation (Abramowitz & Stegun's 1.5e-7 is thousands of ulp near
    # 0), a branch or clamp at the wrong place, float32 computed with float32 rounding
    x = _grid(dtype)
    got = erf_array(np, x)
    assert got.dtype == dtype
    worst = _ulps(got, x)
    assert worst.max() <= ulps, f"{dtype.__name__}: {worst.max()} ulp at x={x[worst.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_special_values(dtype):
    # catches: a lost sign of zero, an overflowing branch turning inf into NaN, NaN swallowed
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], dtype)
    got = erf_array(np, x)
    assert np.array_equal(got[:4], [0.0, -0.0, 1.0, -1.0]) and np.isnan(got[4])
    assert list(np.signbit(got[:2])) == [False, True]
    assert got[5] == -got[6] and _ulps(got[5:], x[5:]).max() <= 4.0  # (odd, at the branch)


def test_erf_writes_out_keeps_shape_and_takes_half_precision_and_empty():
    # catches: out= ignored (the fusers write through it), a flattened result, float16 sent
    # down the float64 path with the wrong dtype back, an empty input breaking the chunk loop
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    out = np.empty_like(x)
    assert erf_array(np, x, out=out) is out
    assert np.array_equal(out, erf_array(np, x)) and out.shape == (3, 4)
    half = erf_array(np, x.astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, erf_array(np, x), atol=1e-3)
    assert erf_array(np, np.empty((0, 3), np.float32)).shape == (0, 3)


def test_erf_op_and_exact_gelu_use_it():
    # catches: the op or GELU left on an older formula
    x = mt.tensor(np.linspace(-2, 2, 9), dtype=mt.float64, requires_grad=True)
    y = mt.nn.functional.gelu(x)
    want = [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in np.linspace(-2, 2, 9)]
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-15, atol=1e-16)
    assert mt.autograd.gradcheck(mt.nn.functional.gelu, (x,))


def test_float16_gelu_tail_is_nearer_the_exact_value_than_abramowitz_stegun():
    # catches: GELU on the old 1.5e-7 erf, whose float16 tail (where 1 + erf(x) keeps few bits)
    # rounds away from the exact value more often (35 of these 301 values, against 28)
    x = (mt.arange(-150, 151) / 25.0).to(mt.float16)
    got = mt.nn.functional.gelu(x).numpy()
    xs = x.numpy().astype(np.float64)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in xs]).astype(np.float16)
    assert (got != exact).sum() <= 28
