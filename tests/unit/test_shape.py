"""Shape and stride arithmetic (minitorch.shape) against numpy and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import minitorch
from minitorch.shape import (
    broadcast_index,
    broadcast_shapes,
    contiguous_strides,
    index_to_position,
    infer_size,
    normalize_dim,
    numel,
    unravel_index,
    view_strides,
)

from .tensor_helpers import FAST, elem_strides, nonempty_shapes, positions, small_shapes


# --- contiguous strides -------------------------------------------------------------------
@FAST
@given(nonempty_shapes)
def test_contiguous_strides_match_numpy(shape):
    assert contiguous_strides(shape) == elem_strides(np.zeros(shape, dtype=np.float32))


@FAST
@given(small_shapes)
def test_contiguous_strides_follow_pytorch_rule_with_zero_sizes(shape):
    # PyTorch treats a size-0 dim as size 1 when computing the strides of the dims before it.
    expected = tuple(math.prod(max(n, 1) for n in shape[k + 1 :]) for k in range(len(shape)))
    assert contiguous_strides(shape) == expected
    assert minitorch.zeros(shape).stride() == expected


def test_contiguous_strides_examples():
    assert contiguous_strides(()) == ()
    assert contiguous_strides((5,)) == (1,)
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides([3, 1, 5]) == (5, 5, 1)


# --- index <-> position -------------------------------------------------------------------
@st.composite
def strided_layouts(draw):
    shape = draw(nonempty_shapes)
    strides = tuple(draw(st.integers(0, 6)) for _ in shape)
    offset = draw(st.integers(0, 5))
    index = tuple(draw(st.integers(0, n - 1)) for n in shape)
    return shape, strides, offset, index


@FAST
@given(strided_layouts())
def test_index_to_position_matches_a_numpy_strided_view(layout):
    shape, strides, offset, index = layout
    length = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1
    buffer = np.arange(length, dtype=np.int64)
    view = np.lib.stride_tricks.as_strided(
        buffer[offset:], shape=shape, strides=tuple(s * buffer.itemsize for s in strides)
    )
    assert index_to_position(index, strides, offset) == view[index]


@FAST
@given(nonempty_shapes, st.data())
def test_unravel_index_matches_numpy_and_inverts_index_to_position(shape, data):
    position = data.draw(st.integers(0, numel(shape) - 1))
    index = unravel_index(position, shape)
    assert index == tuple(int(i) for i in np.unravel_index(position, shape))
    assert index_to_position(index, contiguous_strides(shape)) == position


def test_index_to_position_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        index_to_position((1, 2), (3,))


# --- broadcasting -------------------------------------------------------------------------
@FAST
@given(
    st.integers(1, 4).flatmap(
        lambda k: mutually_broadcastable_shapes(num_shapes=k, min_side=0, max_side=4)
    )
)
def test_broadcast_shapes_matches_numpy(shapes):
    input_shapes, result = shapes
    assert broadcast_shapes(*input_shapes) == np.broadcast_shapes(*input_shapes) == result
    assert minitorch.broadcast_shapes(*input_shapes) == result


@st.composite
def incompatible_shape_pairs(draw):
    """Two shapes that share a trailing dim whose sizes differ and are both not 1."""
    a = list(draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)))
    b = list(draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)))
    k = draw(st.integers(1, min(len(a), len(b))))
    n, m = draw(st.sampled_from([(2, 3), (3, 2), (0, 2), (4, 0), (2, 4)]))
    a[-k], b[-k] = n, m
    return tuple(a), tuple(b)


@FAST
@given(incompatible_shape_pairs())
def test_broadcast_shapes_incompatible_raises_naming_both_shapes(pair):
    a, b = pair
    with pytest.raises(ValueError):
        np.broadcast_shapes(a, b)
    with pytest.raises(RuntimeError) as info:
        broadcast_shapes(a, b, op="myop")
    message = str(info.value)
    assert message.startswith("myop:")
    assert str(a) in message and str(b) in message


def test_broadcast_shapes_examples():
    assert broadcast_shapes() == ()
    assert broadcast_shapes((), (3,)) == (3,)
    assert broadcast_shapes((2, 1, 4), (3, 1)) == (2, 3, 4)
    assert broadcast_shapes((1,), (0,)) == (0,)
    assert broadcast_shapes([5, 1], (1, 6)) == (5, 6)


@FAST
@given(mutually_broadcastable_shapes(num_shapes=2, min_side=1, max_side=3, max_dims=4))
def test_broadcast_index_reads_the_element_numpy_broadcasts(shapes):
    (in_shape, other), out_shape = shapes
    values = np.arange(numel(in_shape)).reshape(in_shape)
    expanded = np.broadcast_to(values, out_shape)
    for out_index in np.ndindex(*out_shape):
        in_index = broadcast_index(out_index, out_shape, in_shape)
        assert len(in_index) == len(in_shape)
        assert all(0 <= i < n for i, n in zip(in_index, in_shape, strict=True))
        assert values[in_index] == expanded[out_index]


# --- view strides -------------------------------------------------------------------------
def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def shapes_with_numel(draw, n: int):
    """A random shape holding exactly ``n`` elements (size-1 dims sprinkled in)."""
    if n == 0:
        shape = list(draw(array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)))
        shape[draw(st.integers(0, len(shape) - 1))] = 0
        return tuple(shape)
    sizes, rest = [], n
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from(_divisors(rest)))
        sizes.append(d)
        rest //= d
    if rest != 1 or draw(st.booleans()):
        sizes.append(rest)
    ones = draw(st.integers(0, 2 if len(sizes) < 4 else 0))
    for _ in range(ones):
        sizes.insert(draw(st.integers(0, len(sizes))), 1)
    return tuple(draw(st.permutations(sizes)))


def _brute_force_view_possible(shape, strides, new_shape) -> bool:
    """Whether some strides show the elements of (shape, strides) in new_shape's row-major order."""
    if numel(shape) == 0:
        return True
    wanted = positions(shape, strides).reshape(new_shape)
    origin = (0,) * len(new_shape)
    guess = []
    for k, n in enumerate(new_shape):
        step = tuple(1 if j == k else 0 for j in range(len(new_shape)))
        guess.append(int(wanted[step] - wanted[origin]) if n > 1 else 0)
    return np.array_equal(positions(new_shape, tuple(guess)) + wanted[origin], wanted)


@FAST
@given(small_shapes, st.data())
def test_view_strides_agrees_with_brute_force_for_any_strides(shape, data):
    strides = tuple(data.draw(st.integers(0, 7)) for _ in shape)
    new_shape = data.draw(shapes_with_numel(numel(shape)))
    result = view_strides(shape, strides, new_shape)
    possible = _brute_force_view_possible(shape, strides, new_shape)
    assert (result is not None) == possible, (shape, strides, new_shape, result)
    if result is not None:
        assert len(result) == len(new_shape)
        if numel(shape):
            expected = positions(shape, strides).reshape(new_shape)
            np.testing.assert_array_equal(positions(new_shape, result), expected)


@st.composite
def numpy_views(draw):
    """A (usually non-contiguous) numpy view of an arange: permuted, then sliced with steps."""
    shape = draw(array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5))
    base = np.arange(numel(shape), dtype=np.int64).reshape(shape)
    a = base.transpose(draw(st.permutations(range(base.ndim))))
    index = []
    for n in a.shape:
        start = draw(st.integers(0, n - 1))
        step = draw(st.integers(1, 3))
        index.append(slice(start, None, step))
    return base, a[(*index, Ellipsis)]  # the Ellipsis keeps a 0-d result an array view


@FAST
@given(numpy_views(), st.data())
def test_view_strides_is_none_exactly_when_numpy_reshape_must_copy(views, data):
    base, a = views
    new_shape = data.draw(shapes_with_numel(a.size))
    result = view_strides(a.shape, elem_strides(a), new_shape)
    try:
        expected = np.reshape(a, new_shape, copy=False)
    except ValueError:  # numpy: "Unable to avoid creating a copy while reshaping"
        expected = None
    if expected is None:
        assert result is None
        return
    assert result is not None
    assert np.shares_memory(expected, base)
    view = np.lib.stride_tricks.as_strided(
        a, shape=new_shape, strides=tuple(s * a.itemsize for s in result)
    )
    np.testing.assert_array_equal(view, a.reshape(new_shape))


def test_view_strides_examples():
    assert view_strides((2, 3), (3, 1), (3, 2)) == (2, 1)
    assert view_strides((2, 3), (3, 1), (6,)) == (1,)
    assert view_strides((2, 3), (1, 2), (6,)) is None  # a transpose: the dims can't merge
    assert view_strides((2, 3), (1, 2), (2, 3, 1)) is not None
    assert view_strides((4, 6), (6, 1), (2, 2, 3, 2)) == (12, 6, 2, 1)
    assert view_strides((), (), (1, 1)) is not None
    assert view_strides((0, 3), (3, 1), (3, 0)) == (1, 1)


# --- dims and inferred sizes --------------------------------------------------------------
@FAST
@given(st.integers(0, 5), st.integers(-7, 7))
def test_normalize_dim_matches_python_indexing(ndim, dim):
    size = max(ndim, 1)
    if -size <= dim < size:
        assert normalize_dim(dim, ndim, "op") == list(range(size))[dim]
    else:
        with pytest.raises(IndexError, match=rf"^op: dim {dim} is out of range"):
            normalize_dim(dim, ndim, "op")


@FAST
@given(nonempty_shapes, st.data())
def test_infer_size_resolves_one_minus_one(shape, data):
    assume(len(shape) > 0)
    k = data.draw(st.integers(0, len(shape) - 1))
    request = shape[:k] + (-1,) + shape[k + 1 :]
    assert infer_size(request, numel(shape), "view") == shape


def test_infer_size_errors_name_the_op_and_shape():
    with pytest.raises(RuntimeError, match=r"view: shape \(4, 2\) is invalid for input of size 6"):
        infer_size((4, 2), 6, "view")
    with pytest.raises(RuntimeError, match=r"reshape: only one dimension can be inferred"):
        infer_size((-1, -1), 6, "reshape")
    with pytest.raises(RuntimeError, match=r"view: shape \(-1, 4\) is invalid for input of size 6"):
        infer_size((-1, 4), 6, "view")


# catches: use_sizes() (PyTorch programs, as_torch) left on for the rest of the process, so
# that minitorch's own messages print minitorch.Size([3, 2]) instead of (3, 2)
def test_use_sizes_can_be_undone():
    from minitorch import size

    x = minitorch.ones(3, 2)
    was = getattr(minitorch.Tensor, "_sizes", False)
    size.use_sizes()
    assert type(x.shape) is size.Size and type(x.size()) is size.Size
    size.use_plain_shapes()
    assert type(x.shape) is tuple and type(x.size()) is tuple and x.size(0) == 3
    if was:
        size.use_sizes()
