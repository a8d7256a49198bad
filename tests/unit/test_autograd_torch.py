"""Differential tests against PyTorch: forward values and gradients of every op and of
composite models agree. Skipped cleanly when PyTorch is not installed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch
from minitorch import autograd

torch = pytest.importorskip(
    "torch", reason="PyTorch is an optional reference for these tests (pip install torch)"
)

SOME = settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def pair_of_leaves(array):
    """The same float64 values as a minitorch leaf and a torch leaf."""
    array = np.asarray(array, dtype=np.float64)
    return (
        minitorch.tensor(array, requires_grad=True),
        torch.tensor(array, requires_grad=True),
    )


def agree(mt_value, torch_value, rtol=1e-7, atol=1e-9):
    if isinstance(mt_value, minitorch.Tensor):
        mt_value = mt_value.detach().numpy()
    if isinstance(torch_value, torch.Tensor):
        torch_value = torch_value.detach().numpy()
    np.testing.assert_allclose(mt_value, torch_value, rtol=rtol, atol=atol)


def compare(fn_mt, fn_torch, *arrays, seed=0):
    """Run both functions on the same leaves; compare outputs and input gradients for a
    random output gradient."""
    leaves = [pair_of_leaves(a) for a in arrays]
    out_mt = fn_mt(*[m for m, _ in leaves])
    out_t = fn_torch(*[t for _, t in leaves])
    agree(out_mt, out_t)
    g = np.random.default_rng(seed).standard_normal(tuple(out_t.shape))
    out_mt.backward(minitorch.tensor(g))
    out_t.backward(torch.tensor(g))
    for m, t in leaves:
        if t.grad is None:
            assert m.grad is None or not np.any(m.grad.numpy())
        else:
            agree(m.grad, t.grad)


def rand(shape, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, size=shape)
    return x if positive else x * rng.choice([-1.0, 1.0], size=shape)


# --- elementwise --------------------------------------------------------------------------------
UNARY = [
    ("neg", lambda x: -x, lambda x: -x, False),
    ("exp", lambda x: x.exp(), lambda x: x.exp(), False),
    ("log", lambda x: x.log(), lambda x: x.log(), True),
    ("sqrt", lambda x: x.sqrt(), lambda x: x.sqrt(), True),
    ("abs", lambda x: x.abs(), lambda x: x.abs(), False),
    ("sign", lambda x: x.sign() * x, lambda x: x.sign() * x, False),
    ("tanh", lambda x: x.tanh(), lambda x: x.tanh(), False),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid(), False),
    ("relu", lambda x: x.relu(), lambda x: x.relu(), False),
    ("pow_scalar", lambda x: x**3, lambda x: x**3, False),
    ("rpow", lambda x: 1.5**x, lambda x: 1.5**x, False),
    ("rdiv", lambda x: 2.0 / x, lambda x: 2.0 / x, False),
    ("clone", lambda x: x.clone(), lambda x: x.clone(), False),
    ("softmax", lambda x: x.softmax(1), lambda x: x.softmax(1), False),
    ("log_softmax", lambda x: x.log_softmax(0), lambda x: x.log_softmax(0), False),
]


@pytest.mark.parametrize("name, f_mt, f_t, positive", UNARY, ids=[u[0] for u in UNARY])
def test_unary_ops(name, f_mt, f_t, positive):
    compare(f_mt, f_t, rand((3, 4), positive=positive))


def test_relu_and_abs_at_zero_match_pytorch():
    x = np.array([-1.0, 0.0, 2.0])
    compare(lambda t: t.relu() + t.abs(), lambda t: t.relu() + t.abs(), x)


@st.composite
def broadcast_shapes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    drop = draw(st.integers(0, len(shape)))
    other = tuple(1 if draw(st.booleans()) else n for n in shape[drop:])
    return (shape, other) if draw(st.booleans()) else (other, shape)


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "maximum": (minitorch.maximum, torch.maximum),
    "minimum": (minitorch.minimum, torch.minimum),
    "pow": (lambda a, b: a.abs() ** b, lambda a, b: a.abs() ** b),
    "where": (
        lambda a, b: minitorch.where(a > 0, a, b),
        lambda a, b: torch.where(a > 0, a, b),
    ),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=broadcast_shapes(), seed=st.integers(0, 1000))
@SOME
def test_binary_ops_with_broadcasting(name, shapes, seed):
    f_mt, f_t = BINARY[name]
    compare(f_mt, f_t, rand(shapes[0], seed), rand(shapes[1], seed + 1))


def test_maximum_and_minimum_ties_match_pytorch():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])
    compare(minitorch.maximum, torch.maximum, a, b)
    compare(minitorch.minimum, torch.minimum, a, b)


def test_pow_at_zero_matches_pytorch():
    compare(
        lambda a, b: a**b, lambda a, b: a**b, np.array([0.0, 0.0, 2.0]), np.array([0.0, 2.0, 0.0])
    )
    compare(lambda a: a**0, lambda a: a**0, np.array([0.0, 1.0]))


# --- reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_mean(dim, keepdim):
    x = rand((2, 3, 4))
    compare(lambda t: t.sum(dim, keepdim=keepdim), lambda t: t.sum(dim, keepdim=keepdim), x)
    compare(lambda t: t.mean(dim, keepdim=keepdim), lambda t: t.mean(dim, keepdim=keepdim), x)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), (-1, False)])
def test_max_min_along_a_dim(op, dim, keepdim):
    x = rand((3, 4), seed=3)
    compare(
        lambda t: getattr(t, op)(dim, keepdim=keepdim).values,
        lambda t: getattr(t, op)(dim, keepdim=keepdim).values,
        x,
    )


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_of_everything_with_ties(op):
    x = np.array([[1.0, 4.0, -2.0], [4.0, -2.0, 0.5]])
    compare(lambda t: getattr(t, op)(), lambda t: getattr(t, op)(), x)


# --- matmul -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3,), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3,)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((3,), (5, 3, 4)),
        ((5, 2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (4, 3, 2)),
        ((5, 2, 3), (3,)),
    ],
)
def test_matmul(a_shape, b_shape):
    compare(lambda a, b: a @ b, lambda a, b: a @ b, rand(a_shape, 1), rand(b_shape, 2))


# --- views, indexing, joining -------------------------------------------------------------------
VIEWS = [
    ("view", lambda t: t.view(4, 6), lambda t: t.view(4, 6)),
    ("reshape_T", lambda t: t.T.reshape(-1), lambda t: t.permute(2, 1, 0).reshape(-1)),
    ("permute", lambda t: t.permute(2, 0, 1), lambda t: t.permute(2, 0, 1)),
    ("transpose", lambda t: t.transpose(0, 2), lambda t: t.transpose(0, 2)),
    ("expand", lambda t: t[:, :1].expand(2, 5, 4), lambda t: t[:, :1].expand(2, 5, 4)),
    ("unsqueeze", lambda t: t.unsqueeze(1), lambda t: t.unsqueeze(1)),
    ("squeeze", lambda t: t[:, :1].squeeze(1), lambda t: t[:, :1].squeeze(1)),
    ("flatten", lambda t: t.flatten(1), lambda t: t.flatten(1)),
    ("slice", lambda t: t[1:, ::2, None, -1], lambda t: t[1:, ::2, None, -1]),
    ("ellipsis", lambda t: t[..., 1:3], lambda t: t[..., 1:3]),
    ("int_index", lambda t: t[[0, 1, 0]], lambda t: t[[0, 1, 0]]),
    ("tensor_index", lambda t: t[:, [2, 2, 0]], lambda t: t[:, [2, 2, 0]]),
    ("mask", lambda t: t[t > 0], lambda t: t[t > 0]),
    (
        "as_strided",
        lambda t: t.as_strided((3, 3), (2, 1), 1),
        lambda t: t.as_strided((3, 3), (2, 1), 1),
    ),
]


@pytest.mark.parametrize("name, f_mt, f_t", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_and_indexing(name, f_mt, f_t):
    compare(f_mt, f_t, rand((2, 3, 4), 5))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack(dim):
    a, b = rand((2, 3), 1), rand((2, 3), 2)
    compare(
        lambda x, y: minitorch.cat([x, y, x], dim), lambda x, y: torch.cat([x, y, x], dim), a, b
    )
    compare(lambda x, y: minitorch.stack([x, y], dim), lambda x, y: torch.stack([x, y], dim), a, b)


def test_setitem_matches_pytorch():
    def f_mt(a, v):
        y = a * 2
        y[1:, 0] = v
        return y

    def f_t(a, v):
        y = a * 2
        y[1:, 0] = v
        return y

    compare(f_mt, f_t, rand((3, 2), 1), rand((2,), 2))


# --- composite models -----------------------------------------------------------------------------
def test_mlp_with_cross_entropy_matches_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5))
    onehot = np.eye(3)[rng.integers(0, 3, 8)]
    params = [rng.standard_normal(s) * 0.5 for s in [(5, 7), (7,), (7, 3), (3,)]]

    def model(lib, log_softmax, w1, b1, w2, b2, x, onehot):
        h = (x @ w1 + b1).relu()
        return -(log_softmax(h @ w2 + b2, 1) * onehot).sum() / 8

    compare(
        lambda *p: model(
            minitorch, minitorch.log_softmax, *p, minitorch.tensor(x), minitorch.tensor(onehot)
        ),
        lambda *p: model(torch, torch.log_softmax, *p, torch.tensor(x), torch.tensor(onehot)),
        *params,
    )


def test_recurrent_cell_matches_pytorch():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((6, 2, 3))
    w_x, w_h, b = (
        rng.standard_normal((3, 4)),
        rng.standard_normal((4, 4)) * 0.5,
        rng.standard_normal(4),
    )

    def run(lib, w_x, w_h, b, xs):
        h = xs[0] @ w_x * 0
        outs = []
        for t in range(xs.shape[0]):
            h = (xs[t] @ w_x + h @ w_h + b).tanh()
            outs.append(h)
        return lib.stack(outs, 0).sigmoid().mean(0).sum(1) / lib.maximum(
            h.abs().max(), h.sum() * 0 + 1.0
        )

    compare(
        lambda *p: run(minitorch, *p, minitorch.tensor(xs)),
        lambda *p: run(torch, *p, torch.tensor(xs)),
        w_x,
        w_h,
        b,
    )


def test_hessian_vector_product_matches_pytorch():
    rng = np.random.default_rng(2)
    a, w0, v = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal(3)

    def hvp(lib, grad_fn, w, a, v):
        loss = ((a @ w).sigmoid() ** 2).sum() + (w.tanh() * w).sum()
        (g,) = grad_fn(loss, w, create_graph=True)
        (hv,) = grad_fn((g * v).sum(), w)
        return g, hv

    w_mt = minitorch.tensor(w0, requires_grad=True)
    w_t = torch.tensor(w0, requires_grad=True)
    g_mt, hv_mt = hvp(minitorch, autograd.grad, w_mt, minitorch.tensor(a), minitorch.tensor(v))
    g_t, hv_t = hvp(torch, torch.autograd.grad, w_t, torch.tensor(a), torch.tensor(v))
    agree(g_mt, g_t)
    agree(hv_mt, hv_t)


def test_float32_results_match_pytorch_float32():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    w_mt, w_t = minitorch.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    y_mt = (minitorch.tensor(x) @ w_mt).softmax(1).log().mean()
    y_t = (torch.tensor(x) @ w_t).softmax(1).log().mean()
    y_mt.backward()
    y_t.backward()
    assert w_mt.grad.dtype is minitorch.float32
    agree(w_mt.grad, w_t.grad, rtol=1e-5, atol=1e-6)
