"""Shared strategies and checks for the tensor-core unit tests.

Most property tests build a numpy array and a minitorch tensor over *the same memory*
(``minitorch.from_numpy``), apply the same operation to both, and compare values,
strides (in elements) and storage offsets.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import minitorch

#: Modest example counts keep the whole tests/unit suite well under 20 s on 2 cores.
FAST = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,  # the same examples on every run: CI results do not flicker
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(FAST, max_examples=30)

small_shapes = array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
nonempty_shapes = array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4)
seeds = st.integers(0, 2**32 - 1)


def elem_strides(a: np.ndarray) -> tuple[int, ...]:
    """numpy's byte strides as element strides."""
    return tuple(s // a.itemsize for s in a.strides)


def offset_in(a: np.ndarray, base: np.ndarray) -> int:
    """Element offset of ``a``'s first element inside ``base``'s buffer."""
    start = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return start // a.itemsize


def positions(shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> np.ndarray:
    """Storage position of every element of a layout, as an array of ``shape``."""
    pos = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides, strict=True)):
        axis = [1] * len(shape)
        axis[k] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(axis)
    return pos


def strides_agree(got: tuple[int, ...], expected: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Equal strides on every dim that matters (a dim of size 0 or 1 may have any stride)."""
    if 0 in shape:
        return len(got) == len(expected)
    return len(got) == len(expected) and all(
        g == e for g, e, n in zip(got, expected, shape, strict=True) if n > 1
    )


def assert_same_view(t: minitorch.Tensor, a: np.ndarray, base: np.ndarray) -> None:
    """``t`` and the numpy view ``a`` (both over ``base``'s memory) show the same elements."""
    assert t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    assert strides_agree(t.stride(), elem_strides(a), a.shape), (t.stride(), elem_strides(a))
    if a.size:
        assert t.storage_offset() == offset_in(a, base)
        assert t.data_ptr() == a.__array_interface__["data"][0]


def make_tensor(
    values: np.ndarray, layout: str
) -> tuple[minitorch.Tensor, minitorch.Tensor | None]:
    """A tensor equal to ``values`` laid out as ``contiguous``, ``transposed`` or ``strided``.

    Returns the tensor and the base tensor whose storage it reads.
    """
    nd = values.ndim
    if layout == "contiguous" or nd == 0:
        t = minitorch.from_numpy(np.array(values, order="C"))  # keeps 0-d arrays 0-d
        return t, t
    if layout == "transposed" or values.size == 0:
        base = minitorch.from_numpy(np.array(values.transpose(), order="C"))
        return base.permute(*reversed(range(nd))), base
    # strided: every other element of a buffer twice as long in every dim
    big = np.zeros(tuple(2 * n + 1 for n in values.shape), dtype=values.dtype)
    pick = tuple(slice(1, 2 * n + 1, 2) for n in values.shape)
    big[pick] = values
    base = minitorch.from_numpy(big)
    return base[pick], base


layouts = st.sampled_from(["contiguous", "transposed", "strided"])


def random_values(shape: tuple[int, ...], seed: int, dtype: str = "float64") -> np.ndarray:
    """Random values of a given numpy dtype (floats away from 0, small ints, or bools)."""
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        mag = rng.uniform(0.5, 2.0, size=shape)
        sign = rng.choice([-1.0, 1.0], size=shape)
        return np.asarray(mag * sign, dtype=dtype)
    if dtype == "bool":
        return rng.random(size=shape) < 0.5
    return np.asarray(rng.integers(-5, 6, size=shape), dtype=dtype)
