"""Graded tests for chapter 01 (tensors). ``nb`` holds what the notebook defined.

Each test calls the learner's function and says, in one line, what it expected.
The same functions run under pytest, under ``check("01.x")`` and under the grader.
"""

import numpy as np

import minitorch
from minitorch.grading import exercise


def _same(got, expected, call: str) -> None:
    assert got == expected, f"{call} returned {got!r}, expected {expected!r}"


# --- 01.1 contiguous strides --------------------------------------------------------------
@exercise("01.1")
def test_strides_of_common_shapes(nb):
    for shape, expected in [((2, 3), (3, 1)), ((4,), (1,)), ((2, 3, 4), (12, 4, 1)), ((), ())]:
        _same(tuple(nb.contiguous_strides(shape)), expected, f"contiguous_strides({shape})")


@exercise("01.1")
def test_strides_match_numpy(nb):
    rng = np.random.default_rng(1)
    for _ in range(20):
        shape = tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(1, 5)))
        expected = tuple(s // 8 for s in np.zeros(shape).strides)
        _same(tuple(nb.contiguous_strides(shape)), expected, f"contiguous_strides({shape})")


@exercise("01.1")
def test_strides_agree_with_minitorch_tensors(nb):
    t = minitorch.zeros(3, 1, 5)
    _same(tuple(nb.contiguous_strides(t.shape)), t.stride(), f"contiguous_strides({t.shape})")


# --- 01.2 index -> storage position -------------------------------------------------------
@exercise("01.2")
def test_position_in_a_contiguous_matrix(nb):
    _same(nb.index_to_position((1, 2), (3, 1)), 5, "index_to_position((1, 2), (3, 1))")
    _same(nb.index_to_position((0, 0), (3, 1)), 0, "index_to_position((0, 0), (3, 1))")


@exercise("01.2")
def test_position_with_offset_and_transposed_strides(nb):
    _same(nb.index_to_position((2, 1), (1, 3), 4), 9, "index_to_position((2, 1), (1, 3), 4)")
    _same(nb.index_to_position((5,), (0,), 2), 2, "index_to_position((5,), (0,), 2)")


@exercise("01.2")
def test_position_reads_the_same_element_as_a_real_view(nb):
    base = minitorch.arange(24).view(2, 3, 4)
    view = base.permute(2, 0, 1)[1:, :, 1:]
    storage = view.untyped_storage().tolist()
    for index in [(0, 0, 0), (2, 1, 1), (1, 0, 0), (0, 1, 1)]:
        pos = nb.index_to_position(index, view.stride(), view.storage_offset())
        got, expected = storage[pos], view[index].item()
        assert got == expected, (
            f"index_to_position({index}, {view.stride()}, {view.storage_offset()}) = {pos}, "
            f"which holds {got}, but that element of the view is {expected}"
        )


# --- 01.3 storage position -> index -------------------------------------------------------
@exercise("01.3")
def test_unravel_small_cases(nb):
    _same(tuple(nb.unravel_index(5, (2, 3))), (1, 2), "unravel_index(5, (2, 3))")
    _same(tuple(nb.unravel_index(0, (4,))), (0,), "unravel_index(0, (4,))")
    _same(tuple(nb.unravel_index(23, (2, 3, 4))), (1, 2, 3), "unravel_index(23, (2, 3, 4))")


@exercise("01.3")
def test_unravel_matches_numpy_everywhere(nb):
    for shape in [(3, 4), (2, 1, 5), (2, 3, 2, 2)]:
        for pos in range(int(np.prod(shape))):
            expected = tuple(int(i) for i in np.unravel_index(pos, shape))
            _same(tuple(nb.unravel_index(pos, shape)), expected, f"unravel_index({pos}, {shape})")


# --- 01.4 broadcast_shapes ----------------------------------------------------------------
@exercise("01.4")
def test_broadcast_compatible_shapes(nb):
    cases = [
        (((2, 3), (3,)), (2, 3)),
        (((2, 1), (1, 4)), (2, 4)),
        (((5, 1, 3), (4, 1)), (5, 4, 3)),
        (((1,), ()), (1,)),
        (((3, 2),), (3, 2)),
        (((2, 1, 1), (1, 3, 1), (1, 1, 4)), (2, 3, 4)),
    ]
    for shapes, expected in cases:
        got = tuple(nb.broadcast_shapes(*shapes))
        _same(got, expected, "broadcast_shapes" + repr(shapes))


@exercise("01.4")
def test_broadcast_matches_numpy(nb):
    rng = np.random.default_rng(4)
    for _ in range(30):
        a = tuple(int(s) for s in rng.choice([1, 1, 2, 3], size=rng.integers(0, 4)))
        b = tuple(int(s) for s in rng.choice([1, 1, 2, 3], size=rng.integers(0, 4)))
        try:
            expected = np.broadcast_shapes(a, b)
        except ValueError:
            continue
        _same(tuple(nb.broadcast_shapes(a, b)), expected, f"broadcast_shapes({a}, {b})")


@exercise("01.4")
def test_broadcast_incompatible_raises_naming_shapes(nb):
    try:
        got = nb.broadcast_shapes((2, 3), (4,))
    except ValueError as err:
        message = str(err)
        assert "(2, 3)" in message and "(4,)" in message, (
            f"the ValueError should name both shapes, but its message is {message!r}"
        )
        return
    raise AssertionError(
        f"broadcast_shapes((2, 3), (4,)) returned {got!r}; it should raise ValueError"
    )


# --- 01.5 broadcast index -----------------------------------------------------------------
@exercise("01.5")
def test_broadcast_index_examples(nb):
    cases = [
        (((1, 2), (2, 3), (3,)), (2,)),
        (((1, 2), (2, 3), (1, 3)), (0, 2)),
        (((1, 2), (2, 3), (2, 1)), (1, 0)),
        (((4, 1, 2), (5, 3, 4), (3, 1)), (1, 0)),
        (((0, 0), (2, 2), ()), ()),
    ]
    for args, expected in cases:
        _same(tuple(nb.broadcast_index(*args)), expected, "broadcast_index" + repr(args))


@exercise("01.5")
def test_broadcast_index_reproduces_numpy_broadcasting(nb):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 1, 4))
    b = rng.standard_normal((2, 1))
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    expected = a + b
    for out_index in np.ndindex(*out_shape):
        ia = tuple(nb.broadcast_index(out_index, out_shape, a.shape))
        ib = tuple(nb.broadcast_index(out_index, out_shape, b.shape))
        got = a[ia] + b[ib]
        assert np.isclose(got, expected[out_index]), (
            f"at output index {out_index}: inputs read at {ia} and {ib} give {got:.4f}, "
            f"but numpy's broadcast sum is {expected[out_index]:.4f}"
        )


# --- 01.6 permute as a stride shuffle -----------------------------------------------------
@exercise("01.6")
def test_permute_values_match_numpy(nb):
    t = minitorch.arange(24).view(2, 3, 4)
    for dims in [(1, 0, 2), (2, 0, 1), (0, 1, 2), (2, 1, 0)]:
        p = nb.permute(t, dims)
        expected = np.transpose(t.numpy(), dims)
        assert tuple(p.shape) == expected.shape, (
            f"permute(t, {dims}) has shape {tuple(p.shape)}, expected {expected.shape}"
        )
        assert np.array_equal(p.numpy(), expected), f"permute(t, {dims}) has the wrong values"


@exercise("01.6")
def test_permute_copies_nothing(nb):
    t = minitorch.arange(6).view(2, 3)
    p = nb.permute(t, (1, 0))
    assert p.untyped_storage() is t.untyped_storage(), (
        "permute(t, (1, 0)) made a new storage; it should be a view of t's storage "
        "(use t.as_strided(size, stride, t.storage_offset()))"
    )
    _same(p.stride(), (1, 3), "permute(t, (1, 0)).stride()")
    p[2, 1] = 100
    assert t[1, 2].item() == 100, "writing p[2, 1] through the view did not change t[1, 2]"


@exercise("01.6")
def test_permute_of_a_sliced_view_keeps_its_offset(nb):
    base = minitorch.arange(30).view(5, 6)
    t = base[1:4, 2:]
    p = nb.permute(t, (1, 0))
    _same(p.storage_offset(), t.storage_offset(), "permute(t, (1, 0)).storage_offset()")
    assert np.array_equal(p.numpy(), t.numpy().T), "permute of a sliced view has wrong values"


# --- 01.7 sum along a dim over raw storage ------------------------------------------------
def _check_sum(nb, t, dim):
    got = nb.sum_dim(t, dim)
    expected = t.numpy().sum(axis=dim)
    assert tuple(got.shape) == expected.shape, (
        f"sum_dim(t of shape {tuple(t.shape)}, dim={dim}) has shape {tuple(got.shape)}, "
        f"expected {expected.shape}"
    )
    assert np.allclose(got.numpy(), expected, atol=1e-4), (
        f"sum_dim(t of shape {tuple(t.shape)}, strides {t.stride()}, dim={dim}) gives "
        f"{got.numpy().round(3).tolist()}, expected {expected.round(3).tolist()}"
    )


@exercise("01.7")
def test_sum_dim_of_contiguous_tensors(nb):
    t = minitorch.arange(12).view(3, 4).float()
    for dim in (0, 1):
        _check_sum(nb, t, dim)


@exercise("01.7")
def test_sum_dim_of_views_reads_through_strides(nb):
    minitorch.manual_seed(7)
    t = minitorch.randn(4, 5, 3)
    for view in (t.permute(2, 0, 1), t[1:, ::2, :], t.transpose(0, 2)[:, 1:3]):
        for dim in range(view.ndim):
            _check_sum(nb, view, dim)


@exercise("01.7")
def test_sum_dim_of_a_broadcast_view(nb):
    t = minitorch.tensor([1.0, 2.0, 3.0]).expand(4, 3)
    _check_sum(nb, t, 0)
    _check_sum(nb, t, 1)
