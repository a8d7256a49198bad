"""Graded tests for chapter 01 (tensors).

Each test is a *judge* (``@exercise``) with the *probes* it uses next to it: a probe runs
the learner's function (``nb.contiguous_strides``, ...) on inputs the judge sends and
returns what came out, as plain data; the judge compares with the reference here, and
says in one line what it expected. Inputs are fixed cases (the edges learners miss: size-0
and size-1 dims, 0-d shapes, negative dims, dtypes) plus cases drawn afresh for each
grading run (``run.rng``), so that no answer can be looked up. Each probe forbids the
ready-made versions of its piece (minitorch's, numpy's, torch's): an answer that calls
them gets no points.
"""

import contextlib
from types import FunctionType

import numpy as np

import minitorch
from minitorch import Tensor, ops, shape
from minitorch.course.grading import exercise, forbid, forbidding, probe, tensor_data
from minitorch.course.grading.delegation import message as delegation_message
from minitorch.course.grading.delegation import refusing_ops
from minitorch.course.grading.judging import checked_array
from minitorch.course.grading.probes import LearnerError


def _same(got, expected, call: str) -> None:
    assert got == expected, f"{call} returned {got!r}, expected {expected!r}"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _as_tuple(got, call: str, exact: bool = True) -> tuple:
    """``got`` as a tuple of ints; ``exact``: the text promises a tuple (not a list)."""
    kinds = (tuple,) if exact else (tuple, list)
    assert isinstance(got, kinds), (
        f"{call} returned {got!r}, a {type(got).__name__}; expected a tuple of ints"
    )
    assert all(_is_int(v) for v in got), (
        f"{call} returned {got!r}; every entry should be an int (use // and %, not /)"
    )
    return tuple(int(v) for v in got)


def _shapes(run, count, low=1, high=5, max_dims=4):
    return [
        tuple(int(s) for s in run.rng.integers(low, high, size=run.rng.integers(1, max_dims + 1)))
        for _ in range(count)
    ]


def _torch_strides(shape_):
    """PyTorch's contiguous strides: a size-0 dim counts as 1."""
    strides, step = [], 1
    for size in reversed(shape_):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


# An array made only to read its strides or shape back (np.zeros(shape).strides) is caught
# by what it cannot do: the tests' shapes too big to allocate (see _HUGE), whose strides,
# indices and broadcasts are plain arithmetic. Calling numpy's constructors is no
# delegation in itself: an honest loop may fill an np.ones or np.zeros buffer.
#: Shapes of 2**50 elements: no array or tensor of them fits in memory.
_HUGE = ((2**20, 2**20, 2**10), (2**25, 1, 2**25), (3, 2**48))
#: What numpy and minitorch say when asked for an array of such a shape.
_ALLOCATION_FAILED = ("Unable to allocate", "array is too big", "maximum supported dimension")


@contextlib.contextmanager
def _no_array_of_the_shape(what):
    """The answer may not have made an array or tensor of a _HUGE shape: an honest loop
    never allocates one, so trying is reading ``what`` off an array (no points)."""
    try:
        yield
    except LearnerError as err:
        said = f"{err} {err.message}"
        if err.kind == "MemoryError" or any(words in said for words in _ALLOCATION_FAILED):
            raise AssertionError(
                delegation_message(f"an array of the shape to read its {what} off")
            ) from None
        raise


_TENSORS = (
    minitorch.zeros,
    minitorch.empty,
    minitorch.ones,
    minitorch.full,
    minitorch.randn,
    minitorch.rand,
    minitorch.randint,
    minitorch.arange,
    minitorch.linspace,
    minitorch.eye,
    minitorch.tensor,
    minitorch.from_numpy,
    minitorch.zeros_like,
    minitorch.empty_like,
    minitorch.ones_like,
    minitorch.full_like,
    minitorch.rand_like,
    minitorch.randn_like,
    Tensor.layout,
)


def _numpy_indexing():
    """numpy's index, broadcast and stride helpers: each does the arithmetic of 01.1-01.5
    (an index from a position and back, a broadcast shape, an array of any shape made
    without memory, as_strided with zero strides). Every index exercise forbids them all,
    so that an answer can't hand its piece to the one its own list left out."""
    from numpy.lib import stride_tricks

    impl = getattr(np.lib, "_stride_tricks_impl", stride_tricks)
    helpers = [
        np.unravel_index,
        np.ravel_multi_index,
        np.broadcast_shapes,
        np.broadcast_arrays,
        np.broadcast_to,
        np.broadcast,
        np.ndindex,
        np.indices,
        np.meshgrid,
        np.ix_,
        stride_tricks.as_strided,
        stride_tricks.sliding_window_view,
    ]
    helpers += [getattr(impl, name) for name in ("_broadcast_shape", "_broadcast_to")]
    helpers += [type(np.mgrid).__getitem__, type(np.ogrid).__getitem__]  # np.mgrid[...]
    return tuple(helpers)


_NUMPY_INDEXING = _numpy_indexing()


def _methods(cls):
    """The functions defined in ``cls``'s body, as ``(cls, name)`` targets: calls to them
    are refused, but an unused import of the class costs nothing (a class target would
    refuse the notebook for holding it)."""
    kinds = (FunctionType, staticmethod, classmethod)
    return tuple((cls, name) for name, value in vars(cls).items() if isinstance(value, kinds))


_ops_refused = refusing_ops  # (the grading package's: see its docstring)


# --- 01.1 contiguous strides --------------------------------------------------------------
STRIDES = forbid(shape.contiguous_strides, Tensor.stride, *_TENSORS, *_NUMPY_INDEXING)


@probe(forbid=STRIDES)
def strides(nb, shapes):
    return [nb.contiguous_strides(s) for s in shapes]


def _check_strides(run, shapes):
    for s, g in zip(shapes, run(strides, shapes), strict=True):
        call = f"contiguous_strides({s})"
        _same(_as_tuple(g, call), _torch_strides(s), call)


# catches: strides in the wrong order; a product that includes the dim's own size; a list
# where the text promises a tuple; 0-d shapes
@exercise("01.1")
def test_strides_of_common_shapes(run):
    _check_strides(run, [(2, 3), (4,), (2, 3, 4), (), (3, 1, 5)])


# catches: a size-0 dim that zeroes every stride before it (PyTorch counts it as 1)
@exercise("01.1")
def test_strides_with_size_zero_dims(run):
    _check_strides(run, [(2, 0, 3), (0,), (4, 0), (0, 4), (0, 0), (1, 0, 1)])


# catches: strides read off an array or a tensor of the shape (np.zeros(shape).strides):
# these shapes are too big to allocate, and their strides are plain arithmetic
@exercise("01.1")
def test_strides_of_shapes_too_big_to_allocate(run):
    with _no_array_of_the_shape("strides"):
        _check_strides(run, list(_HUGE))


# catches: off-by-one products on random shapes; float strides (np.prod of an empty tuple)
@exercise("01.1")
def test_strides_match_pytorch_on_random_shapes(run):
    _check_strides(run, _shapes(run, 20) + _shapes(run, 5, low=0, high=3))


# --- 01.2 index -> storage position -------------------------------------------------------
POSITION = forbid(shape.index_to_position, *_NUMPY_INDEXING)


@probe(forbid=POSITION)
def positions(nb, cases):
    return [nb.index_to_position(*args) for args in cases]


def _check_positions(run, cases):
    for (args, expected), g in zip(cases, run(positions, [a for a, _ in cases]), strict=True):
        call = f"index_to_position{args}"
        assert _is_int(g), f"{call} returned {g!r}, expected the int {expected}"
        _same(int(g), expected, call)


# catches: the sum of index * stride mixed up (reversed strides, products of indices)
@exercise("01.2")
def test_position_in_a_contiguous_matrix(run):
    _check_positions(run, [(((1, 2), (3, 1)), 5), (((0, 0), (3, 1)), 0), (((1, 1), (3, 1)), 4)])


# catches: the offset ignored, or the default offset=0 missing; stride-0 dims; a 0-d index
@exercise("01.2")
def test_position_with_offset_and_transposed_strides(run):
    cases = [(((2, 1), (1, 3), 4), 9), (((5,), (0,), 2), 2), (((), (), 7), 7), (((3,), (2,)), 6)]
    _check_positions(run, cases)


# catches: positions remembered by the index alone (a cache that ignores the strides and
# the offset, so a second layout gets the first one's answer)
@exercise("01.2")
def test_position_of_one_index_in_several_layouts(run):
    cases = [
        (((1, 2), (3, 1)), 5),
        (((1, 2), (4, 1)), 6),
        (((1, 2), (1, 2), 3), 8),
        (((1, 2), (3, 1), 10), 15),
        (((1, 2), (0, 0)), 0),
    ]
    _check_positions(run, cases)


# catches: any formula other than offset + sum(index * stride), on real views
@exercise("01.2")
def test_position_reads_the_same_element_as_a_real_view(run):
    base = minitorch.arange(24).view(2, 3, 4)
    view = base.permute(2, 0, 1)[1:, :, 1:]
    storage = view.untyped_storage().tolist()
    indices = [(0, 0, 0), (2, 1, 1), (1, 0, 0), (0, 1, 1)]
    indices += [tuple(int(run.rng.integers(0, n)) for n in view.shape) for _ in range(4)]
    cases = [(index, view.stride(), view.storage_offset()) for index in indices]
    for index, pos in zip(indices, run(positions, cases), strict=True):
        assert _is_int(pos) and 0 <= pos < len(storage), (
            f"index_to_position({index}, {view.stride()}, {view.storage_offset()}) returned "
            f"{pos!r}, which is not a position in the storage of {len(storage)} elements"
        )
        got, expected = storage[int(pos)], view[index].item()
        assert got == expected, (
            f"index_to_position({index}, {view.stride()}, {view.storage_offset()}) = {pos}, "
            f"which holds {got}, but that element of the view is {expected}"
        )


# --- 01.3 storage position -> index -------------------------------------------------------
# catches: the index read off numpy's grids of indices (np.indices, np.meshgrid)
UNRAVEL = forbid(
    shape.unravel_index,
    np.unravel_index,
    np.ndindex,
    np.indices,
    np.meshgrid,
    Tensor.stride,
    *_NUMPY_INDEXING,
)


@probe(forbid=UNRAVEL)
def unravel(nb, cases):
    return [nb.unravel_index(pos, s) for pos, s in cases]


def _check_unravel(run, cases):
    for (pos, s), g in zip(cases, run(unravel, cases), strict=True):
        expected = tuple(int(i) for i in np.unravel_index(pos, s))
        call = f"unravel_index({pos}, {s})"
        _same(_as_tuple(g, call), expected, call)


# catches: the dims peeled from the wrong end; / instead of //; a list instead of a tuple
@exercise("01.3")
def test_unravel_small_cases(run):
    _check_unravel(run, [(5, (2, 3)), (0, (4,)), (23, (2, 3, 4)), (0, ())])


# catches: size-1 dims skipped or mishandled, above all at the end of the shape; a loop
# that stops once the position reaches 0 (a short index)
@exercise("01.3")
def test_unravel_with_size_one_dims(run):
    shapes = [(3, 1), (2, 3, 1), (1,), (1, 1), (4, 1, 1), (1, 5), (2, 1, 3, 1)]
    _check_unravel(run, [(pos, s) for s in shapes for pos in range(int(np.prod(s)))])


# catches: the index found in an array of the shape (np.arange(n).reshape(shape) == pos):
# no array of these shapes fits in memory
@exercise("01.3")
def test_unravel_in_shapes_too_big_to_allocate(run):
    cases = []
    for s in _HUGE:
        total = int(np.prod(s, dtype=object))
        cases += [(0, s), (total - 1, s), (int(run.rng.integers(0, total)), s)]
    with _no_array_of_the_shape("index"):
        _check_unravel(run, cases)


# catches: anything that is not row-major order, on every position of random shapes
@exercise("01.3")
def test_unravel_matches_numpy_everywhere(run):
    shapes = [(3, 4), (2, 1, 5), (2, 3, 2, 2), *_shapes(run, 2)]
    _check_unravel(run, [(pos, s) for s in shapes for pos in range(int(np.prod(s)))])


# --- 01.4 broadcast_shapes ----------------------------------------------------------------
BROADCAST = forbid(
    shape.broadcast_shapes,
    np.broadcast_shapes,
    np.broadcast_arrays,
    np.broadcast_to,
    np.broadcast,
    *_TENSORS,
    Tensor.expand,
    *_NUMPY_INDEXING,
)


@probe(forbid=BROADCAST)
def broadcast(nb, cases):
    return [nb.broadcast_shapes(*shapes) for shapes in cases]


def _check_broadcast(run, cases):
    got = run(broadcast, [shapes for shapes, _ in cases])
    for (shapes, expected), g in zip(cases, got, strict=True):
        call = "broadcast_shapes" + repr(tuple(shapes))
        _same(_as_tuple(g, call), expected, call)


# catches: shapes padded on the right; sizes compared without the 1 rule; only two shapes
# handled (one, or three); a list where the text promises a tuple
@exercise("01.4")
def test_broadcast_compatible_shapes(run):
    cases = [
        (((2, 3), (3,)), (2, 3)),
        (((2, 1), (1, 4)), (2, 4)),
        (((5, 1, 3), (4, 1)), (5, 4, 3)),
        (((1,), ()), (1,)),
        (((3, 2),), (3, 2)),
        (((2, 1, 1), (1, 3, 1), (1, 1, 4)), (2, 3, 4)),
        (((1, 4), (3, 1), (4,)), (3, 4)),
    ]
    _check_broadcast(run, cases)


# catches: max() of the sizes (0 with 1 must give 0); no shapes at all (must be ())
@exercise("01.4")
def test_broadcast_size_zero_and_no_shapes(run):
    cases = [
        (((0,), (1,)), (0,)),
        (((1,), (0,)), (0,)),
        (((0,), (0,)), (0,)),
        (((2, 0), (1,)), (2, 0)),
        (((0, 1), (3,)), (0, 3)),
        ((), ()),
        (((),), ()),
    ]
    _check_broadcast(run, cases)


# catches: the shape read off a broadcast of arrays (np.zeros(a) + np.zeros(b)): these
# shapes are too big to allocate
@exercise("01.4")
def test_broadcast_shapes_too_big_to_allocate(run):
    big, other = 2**40, 2**30
    cases = [
        (((big, 1), (1, big)), (big, big)),
        (((other, 1, 3), (big, 1)), (other, big, 3)),
        (((1,), (big,), (1, 1)), (1, big)),
    ]
    with _no_array_of_the_shape("shape"):
        _check_broadcast(run, cases)


# catches: random pairs of shapes where a hand-written rule slips
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
    _check_broadcast(run, cases)


def _expect_value_error(run, shapes):
    call = "broadcast_shapes" + repr(tuple(shapes))
    try:
        got = run(broadcast, [shapes])[0]
    except ValueError as err:
        message = str(err)
        for s in shapes:
            assert str(tuple(s)) in message, (
                f"the ValueError of {call} should name every shape, but its message is {message!r}"
            )
        return
    raise AssertionError(f"{call} returned {got!r}; it should raise ValueError")


# catches: incompatible shapes that return a shape; another error type; a message that
# does not name the shapes; size 0 paired with a size other than 0 or 1 accepted
@exercise("01.4")
def test_broadcast_incompatible_raises_naming_shapes(run):
    _expect_value_error(run, ((2, 3), (4,)))
    _expect_value_error(run, ((3,), (0,)))
    _expect_value_error(run, ((2, 1), (1, 3), (4, 1)))


# --- 01.5 broadcast index -----------------------------------------------------------------
# catches: the input element read back from minitorch.broadcast_to of an arange
BROADCAST_INDEX = forbid(
    shape.broadcast_index,
    np.broadcast_to,
    np.broadcast_arrays,
    Tensor.expand,
    Tensor.expand_as,
    minitorch.broadcast_to,
    minitorch.expand,
    *_TENSORS,
    *_NUMPY_INDEXING,
)


@probe(forbid=BROADCAST_INDEX)
def broadcast_indices(nb, cases):
    return [nb.broadcast_index(*args) for args in cases]


def _check_broadcast_indices(run, cases):
    got = run(broadcast_indices, [args for args, _ in cases])
    for (args, expected), g in zip(cases, got, strict=True):
        call = "broadcast_index" + repr(args)
        _same(_as_tuple(g, call, exact=False), expected, call)


# catches: dims aligned on the left; size-1 dims not read at 0; a 0-d input (out_index[-0:]
# is the whole index, not ())
@exercise("01.5")
def test_broadcast_index_examples(run):
    cases = [
        (((1, 2), (2, 3), (3,)), (2,)),
        (((1, 2), (2, 3), (1, 3)), (0, 2)),
        (((1, 2), (2, 3), (2, 1)), (1, 0)),
        (((4, 1, 2), (5, 3, 4), (3, 1)), (1, 0)),
        (((0, 0), (2, 2), ()), ()),
        (((1, 1), (2, 2), ()), ()),
        (((1, 2, 3), (2, 3, 4), (1, 1, 1)), (0, 0, 0)),
        (((1, 2), (2, 3), (2, 3)), (1, 2)),
    ]
    _check_broadcast_indices(run, cases)


# catches: the size-1 test made on the output's shape instead of the input's
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
        ia = _as_tuple(got[2 * k], call, exact=False)
        ib = _as_tuple(got[2 * k + 1], call, exact=False)
        # catches: an index with fewer or more entries than the input has dims (a[ia] of a
        # short index is a whole slice, not one element)
        for index, in_shape in ((ia, a.shape), (ib, b.shape)):
            assert len(index) == len(in_shape), (
                f"broadcast_index({out_index}, {out_shape}, {in_shape}) returned {index}, "
                f"expected an index with one entry per dim of the input ({len(in_shape)})"
            )
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
# The Permute op is refused when applied (_permuting), not as a class: a class target
# would refuse a notebook that only imports it.
PERMUTE = forbid(
    Tensor.permute,
    Tensor.transpose,
    Tensor.T,
    Tensor.mT,
    Tensor.t,
    minitorch.permute,
    minitorch.transpose,
    *_methods(ops.views.Permute),
    np.transpose,
    np.moveaxis,
    np.swapaxes,
    np.ndarray.transpose,
    np.ndarray.swapaxes,
    # catches: the permuted strides read off a numpy copy (np.einsum("abc->cab", t.numpy()))
    Tensor.numpy,
    Tensor.tolist,
    np.einsum,
)


def _permuting(nb):
    """The guard around the learner's permute: no ready-made permutes, and no Permute op
    however it is reached (``Permute.apply``)."""
    stack = contextlib.ExitStack()
    stack.enter_context(forbidding(PERMUTE, nb))
    stack.enter_context(_ops_refused("minitorch's own Permute op", ops.views.Permute))
    return stack


def _view(spec):
    """A minitorch view from a plain spec: (n, shape, slices or None)."""
    n, shape_, slices = spec
    t = minitorch.arange(n).view(*shape_)
    if slices is not None:
        t = t[tuple(slice(*s) for s in slices)]
    return t


@probe
def permuted(nb, spec, dims):
    t = _view(spec)
    with _permuting(nb):
        p = nb.permute(t, dims)
    data = tensor_data(p)
    if data["type"] == "Tensor":
        data["stride"] = tuple(p.stride())
        data["offset"] = p.storage_offset()
        data["shares_storage"] = p.untyped_storage() is t.untyped_storage()
    data["input_after"] = (tuple(t.shape), tuple(t.stride()), t.storage_offset())
    return data


@probe
def write_through(nb, spec, dims, index, source_index):
    t = _view(spec)
    with _permuting(nb):
        p = nb.permute(t, dims)
    p[tuple(index)] = 100
    return t[tuple(source_index)].item()


def _permuted(run, spec, dims):
    got = run(permuted, spec, dims)
    assert got["type"] == "Tensor", f"permute(t, {dims}) returned a {got['type']}, not a Tensor"
    # catches: t itself made into the view (t.set_(t.as_strided(...))): the caller's tensor
    # changes shape under them
    t = _view(spec)
    shape_, stride, offset = (
        tuple(v) if isinstance(v, (tuple, list)) else v for v in got["input_after"]
    )
    before = (tuple(t.shape), tuple(t.stride()), t.storage_offset())
    assert (shape_, stride, offset) == before, (
        f"permute(t, {dims}) changed t: t of shape {before[0]} with strides {before[1]} has "
        f"shape {shape_} and strides {stride} afterwards; return a new view "
        "(t.as_strided(...)) and leave t as it was"
    )
    return got


def _check_permute(run, shape_, dims):
    n = int(np.prod(shape_))
    got = _permuted(run, (n, shape_, None), dims)
    expected = np.transpose(np.arange(n).reshape(shape_), dims)
    assert got["shape"] == expected.shape, (
        f"permute(t of shape {shape_}, {dims}) has shape {got['shape']}, expected {expected.shape}"
    )
    assert np.array_equal(got["values"], expected), (
        f"permute(t of shape {shape_}, {dims}) has the wrong values (new dim i is old dim "
        "dims[i]: did you invert the permutation?)"
    )


# catches: the inverse permutation (new dim i must be old dim dims[i]); sizes shuffled but
# not strides; delegating to t.permute, t.transpose or numpy
@exercise("01.6")
def test_permute_values_match_numpy(run):
    all_dims = [(1, 0, 2), (2, 0, 1), (0, 1, 2), (2, 1, 0), tuple(run.rng.permutation(3).tolist())]
    for dims in all_dims:
        _check_permute(run, (2, 3, 4), dims)


# catches: negative dims (-1 is the last dim); 0-d and 4-d tensors
@exercise("01.6")
def test_permute_with_negative_dims_and_other_ranks(run):
    _check_permute(run, (2, 3, 4), (-1, 0, 1))
    _check_permute(run, (2, 3, 4), (1, -1, -3))
    _check_permute(run, (2, 1, 3, 2), (3, 1, 0, 2))
    _check_permute(run, (), ())


# catches: a copy (contiguous(), numpy, minitorch.tensor) instead of a view
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


# catches: the storage offset of a sliced view dropped (reads from the storage's start)
@exercise("01.6")
def test_permute_of_a_sliced_view_keeps_its_offset(run):
    spec = (30, (5, 6), ((1, 4), (2, None)))
    t = _view(spec)
    got = _permuted(run, spec, (1, 0))
    _same(got["offset"], t.storage_offset(), "permute(t, (1, 0)).storage_offset()")
    assert np.array_equal(got["values"], t.numpy().T), "permute of a sliced view has wrong values"


# --- 01.7 sum along a dim over raw storage ------------------------------------------------
SUM = forbid(
    Tensor.sum,
    Tensor.numpy,
    Tensor.tolist,
    Tensor.__getitem__,
    minitorch.sum,
    *_methods(ops.reduce.Sum),
    np.sum,
    np.ndarray.sum,
    np.add.reduce,
    # catches: the sum handed to another reduction of minitorch's or numpy's (a mean times
    # the count, a matmul with ones, strided views added up by minitorch's add, einsum,
    # the last of a running sum)
    np.add.accumulate,
    np.add.reduceat,
    Tensor.mean,
    minitorch.mean,
    *_methods(ops.reduce.Mean),
    Tensor.__matmul__,
    Tensor.__rmatmul__,
    Tensor.matmul,
    minitorch.matmul,
    *_methods(ops.linalg.MatMul),
    Tensor.__add__,
    Tensor.__radd__,
    minitorch.add,
    *_methods(ops.elementwise.Add),
    np.mean,
    np.einsum,
    np.dot,
    np.matmul,
    np.tensordot,
    np.cumsum,
    # catches: the reduction left to an array's own methods, or to ``@`` with a vector of
    # ones (a.cumsum(axis=dim), a.mean(axis=dim), moved @ np.ones(n))
    np.ndarray.cumsum,
    np.ndarray.mean,
    np.ndarray.dot,
    np.ones,
    np.ones_like,
)
# catches: minitorch's reductions and adds reached through their ops (Sum.apply, t.add(v),
# total += view): refused when applied, whoever calls apply
_SUM_OPS = (
    ops.reduce.Sum,
    ops.reduce.Mean,
    ops.linalg.MatMul,
    ops.Add,
    ops.Add_,
    ops.Sub,
    ops.Sub_,
)

_VIEWS = {
    "contiguous": lambda t: t,
    "permuted": lambda t: t.permute(2, 0, 1),
    "sliced": lambda t: t[1:, ::2, :],
    "transposed": lambda t: t.transpose(0, 2)[:, 1:3],
    "broadcast": lambda t: t.expand(4, 3),
}


def _sum_input(values, view):
    return _VIEWS[view](minitorch.from_numpy(np.array(values)))


@probe
def summed(nb, values, view, dims):
    t = _sum_input(values, view)
    before = t.untyped_storage().tolist()
    refused = _ops_refused(
        "minitorch's own reductions or adds (a Sum, Mean, MatMul or Add op)", *_SUM_OPS
    )
    with forbidding(SUM, nb), refused:
        results = [nb.sum_dim(t, dim) for dim in dims]
    changed = t.untyped_storage().tolist() != before
    return [dict(tensor_data(r), input_changed=changed) for r in results]


#: The dtype of a sum, PyTorch's rule (minitorch's Tensor.sum follows it): a float dtype
#: stays, bools and integers of every width give int64.
def _sum_dtype(t):
    return t.dtype if t.dtype.is_floating_point else minitorch.int64


def _check_sums(run, values, view, dims=None):
    t = _sum_input(values, view)
    dims = list(range(t.ndim)) if dims is None else dims
    for dim, got in zip(dims, run(summed, values, view, dims), strict=True):
        expected = t.numpy().sum(axis=dim, dtype=_sum_dtype(t).np)
        what = f"sum_dim(t of shape {tuple(t.shape)}, strides {t.stride()}, dim={dim})"
        assert got["type"] == "Tensor", f"{what} returned a {got['type']}, not a Tensor"
        # catches: partial sums written into t's own storage (the caller's tensor changed)
        assert not got["input_changed"], (
            f"{what} changed the values of t; read its storage, never write into it"
        )
        assert got["shape"] == expected.shape, (
            f"{what} has shape {got['shape']}, expected {expected.shape}"
        )
        assert got["dtype"] == str(_sum_dtype(t)), (
            f"{what} of a {t.dtype} tensor has dtype {got['dtype']}, expected "
            f"{_sum_dtype(t)}: a float dtype stays, bools and integers sum to int64"
        )
        values = checked_array(got["values"], expected, f"the values of {what}")
        assert np.allclose(values, expected, atol=1e-4), (
            f"{what} gives {np.round(got['values'], 3).tolist()}, expected "
            f"{expected.round(3).tolist()}"
        )


# catches: the wrong dim removed from the shape; output positions mapped to the wrong
# elements; 1-d inputs (a 0-d result)
@exercise("01.7")
def test_sum_dim_of_contiguous_tensors(run):
    _check_sums(run, np.arange(12, dtype=np.float32).reshape(3, 4), "contiguous")
    _check_sums(run, np.array([1.5, 2.0, -3.0], dtype=np.float32), "contiguous")


# catches: a walk that ignores the strides or the offset (reads the storage as contiguous)
@exercise("01.7")
def test_sum_dim_of_views_reads_through_strides(run):
    values = run.rng.standard_normal((4, 5, 3)).astype(np.float32)
    for view in ("permuted", "sliced", "transposed"):
        _check_sums(run, values, view)


# catches: a stride-0 (expanded) dim that reads past the storage or counts once
@exercise("01.7")
def test_sum_dim_of_a_broadcast_view(run):
    _check_sums(run, np.array([1.0, 2.0, 3.0], dtype=np.float32), "broadcast")


# catches: sums that come back float32 whatever the input (int64 and float64 must stay)
@exercise("01.7")
def test_sum_dim_keeps_the_dtype(run):
    ints = run.rng.integers(-50, 50, size=(3, 4)).astype(np.int64)
    _check_sums(run, ints, "contiguous")
    _check_sums(run, run.rng.standard_normal((2, 3, 4)) * 1e9, "permuted")


# catches: the input's dtype kept for bools and small ints (a bool sum that says True
# instead of a count; int32 sums that overflow), which the framework's t.sum would inherit
@exercise("01.7")
def test_sum_dim_of_bools_and_int32_gives_int64(run):
    _check_sums(run, run.rng.random((3, 4)) < 0.5, "contiguous")
    _check_sums(run, np.array([True, False, True]), "broadcast")
    big = run.rng.integers(2**30, 2**31 - 1, size=(4, 5, 3)).astype(np.int32)
    _check_sums(run, big, "permuted")


# catches: negative dims (-1 is the last); a size-0 dim (sums to zeros, or vanishes)
@exercise("01.7")
def test_sum_dim_with_negative_and_empty_dims(run):
    values = run.rng.standard_normal((4, 5, 3)).astype(np.float32)
    _check_sums(run, values, "sliced", dims=[-1, -2, -3])
    _check_sums(run, np.zeros((2, 0), dtype=np.float32), "contiguous")
