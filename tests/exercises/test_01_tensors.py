"""Graded tests for chapter 01 (tensors).

Each test is a *judge* (``@exercise``) with the *probes* it uses next to it: a probe runs
the learner's function (``nb.contiguous_strides``, ...) on inputs the judge sends and
returns what came out, as plain data; the judge compares with the reference here, and
says in one line what it expected. Inputs are fixed cases (the edges learners miss) plus
cases drawn afresh for each grading run (``run.rng``), so that no answer can be looked up.
"""

import numpy as np

import minitorch
from minitorch.grading import exercise, probe, tensor_data


def _same(got, expected, call: str) -> None:
    assert got == expected, f"{call} returned {got!r}, expected {expected!r}"


def _as_tuple(got, call: str) -> tuple:
    assert isinstance(got, (tuple, list)), f"{call} returned {got!r}, expected a tuple"
    return tuple(got)


def _shapes(run, count, low=1, high=5, max_dims=4):
    return [
        tuple(int(s) for s in run.rng.integers(low, high, size=run.rng.integers(1, max_dims + 1)))
        for _ in range(count)
    ]


def _strides_of(shape):
    return tuple(s // 8 for s in np.zeros(shape).strides) if all(shape) else None


# --- 01.1 contiguous strides --------------------------------------------------------------
@probe
def strides(nb, shapes):
    return [nb.contiguous_strides(shape) for shape in shapes]


@exercise("01.1")
def test_strides_of_common_shapes(run):
    cases = [((2, 3), (3, 1)), ((4,), (1,)), ((2, 3, 4), (12, 4, 1)), ((), ())]
    got = run(strides, [shape for shape, _ in cases])
    for (shape, expected), g in zip(cases, got, strict=True):
        call = f"contiguous_strides({shape})"
        _same(_as_tuple(g, call), expected, call)


@exercise("01.1")
def test_strides_match_numpy(run):
    shapes = _shapes(run, 20)
    for shape, g in zip(shapes, run(strides, shapes), strict=True):
        call = f"contiguous_strides({shape})"
        _same(_as_tuple(g, call), _strides_of(shape), call)


@exercise("01.1")
def test_strides_agree_with_minitorch_tensors(run):
    shape = (3, 1, 5)
    (g,) = run(strides, [shape])
    call = f"contiguous_strides({shape})"
    _same(_as_tuple(g, call), minitorch.zeros(*shape).stride(), call)


# --- 01.2 index -> storage position -------------------------------------------------------
@probe
def positions(nb, cases):
    return [nb.index_to_position(*args) for args in cases]


@exercise("01.2")
def test_position_in_a_contiguous_matrix(run):
    cases = [(((1, 2), (3, 1)), 5), (((0, 0), (3, 1)), 0)]
    for (args, expected), g in zip(cases, run(positions, [a for a, _ in cases]), strict=True):
        _same(g, expected, f"index_to_position{args}")


@exercise("01.2")
def test_position_with_offset_and_transposed_strides(run):
    cases = [(((2, 1), (1, 3), 4), 9), (((5,), (0,), 2), 2)]
    for (args, expected), g in zip(cases, run(positions, [a for a, _ in cases]), strict=True):
        _same(g, expected, f"index_to_position{args}")


@exercise("01.2")
def test_position_reads_the_same_element_as_a_real_view(run):
    base = minitorch.arange(24).view(2, 3, 4)
    view = base.permute(2, 0, 1)[1:, :, 1:]
    storage = view.untyped_storage().tolist()
    indices = [(0, 0, 0), (2, 1, 1), (1, 0, 0), (0, 1, 1)]
    indices += [tuple(int(run.rng.integers(0, n)) for n in view.shape) for _ in range(4)]
    cases = [(index, view.stride(), view.storage_offset()) for index in indices]
    for index, pos in zip(indices, run(positions, cases), strict=True):
        assert type(pos) is int and 0 <= pos < len(storage), (
            f"index_to_position({index}, {view.stride()}, {view.storage_offset()}) returned "
            f"{pos!r}, which is not a position in the storage of {len(storage)} elements"
        )
        got, expected = storage[pos], view[index].item()
        assert got == expected, (
            f"index_to_position({index}, {view.stride()}, {view.storage_offset()}) = {pos}, "
            f"which holds {got}, but that element of the view is {expected}"
        )


# --- 01.3 storage position -> index -------------------------------------------------------
@probe
def unravel(nb, cases):
    return [nb.unravel_index(pos, shape) for pos, shape in cases]


def _check_unravel(run, cases):
    for (pos, shape), g in zip(cases, run(unravel, cases), strict=True):
        expected = tuple(int(i) for i in np.unravel_index(pos, shape))
        call = f"unravel_index({pos}, {shape})"
        _same(_as_tuple(g, call), expected, call)


@exercise("01.3")
def test_unravel_small_cases(run):
    _check_unravel(run, [(5, (2, 3)), (0, (4,)), (23, (2, 3, 4))])


@exercise("01.3")
def test_unravel_matches_numpy_everywhere(run):
    shapes = [(3, 4), (2, 1, 5), (2, 3, 2, 2), *_shapes(run, 2)]
    _check_unravel(run, [(pos, s) for s in shapes for pos in range(int(np.prod(s)))])


# --- 01.4 broadcast_shapes ----------------------------------------------------------------
@probe
def broadcast(nb, cases):
    return [nb.broadcast_shapes(*shapes) for shapes in cases]


@exercise("01.4")
def test_broadcast_compatible_shapes(run):
    cases = [
        (((2, 3), (3,)), (2, 3)),
        (((2, 1), (1, 4)), (2, 4)),
        (((5, 1, 3), (4, 1)), (5, 4, 3)),
        (((1,), ()), (1,)),
        (((3, 2),), (3, 2)),
        (((2, 1, 1), (1, 3, 1), (1, 1, 4)), (2, 3, 4)),
    ]
    got = run(broadcast, [shapes for shapes, _ in cases])
    for (shapes, expected), g in zip(cases, got, strict=True):
        call = "broadcast_shapes" + repr(shapes)
        _same(_as_tuple(g, call), expected, call)


@exercise("01.4")
def test_broadcast_matches_numpy(run):
    cases = []
    while len(cases) < 30:
        a = tuple(int(s) for s in run.rng.choice([1, 1, 2, 3], size=run.rng.integers(0, 4)))
        b = tuple(int(s) for s in run.rng.choice([1, 1, 2, 3], size=run.rng.integers(0, 4)))
        try:
            cases.append(((a, b), np.broadcast_shapes(a, b)))
        except ValueError:
            continue
    got = run(broadcast, [shapes for shapes, _ in cases])
    for ((a, b), expected), g in zip(cases, got, strict=True):
        call = f"broadcast_shapes({a}, {b})"
        _same(_as_tuple(g, call), expected, call)


@exercise("01.4")
def test_broadcast_incompatible_raises_naming_shapes(run):
    try:
        got = run(broadcast, [((2, 3), (4,))])[0]
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
@probe
def broadcast_indices(nb, cases):
    return [nb.broadcast_index(*args) for args in cases]


@exercise("01.5")
def test_broadcast_index_examples(run):
    cases = [
        (((1, 2), (2, 3), (3,)), (2,)),
        (((1, 2), (2, 3), (1, 3)), (0, 2)),
        (((1, 2), (2, 3), (2, 1)), (1, 0)),
        (((4, 1, 2), (5, 3, 4), (3, 1)), (1, 0)),
        (((0, 0), (2, 2), ()), ()),
    ]
    got = run(broadcast_indices, [args for args, _ in cases])
    for (args, expected), g in zip(cases, got, strict=True):
        call = "broadcast_index" + repr(args)
        _same(_as_tuple(g, call), expected, call)


@exercise("01.5")
def test_broadcast_index_reproduces_numpy_broadcasting(run):
    a_shape = (3, 1, 4)
    choices = [(2, 1), (1, 4), (4,), (2, 4), (1,), (5, 1, 1, 1)]
    b_shape = choices[int(run.rng.integers(len(choices)))]
    a = run.rng.standard_normal(a_shape)
    b = run.rng.standard_normal(b_shape)
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    expected = a + b
    indices = list(np.ndindex(*out_shape))
    cases = [(i, out_shape, s) for i in indices for s in (a.shape, b.shape)]
    got = run(broadcast_indices, cases)
    for k, out_index in enumerate(indices):
        call = f"broadcast_index({out_index}, {out_shape}, ...)"
        ia, ib = _as_tuple(got[2 * k], call), _as_tuple(got[2 * k + 1], call)
        try:
            value = a[ia] + b[ib]
        except (IndexError, TypeError, ValueError):
            raise AssertionError(
                f"at output index {out_index}: the input indices {ia} (shape {a.shape}) and "
                f"{ib} (shape {b.shape}) are not indices of the inputs"
            ) from None
        assert np.isclose(value, expected[out_index]), (
            f"at output index {out_index}: inputs read at {ia} and {ib} give {value:.4f}, "
            f"but numpy's broadcast sum is {expected[out_index]:.4f}"
        )


# --- 01.6 permute as a stride shuffle -----------------------------------------------------
def _view(spec):
    """A minitorch view from a plain spec: (n, shape, slices or None)."""
    n, shape, slices = spec
    t = minitorch.arange(n).view(*shape)
    if slices is not None:
        t = t[tuple(slice(*s) for s in slices)]
    return t


@probe
def permuted(nb, spec, dims):
    t = _view(spec)
    p = nb.permute(t, dims)
    data = tensor_data(p)
    if data["type"] == "Tensor":
        data["stride"] = tuple(p.stride())
        data["offset"] = p.storage_offset()
        data["shares_storage"] = p.untyped_storage() is t.untyped_storage()
    return data


@probe
def write_through(nb, spec, dims, index, source_index):
    t = _view(spec)
    p = nb.permute(t, dims)
    p[tuple(index)] = 100
    return t[tuple(source_index)].item()


def _permuted(run, spec, dims):
    got = run(permuted, spec, dims)
    assert got["type"] == "Tensor", f"permute(t, {dims}) returned a {got['type']}, not a Tensor"
    return got


@exercise("01.6")
def test_permute_values_match_numpy(run):
    shape = (2, 3, 4)
    all_dims = [(1, 0, 2), (2, 0, 1), (0, 1, 2), (2, 1, 0), tuple(run.rng.permutation(3).tolist())]
    for dims in all_dims:
        got = _permuted(run, (24, shape, None), dims)
        expected = np.transpose(np.arange(24).reshape(shape), dims)
        assert got["shape"] == expected.shape, (
            f"permute(t, {dims}) has shape {got['shape']}, expected {expected.shape}"
        )
        assert np.array_equal(got["values"], expected), f"permute(t, {dims}) has the wrong values"


@exercise("01.6")
def test_permute_copies_nothing(run):
    got = _permuted(run, (6, (2, 3), None), (1, 0))
    assert got["shares_storage"], (
        "permute(t, (1, 0)) made a new storage; it should be a view of t's storage "
        "(use t.as_strided(size, stride, t.storage_offset()))"
    )
    _same(got["stride"], (1, 3), "permute(t, (1, 0)).stride()")
    seen = run(write_through, (6, (2, 3), None), (1, 0), (2, 1), (1, 2))
    assert seen == 100, "writing p[2, 1] through the view did not change t[1, 2]"


@exercise("01.6")
def test_permute_of_a_sliced_view_keeps_its_offset(run):
    spec = (30, (5, 6), ((1, 4), (2, None)))
    t = _view(spec)
    got = _permuted(run, spec, (1, 0))
    _same(got["offset"], t.storage_offset(), "permute(t, (1, 0)).storage_offset()")
    assert np.array_equal(got["values"], t.numpy().T), "permute of a sliced view has wrong values"


# --- 01.7 sum along a dim over raw storage ------------------------------------------------
_VIEWS = {
    "contiguous": lambda t: t,
    "permuted": lambda t: t.permute(2, 0, 1),
    "sliced": lambda t: t[1:, ::2, :],
    "transposed": lambda t: t.transpose(0, 2)[:, 1:3],
    "broadcast": lambda t: t.expand(4, 3),
}


def _sum_input(values, view):
    return _VIEWS[view](minitorch.tensor(values))


@probe
def summed(nb, values, view, dims):
    t = _sum_input(values, view)
    return [tensor_data(nb.sum_dim(t, dim)) for dim in dims]


def _check_sums(run, values, view):
    t = _sum_input(values, view)
    dims = list(range(t.ndim))
    for dim, got in zip(dims, run(summed, values, view, dims), strict=True):
        expected = t.numpy().sum(axis=dim)
        what = f"sum_dim(t of shape {tuple(t.shape)}, strides {t.stride()}, dim={dim})"
        assert got["type"] == "Tensor", f"{what} returned a {got['type']}, not a Tensor"
        assert got["shape"] == expected.shape, (
            f"{what} has shape {got['shape']}, expected {expected.shape}"
        )
        assert np.allclose(got["values"], expected, atol=1e-4), (
            f"{what} gives {np.round(got['values'], 3).tolist()}, expected "
            f"{expected.round(3).tolist()}"
        )


@exercise("01.7")
def test_sum_dim_of_contiguous_tensors(run):
    _check_sums(run, np.arange(12, dtype=np.float32).reshape(3, 4), "contiguous")


@exercise("01.7")
def test_sum_dim_of_views_reads_through_strides(run):
    values = run.rng.standard_normal((4, 5, 3)).astype(np.float32)
    for view in ("permuted", "sliced", "transposed"):
        _check_sums(run, values, view)


@exercise("01.7")
def test_sum_dim_of_a_broadcast_view(run):
    _check_sums(run, np.array([1.0, 2.0, 3.0], dtype=np.float32), "broadcast")
