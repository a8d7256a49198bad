"""gradcheck on every differentiable op, over random shapes, broadcasting and
non-contiguous inputs (property-based, with hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.autograd import gradcheck, gradgradcheck

CHECK = settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(CHECK, max_examples=8)

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)
nonscalar_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided"])
seeds = st.integers(0, 2**31 - 1)


def values(shape, seed, kind="any"):
    """float64 values away from the kinks and poles of the ops under test."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(0.5, 2.0, size=shape)
    if kind == "positive":
        return mag
    return mag * rng.choice([-1.0, 1.0], size=shape)


def make_leaf(array, layout):
    """A float64 leaf holding ``array``, laid out contiguously, transposed, or strided."""
    nd = array.ndim
    if layout == "contiguous" or nd == 0:
        t = minitorch.tensor(array, dtype=minitorch.float64)
    elif layout == "transposed":
        base = minitorch.tensor(np.ascontiguousarray(array.transpose()), dtype=minitorch.float64)
        t = base.permute(*reversed(range(nd)))
    else:
        big = np.zeros(tuple(2 * n + 1 for n in array.shape))
        pick = tuple(slice(1, 2 * n + 1, 2) for n in array.shape)
        big[pick] = array
        t = minitorch.tensor(big, dtype=minitorch.float64)[pick]
    return t.requires_grad_()


@st.composite
def leaves(draw, shape_strategy=shapes, kind="any"):
    shape = draw(shape_strategy)
    return make_leaf(values(shape, draw(seeds), kind), draw(layouts))


@st.composite
def broadcast_pair(draw, kind_b="any"):
    """Two leaves whose shapes broadcast: b drops leading dims and squashes some to 1."""
    shape = draw(shapes)
    drop = draw(st.integers(0, len(shape)))
    b_shape = tuple(1 if draw(st.booleans()) else n for n in shape[drop:])
    if draw(st.booleans()):
        shape, b_shape = b_shape, shape
    a = make_leaf(values(shape, draw(seeds)), draw(layouts))
    b = make_leaf(values(b_shape, draw(seeds), kind_b), draw(layouts))
    return a, b


def check(fn, *inputs):
    assert gradcheck(fn, inputs)


# --- elementwise ------------------------------------------------------------------------------
UNARY = {
    "neg": lambda x: -x,
    "exp": lambda x: x.exp(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(),
    "abs": lambda x: x.abs(),
    "sign": lambda x: x.sign() * x,
    "clone": lambda x: x.clone(),
    "square": lambda x: x**2,
    "cube_via_pow": lambda x: x**3.0,
    "rpow": lambda x: 2.0**x,
    "rsub_rdiv": lambda x: (1.0 - x) / (x * x + 1.0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(x=leaves())
@FEW
def test_unary(name, x):
    check(UNARY[name], x)


@pytest.mark.parametrize("name", ["log", "sqrt", "pow_fractional"])
@given(x=leaves(kind="positive"))
@FEW
def test_unary_on_positive_inputs(name, x):
    fn = {"log": lambda x: x.log(), "sqrt": lambda x: x.sqrt(), "pow_fractional": lambda x: x**1.5}
    check(fn[name], x)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": minitorch.maximum,
    "minimum": minitorch.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(pair=broadcast_pair())
@CHECK
def test_binary_with_broadcasting(name, pair):
    check(BINARY[name], *pair)


@given(pair=broadcast_pair())
@CHECK
def test_pow_with_tensor_exponent(pair):
    a, b = pair
    base = a.detach().abs().requires_grad_()
    check(lambda x, y: x**y, base, b)


@given(pair=broadcast_pair(), seed=seeds)
@CHECK
def test_where(pair, seed):
    a, b = pair
    shape = minitorch.broadcast_shapes(a.shape, b.shape)
    cond = minitorch.tensor(np.random.default_rng(seed).random(shape) < 0.5)
    check(lambda x, y: minitorch.where(cond, x, y), a, b)


def test_maximum_splits_ties_evenly():
    a = minitorch.tensor([1.0, 2.0, 3.0], dtype=minitorch.float64, requires_grad=True)
    b = minitorch.tensor([1.0, 5.0, 0.0], dtype=minitorch.float64, requires_grad=True)
    minitorch.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 0.0, 1.0])
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 1.0, 0.0])


# --- reductions -------------------------------------------------------------------------------
@st.composite
def reduce_args(draw):
    x = draw(leaves(nonscalar_shapes))
    dims = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda d: d % x.ndim))
    return x, (tuple(dims) if dims else None), draw(st.booleans())


@given(args=reduce_args())
@CHECK
def test_sum_and_mean(args):
    x, dim, keepdim = args
    check(lambda t: t.sum(dim, keepdim=keepdim), x)
    check(lambda t: t.mean(dim, keepdim=keepdim), x)


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_max_and_min(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    keepdim = data.draw(st.booleans())
    check(lambda t: t.max(), x)
    check(lambda t: t.min(dim, keepdim=keepdim).values, x)
    check(lambda t: t.max(dim, keepdim=keepdim)[0], x)


def test_max_of_everything_shares_the_gradient_among_ties():
    x = minitorch.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])


def test_max_along_a_dim_sends_the_gradient_to_the_returned_index():
    x = minitorch.tensor([[3.0, 1.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)
    values.sum().backward()
    expected = np.zeros((1, 3))
    expected[0, indices.item()] = 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected)


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_softmax_and_log_softmax(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(lambda t: t.softmax(dim), x)
    check(lambda t: t.log_softmax(dim), x)


def test_softmax_is_stable_for_large_inputs():
    x = minitorch.tensor([[1000.0, 0.0, -1000.0]], requires_grad=True)
    y = minitorch.log_softmax(x, dim=1)
    assert np.isfinite(y.detach().numpy()).all()
    y[0, 0].backward()
    assert np.isfinite(x.grad.numpy()).all()


# --- matmul -----------------------------------------------------------------------------------
@st.composite
def matmul_pair(draw):
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch = draw(st.lists(st.integers(1, 2), max_size=2).map(tuple))
    a_shape = draw(st.sampled_from([(k,), (n, k), batch + (n, k)]))
    b_batch = tuple(1 if draw(st.booleans()) else s for s in batch)[draw(st.integers(0, 2)) :]
    b_shape = draw(st.sampled_from([(k,), (k, m), b_batch + (k, m)]))
    a = make_leaf(values(a_shape, draw(seeds)), draw(layouts))
    b = make_leaf(values(b_shape, draw(seeds)), draw(layouts))
    return a, b


@given(pair=matmul_pair())
@CHECK
def test_matmul_including_1d_and_batched(pair):
    check(lambda a, b: a @ b, *pair)


# --- views ------------------------------------------------------------------------------------
@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_views(x, data):
    perm = data.draw(st.permutations(range(x.ndim)))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(lambda t: t.permute(*perm), x)
    check(lambda t: t.transpose(0, -1), x)
    check(lambda t: t.reshape(-1), x)
    check(lambda t: t.flatten(), x)
    check(lambda t: t.unsqueeze(dim).squeeze(), x)
    check(lambda t: t.expand(2, *x.shape), x)
    check(lambda t: t.contiguous().view(x.numel()), x)


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_expand_of_size_one_dims(x, data):
    shape = tuple(1 if data.draw(st.booleans()) else n for n in x.shape)
    y = x.detach()[tuple(slice(0, n) for n in shape)].contiguous().requires_grad_()
    check(lambda t: t.expand(3, *x.shape), y)


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_basic_slicing(x, data):
    index = []
    for n in x.shape:
        kind = data.draw(st.sampled_from(["int", "slice", "full"]))
        if kind == "int":
            index.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = data.draw(st.integers(0, n - 1))
            index.append(slice(start, None, data.draw(st.integers(1, 2))))
        else:
            index.append(slice(None))
    index.insert(data.draw(st.integers(0, len(index))), None)
    check(lambda t: t[tuple(index)], x)


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_advanced_indexing_with_repeats(x, data):
    n = x.shape[0]
    picks = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5))
    check(lambda t: t[picks], x)
    check(lambda t: t[minitorch.tensor(picks)] * 2, x)
    mask = minitorch.tensor(np.arange(n) % 2 == 0)
    check(lambda t: t[mask], x)


def test_indexing_with_repeats_adds_gradients():
    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 0.0, 1.0])


def test_as_strided():
    x = minitorch.tensor(np.arange(6.0), dtype=minitorch.float64, requires_grad=True)
    check(lambda t: t.as_strided((2, 2), (1, 2), 1), x)
    check(lambda t: t.as_strided((3, 2), (1, 1), 0), x)  # overlapping windows add up


@given(x=leaves(nonscalar_shapes), data=st.data())
@CHECK
def test_cat_and_stack(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    y = make_leaf(values(x.shape, data.draw(seeds)), data.draw(layouts))
    check(lambda a, b: minitorch.cat([a, b * 2, a], dim), x, y)
    check(lambda a, b: minitorch.stack([a, b], dim), x, y)


def test_to_another_dtype_and_back():
    x = minitorch.tensor([1.5, -2.0], dtype=minitorch.float64, requires_grad=True)
    y = x.float() * 3
    y.sum().backward()
    assert x.grad.dtype is minitorch.float64
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_setitem_is_differentiable():
    a = make_leaf(values((3, 4), 0), "contiguous")
    v = make_leaf(values((4,), 1), "contiguous")

    def fn(a, v):
        y = a * 1.0
        y[1] = v * v
        y[:, 0] = 0.0
        return y

    check(fn, a, v)


# --- composites and second derivatives -------------------------------------------------------
def test_mlp_composite():
    rng = np.random.default_rng(0)
    x = minitorch.tensor(rng.standard_normal((4, 3)))
    w1 = make_leaf(rng.standard_normal((3, 5)), "transposed")
    b1 = make_leaf(rng.standard_normal(5), "contiguous")
    w2 = make_leaf(rng.standard_normal((5, 2)), "strided")
    labels = minitorch.tensor(np.eye(2)[[0, 1, 1, 0]])

    def loss(w1, b1, w2):
        h = (x @ w1 + b1).tanh()
        return -(minitorch.log_softmax(h @ w2, 1) * labels).sum() / 4

    check(loss, w1, b1, w2)
    assert gradgradcheck(loss, (w1, b1, w2))


SECOND_ORDER = {
    "tanh_sigmoid": lambda x: x.tanh() * x.sigmoid(),
    "exp_log": lambda x: (x * x + 1.0).log() * x.exp(),
    "softmax": lambda x: x.softmax(-1) * x,
    "log_softmax": lambda x: x.log_softmax(-1) ** 2,
    "div_sqrt": lambda x: x / (x * x + 1.0).sqrt(),
    "reduce_views": lambda x: (x.T.reshape(-1)[1:] ** 2).sum() * x.max(),
    "index": lambda x: x[[0, 0]] * x[0:1],
    "pow": lambda x: (x * x + 1.0) ** x,
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives(name):
    x = make_leaf(values((2, 3), 7), "transposed")
    assert gradgradcheck(SECOND_ORDER[name], (x,))


def test_matmul_second_derivative():
    a = make_leaf(values((2, 3), 1), "contiguous")
    b = make_leaf(values((3, 2), 2), "strided")
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (a, b))
