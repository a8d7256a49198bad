"""Views share storage: layouts (shape, strides, offset) against numpy views of the same memory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch

from .tensor_helpers import (
    FAST,
    assert_same_view,
    elem_strides,
    nonempty_shapes,
    offset_in,
    small_shapes,
    strides_agree,
)
from .test_shape import shapes_with_numel

MAX_DIMS = 5


def arange_pair(shape):
    """A numpy arange and a tensor over the very same memory."""
    base = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    return base, minitorch.from_numpy(base)


# --- one random view op, applied to a tensor and to a numpy array alike -------------------
def _slices(data, shape):
    index = []
    for n in shape:
        bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
        start, stop = data.draw(bound), data.draw(bound)
        step = data.draw(st.sampled_from([None, 1, 2, 3]))
        index.append(slice(start, stop, step))
    return tuple(index)


def random_view(data, t, a):
    """Draw one view op; apply it to tensor ``t`` and numpy array ``a``. Returns both results."""
    nd = a.ndim
    ops = ["permute", "slice", "squeeze", "reshape", "flatten", "expand"]
    if nd < MAX_DIMS:
        ops.append("unsqueeze")
    if nd:
        ops.append("transpose")
    if nd and a.shape[0] > 0:
        ops.append("int")
    op = data.draw(st.sampled_from(ops), label="op")
    if op == "permute":
        perm = data.draw(st.permutations(range(nd)))
        return t.permute(*perm), a.transpose(perm)
    if op == "transpose":
        d0, d1 = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
        return t.transpose(d0, d1), np.swapaxes(a, d0, d1)
    if op == "slice":
        index = _slices(data, a.shape)
        return t[index], a[(*index, Ellipsis)]
    if op == "int":
        dim = data.draw(st.integers(0, nd - 1))
        n = a.shape[dim]
        if n == 0:
            return t, a
        i = data.draw(st.integers(-n, n - 1))
        index = (slice(None),) * dim + (i,)
        return t[index], a[(*index, Ellipsis)]
    if op == "unsqueeze":
        dim = data.draw(st.integers(-nd - 1, nd))
        return t.unsqueeze(dim), np.expand_dims(a, dim)
    if op == "squeeze":
        if nd == 0 or data.draw(st.booleans()):
            return t.squeeze(), np.squeeze(a)
        dim = data.draw(st.integers(-nd, nd - 1))
        return t.squeeze(dim), np.squeeze(a, axis=dim) if a.shape[dim] == 1 else a
    if op == "expand":
        lead = data.draw(st.lists(st.integers(0, 3), max_size=MAX_DIMS - nd))
        sizes = list(lead)
        for n in a.shape:
            choices = [-1, n] + ([0, 2, 3] if n == 1 else [])
            sizes.append(data.draw(st.sampled_from(choices)))
        resolved = tuple(lead) + tuple(
            n if s == -1 else s for s, n in zip(sizes[len(lead) :], a.shape, strict=True)
        )
        return t.expand(*sizes), np.broadcast_to(a, resolved)
    if op == "flatten":
        if nd == 0:
            return t.flatten(), a.reshape(1)
        start = data.draw(st.integers(-nd, nd - 1))
        end = data.draw(st.integers(start % nd, nd - 1))
        merged = int(np.prod(a.shape[start % nd : end + 1]))
        return t.flatten(start, end), a.reshape(
            a.shape[: start % nd] + (merged,) + a.shape[end + 1 :]
        )
    new_shape = data.draw(shapes_with_numel(a.size).filter(lambda s: len(s) <= MAX_DIMS))
    request = new_shape
    if a.size and new_shape and data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(new_shape) - 1))
        request = new_shape[:k] + (-1,) + new_shape[k + 1 :]
    return t.reshape(request), a.reshape(new_shape)


@FAST
@given(nonempty_shapes, st.data())
def test_chains_of_views_match_numpy_and_write_through(shape, data):
    base, x = arange_pair(shape)
    t, a = x, base
    for _ in range(data.draw(st.integers(1, 4), label="chain length")):
        t, a = random_view(data, t, a)
        assert t.shape == a.shape
        np.testing.assert_array_equal(t.numpy(), a)

    if a.size == 0:
        return
    shares = np.shares_memory(a, base)
    assert (t.untyped_storage() is x.untyped_storage()) == shares
    if not shares:  # reshape had to copy: a fresh contiguous tensor
        assert t.is_contiguous() and t.storage_offset() == 0
        return
    assert_same_view(t, a, base)

    aliased = any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape, strict=True))
    if aliased:  # several indices read one element (expand): writes would be ambiguous
        return
    where = a.copy()  # storage positions, since base holds arange
    src = -1 - np.arange(a.size, dtype=np.int64).reshape(a.shape)
    how = data.draw(st.sampled_from(["copy_", "setitem", "fill_"]), label="write")
    version = x._version
    if how == "copy_":
        assert t.copy_(minitorch.tensor(src)) is t
    elif how == "setitem":
        t[...] = minitorch.tensor(src)
    else:
        src = np.full(a.shape, -7, dtype=np.int64)
        assert t.fill_(-7) is t
    expected = np.arange(base.size, dtype=np.int64)
    expected[where.ravel()] = src.ravel()
    np.testing.assert_array_equal(base.ravel(), expected)  # the base sees the write
    np.testing.assert_array_equal(x.numpy().ravel(), expected)
    np.testing.assert_array_equal(t.numpy(), src)
    assert x._version > version  # the write is counted on the shared storage


@FAST
@given(nonempty_shapes, st.data())
def test_view_succeeds_exactly_when_numpy_can_reshape_without_copy(shape, data):
    base, x = arange_pair(shape)
    t, a = x, base
    for _ in range(data.draw(st.integers(0, 3))):
        t, a = random_view(data, t, a)
    new_shape = data.draw(shapes_with_numel(a.size))
    try:
        expected = np.reshape(a, new_shape, copy=False)
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(RuntimeError, match=r"^view: .*reshape"):
            t.view(new_shape)
        r = t.reshape(new_shape)  # reshape copies instead
        assert r.untyped_storage() is not t.untyped_storage()
        np.testing.assert_array_equal(r.numpy(), a.reshape(new_shape))
        return
    v = t.view(*new_shape)
    assert v.untyped_storage() is t.untyped_storage()
    assert v.shape == expected.shape
    np.testing.assert_array_equal(v.numpy(), expected)
    assert strides_agree(v.stride(), elem_strides(expected), expected.shape)
    assert v.storage_offset() == t.storage_offset()


@FAST
@given(nonempty_shapes, st.data())
def test_is_contiguous_matches_numpy_flag(shape, data):
    base, x = arange_pair(shape)
    t, a = x, base
    for _ in range(data.draw(st.integers(0, 3))):
        t, a = random_view(data, t, a)
    assert t.is_contiguous() == a.flags.c_contiguous, (t.shape, t.stride())
    c = t.contiguous()
    assert c.is_contiguous()
    assert (c is t) == t.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), a)


def test_is_contiguous_examples():
    x = minitorch.arange(12).view(3, 4)
    assert x.is_contiguous() and not x.T.is_contiguous()
    assert x[1:].is_contiguous() and not x[:, 1:].is_contiguous()
    assert x[::2][:1].is_contiguous()  # shape (1, 4), strides (8, 1): size-1 dims don't count
    assert minitorch.zeros(3, 1).T.is_contiguous()  # shape (1, 3), strides (1, 1)
    assert not x[:, 1:2].is_contiguous()  # elements 1, 5, 9
    assert x.unsqueeze(1).is_contiguous() and x[None, :, None].is_contiguous()
    assert not x[:1].expand(2, 4).is_contiguous()
    assert x[:, 0:0].is_contiguous()  # PyTorch: a tensor with no elements is contiguous


# --- slicing ------------------------------------------------------------------------------
@st.composite
def basic_indices(draw, shape):
    """ints, positive-step slices, None and at most one Ellipsis, valid for ``shape``."""

    def items_for(dims):
        items = []
        for n in dims:
            if draw(st.booleans()):
                items.append(None)
            if n and draw(st.integers(0, 2)) == 0:
                items.append(draw(st.integers(-n, n - 1)))
            else:
                bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
                step = draw(st.sampled_from([None, 1, 2, 3, 5]))
                items.append(slice(draw(bound), draw(bound), step))
        return items

    nd = len(shape)
    if draw(st.booleans()):  # dims before and after an Ellipsis
        lead = draw(st.integers(0, nd))
        trail = draw(st.integers(0, nd - lead))
        items = items_for(shape[:lead]) + [Ellipsis] + items_for(shape[nd - trail :])
    else:
        items = items_for(shape[: draw(st.integers(0, nd))])
    if draw(st.booleans()):
        items.append(None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare item, not a tuple
    return tuple(items)


@FAST
@given(small_shapes, st.data())
def test_basic_indexing_is_a_view_matching_numpy(shape, data):
    base, x = arange_pair(shape)
    index = data.draw(basic_indices(shape))
    items = index if isinstance(index, tuple) else (index,)
    if not any(i is Ellipsis for i in items):
        items = (*items, Ellipsis)  # so that numpy returns a 0-d view, not a scalar
    a = base[items]
    t = x[index]
    assert t.shape == a.shape
    assert t.untyped_storage() is x.untyped_storage()
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.stride() == elem_strides(a) or a.size == 0
    if a.size:
        assert t.storage_offset() == offset_in(a, base)


def test_slicing_examples():
    base, x = arange_pair((3, 4, 5))
    y = x[1, ::2, 1:4]
    assert y.shape == (2, 3) and y.stride() == (10, 1) and y.storage_offset() == 21
    assert y.tolist() == [[21, 22, 23], [31, 32, 33]]
    z = x[..., None, -1]
    assert z.shape == (3, 4, 1) and z.stride() == (20, 5, 0) and z.storage_offset() == 4
    np.testing.assert_array_equal(z.numpy(), base[..., None, -1])
    assert x[None].shape == (1, 3, 4, 5)
    assert x[np.int64(2)].storage_offset() == 40
    assert x[1:1].shape == (0, 4, 5)


def test_empty_slice_past_the_end_of_storage_is_allowed():
    # PyTorch: x[3:, 2:] is an empty (0, 2) view; its offset (14) lies past the storage end.
    base, x = arange_pair((3, 4))
    y = x[3:, 2:]
    assert y.shape == (0, 2)
    assert y.numel() == 0 and y.tolist() == []
    assert y.untyped_storage() is x.untyped_storage()


# --- individual view ops: strides against numpy ---------------------------------------------
@FAST
@given(small_shapes, st.data())
def test_permute_and_transpose_strides_match_numpy(shape, data):
    base, x = arange_pair(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    assert_same_view(x.permute(*perm), base.transpose(perm), base)
    assert_same_view(x.permute(perm), base.transpose(perm), base)
    assert_same_view(x.T, base.T, base)
    if shape:
        d0, d1 = (
            data.draw(st.integers(-len(shape), len(shape) - 1)),
            data.draw(st.integers(-len(shape), len(shape) - 1)),
        )
        assert_same_view(x.transpose(d0, d1), np.swapaxes(base, d0, d1), base)
        assert_same_view(minitorch.transpose(x, d0, d1), np.swapaxes(base, d0, d1), base)


def test_transpose_and_t_of_small_tensors():
    x = minitorch.tensor(2.5)
    y = x.transpose(0, 0)  # PyTorch allows dim 0 / -1 on a 0-d tensor and returns a view
    assert y.shape == () and y.item() == 2.5
    assert y.untyped_storage() is x.untyped_storage()
    v = minitorch.arange(3)
    assert v.t().shape == (3,)
    m = minitorch.arange(6).view(2, 3)
    assert m.t().stride() == (1, 3) and m.mT.stride() == (1, 3)


@FAST
@given(small_shapes, st.data())
def test_expand_strides_match_numpy_broadcast_to(shape, data):
    base, x = arange_pair(shape)
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    sizes = [data.draw(st.sampled_from([-1, n] + ([0, 3] if n == 1 else []))) for n in shape]
    target = tuple(lead) + tuple(n if s == -1 else s for s, n in zip(sizes, shape, strict=True))
    e = x.expand(*lead, *sizes)
    a = np.broadcast_to(base, target)
    assert e.shape == a.shape
    assert e.untyped_storage() is x.untyped_storage()
    np.testing.assert_array_equal(e.numpy(), a)
    assert strides_agree(e.stride(), elem_strides(a), a.shape)
    assert x.expand_as(minitorch.zeros(target)).stride() == e.stride()
    assert minitorch.broadcast_to(x, target).stride() == e.stride()


@FAST
@given(small_shapes, st.data())
def test_squeeze_and_unsqueeze_match_numpy(shape, data):
    base, x = arange_pair(shape)
    assert_same_view(x.squeeze(), np.squeeze(base), base)
    nd = len(shape)
    dim = data.draw(st.integers(-nd - 1, nd))
    u = x.unsqueeze(dim)
    assert u.shape == np.expand_dims(base, dim).shape
    assert u.untyped_storage() is x.untyped_storage()
    np.testing.assert_array_equal(u.numpy(), np.expand_dims(base, dim))
    # PyTorch's stride for the new dim: stride * size of the dim it is put in front of, else 1
    d = dim % (nd + 1)
    expected = x.stride()[d] * shape[d] if d < nd else 1
    assert u.stride() == x.stride()[:d] + (expected,) + x.stride()[d:]
    assert u.squeeze(dim).shape == shape
    if nd:
        k = data.draw(st.integers(-nd, nd - 1))
        expected_shape = np.squeeze(base, axis=k).shape if shape[k] == 1 else shape
        assert x.squeeze(k).shape == expected_shape
        assert minitorch.squeeze(x, (k,)).shape == expected_shape


def test_squeeze_and_unsqueeze_examples():
    x = minitorch.zeros(2, 1, 3, 1)
    assert x.squeeze().shape == (2, 3) and x.squeeze().stride() == (3, 1)
    assert x.squeeze(1).shape == (2, 3, 1)
    assert x.squeeze(0).shape == (2, 1, 3, 1)  # not size 1: unchanged, as in PyTorch
    assert x.squeeze((1, 3)).shape == (2, 3)
    y = minitorch.arange(6).view(2, 3).T  # strides (1, 3)
    assert y.unsqueeze(0).stride() == (3, 1, 3)
    assert y.unsqueeze(1).stride() == (1, 6, 3)
    assert y.unsqueeze(-1).stride() == (1, 3, 1)
    assert minitorch.tensor(1.0).unsqueeze(0).shape == (1,)


@FAST
@given(small_shapes, st.data())
def test_flatten_matches_numpy(shape, data):
    base, x = arange_pair(shape)
    f = x.flatten()
    assert f.shape == (base.size,)
    assert f.untyped_storage() is x.untyped_storage()  # contiguous: a view
    np.testing.assert_array_equal(f.numpy(), base.reshape(-1))
    if shape:
        nd = len(shape)
        start = data.draw(st.integers(0, nd - 1))
        end = data.draw(st.integers(start, nd - 1))
        merged = int(np.prod(shape[start : end + 1]))
        g = minitorch.flatten(x, start - nd, end)
        assert g.shape == shape[:start] + (merged,) + shape[end + 1 :]
        np.testing.assert_array_equal(g.numpy(), base.reshape(g.shape))
        t = x.T.flatten()  # a transposed tensor must be copied to flatten
        np.testing.assert_array_equal(t.numpy(), base.T.reshape(-1))
        if nd > 1 and base.size > 1 and sum(n > 1 for n in shape) > 1:
            assert t.untyped_storage() is not x.untyped_storage()


def test_reshape_views_when_it_can_and_copies_when_it_must():
    base, x = arange_pair((2, 3, 4))
    r = x.reshape(6, -1)
    assert r.shape == (6, 4) and r.stride() == (4, 1)
    assert r.untyped_storage() is x.untyped_storage()
    p = x.permute(2, 0, 1)  # (4, 2, 3), strides (1, 12, 4)
    m = p.reshape(4, 6)  # the last two dims are back to back: still a view
    assert m.untyped_storage() is x.untyped_storage() and m.stride() == (1, 4)
    c = p.reshape(-1)
    assert c.untyped_storage() is not x.untyped_storage() and c.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), base.transpose(2, 0, 1).reshape(-1))
    assert x.view_as(r).untyped_storage() is x.untyped_storage()
    assert p.reshape_as(minitorch.zeros(24)).tolist() == c.tolist()
    assert minitorch.reshape(x, (24,)).stride() == (1,)
    assert minitorch.view(x, 4, 6).stride() == (6, 1)
    assert minitorch.tensor(5.0).view(1, 1).shape == (1, 1)
    assert minitorch.zeros(0, 3).view(3, 0, 5).shape == (3, 0, 5)


# --- as_strided ---------------------------------------------------------------------------
def test_as_strided_reads_the_storage_with_any_layout():
    base, x = arange_pair((12,))
    w = x.as_strided((3, 4), (2, 1), 1)  # overlapping sliding windows
    np.testing.assert_array_equal(
        w.numpy(), np.lib.stride_tricks.as_strided(base[1:], (3, 4), (16, 8))
    )
    assert w.stride() == (2, 1) and w.storage_offset() == 1
    assert w.untyped_storage() is x.untyped_storage()
    d = minitorch.as_strided(x, (3,), (5,))
    assert d.tolist() == [0, 5, 10]
    assert x.as_strided((2, 2), (0, 0), 11).tolist() == [[11, 11], [11, 11]]
    # the offset counts from the start of the storage, not from the view it is called on
    v = x[4:]
    assert v.as_strided((2,), (1,), 0).tolist() == [0, 1]


def test_as_strided_default_offset_is_the_input_offset():
    # PyTorch: storage_offset=None keeps the input's offset, so x[4:].as_strided((2,), (1,))
    # reads elements 4 and 5.
    _, x = arange_pair((12,))
    v = x[4:].as_strided((2,), (1,))
    assert v.storage_offset() == 4
    assert v.tolist() == [4, 5]


# --- writes through views -----------------------------------------------------------------
def test_writes_through_views_are_seen_by_the_base():
    base, x = arange_pair((3, 4))
    x.T[1:, ::2] = minitorch.tensor(-1)  # a transposed, stepped view
    expected = np.arange(12).reshape(3, 4)
    expected.T[1:, ::2] = -1
    np.testing.assert_array_equal(base, expected)
    x[2].fill_(9)
    expected[2] = 9
    np.testing.assert_array_equal(x.numpy(), expected)
    x[:, 0].copy_(minitorch.tensor([7, 8, 9]))
    expected[:, 0] = [7, 8, 9]
    np.testing.assert_array_equal(x.numpy(), expected)
    x[0, 1:3].zero_()
    expected[0, 1:3] = 0
    np.testing.assert_array_equal(x.numpy(), expected)
    x.view(12)[5] = 100
    expected.reshape(12)[5] = 100
    np.testing.assert_array_equal(x.numpy(), expected)


def test_in_place_arithmetic_writes_into_the_view():
    x = minitorch.zeros(2, 3)
    col = x[:, 1]
    assert col.add_(minitorch.tensor([1.0, 2.0])) is col
    col.mul_(3.0)
    col.sub_(1.0)
    col.div_(minitorch.tensor(2.0))
    assert x.tolist() == [[0.0, 1.0, 0.0], [0.0, 2.5, 0.0]]


def test_copy_broadcasts_and_casts_into_the_destination():
    x = minitorch.zeros(2, 3, dtype=minitorch.int32)
    x.copy_(minitorch.tensor([1.9, -2.9, 3.0]))
    assert x.dtype is minitorch.int32
    assert x.tolist() == [[1, -2, 3], [1, -2, 3]]
    x[1] = 7
    x[0, 0] = minitorch.tensor(5)
    assert x.tolist() == [[5, -2, 3], [7, 7, 7]]


def test_setitem_with_a_mask_and_an_index_tensor_writes_in_place():
    base, x = arange_pair((2, 3))
    x[x > 3] = 0
    x[minitorch.tensor([0]), minitorch.tensor([2])] = -1
    np.testing.assert_array_equal(base, [[0, 1, -1], [3, 0, 0]])


# --- advanced indexing copies -------------------------------------------------------------
@FAST
@given(nonempty_shapes.filter(lambda s: len(s) > 0), st.data())
def test_advanced_indexing_matches_numpy_and_copies(shape, data):
    base, x = arange_pair(shape)
    n = shape[0]
    picks = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5))
    kind = data.draw(st.sampled_from(["list", "tensor", "mask", "second-dim"]))
    if kind == "list":
        t, a = x[picks], base[np.asarray(picks, dtype=np.int64)]
    elif kind == "tensor":
        t, a = x[minitorch.tensor(picks, dtype=minitorch.int64)], base[np.asarray(picks, int)]
    elif kind == "mask":
        mask = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        t, a = x[minitorch.tensor(mask)], base[mask]
    else:
        if len(shape) < 2:
            return
        m = shape[1]
        cols = data.draw(st.lists(st.integers(-m, m - 1), min_size=1, max_size=4))
        t, a = x[:, cols], base[:, cols]
    assert t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.untyped_storage() is not x.untyped_storage()
    assert t.is_contiguous()
    if t.numel():
        t.fill_(-1)  # writing to the copy leaves the original alone
        np.testing.assert_array_equal(base, np.arange(base.size).reshape(shape))


def test_boolean_mask_from_a_comparison_selects_like_numpy():
    base, x = arange_pair((3, 4))
    picked = x[(x > 2) & (x < 7) | (x == 11)]
    assert picked.tolist() == [3, 4, 5, 6, 11]
    assert picked.untyped_storage() is not x.untyped_storage()
