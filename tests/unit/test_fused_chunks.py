"""Fused groups run over cache-sized chunks (issue 20): the same results as eager, forward
and backward, whichever way a kernel is cut (whole, flat chunks, rows)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import jit
from minitorch.jit import fusion

from .fuser_programs import grow, programs

UNARY = [mt.tanh, mt.sigmoid, mt.relu, lambda t: -t, lambda t: t.abs(), lambda t: t * 0.5]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, mt.maximum]

#: (rows, cols): small (whole arrays), and big enough to be cut in chunks
SHAPES = [(3, 5), (300, 700), (2048, 96)]


def program(choices):
    """A random elementwise program of inputs x (full), r (a row) and c (a column)."""

    def run(x, r, c):
        values = grow([x, r, c], choices, UNARY, BINARY)
        out = values[-1] + x  # keep the output the full shape
        return out * 2.0, values[len(values) // 2] + 1.0

    return run


def inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    rows, cols = shape
    arrays = (
        rng.standard_normal((rows, cols)),
        rng.standard_normal(cols),
        rng.standard_normal((rows, 1)),
    )
    return [mt.tensor(a.astype(dtype)) for a in arrays]


@settings(max_examples=100, deadline=None)
@given(
    choices=programs(kinds=2, ops=10, max_size=9),
    shape=st.sampled_from(SHAPES),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_fused_chunks_match_eager_forward_and_backward(choices, shape, dtype):
    fn = program(choices)
    graph = jit.optimize(jit.trace(fn, tuple(inputs(shape, dtype, 0))))
    fresh = inputs(shape, dtype, 1)
    leaves = [t.requires_grad_() for t in fresh]
    got = graph(*leaves)
    (got[0].sum() + got[1].sum()).backward()
    got_grads = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
    eager_leaves = [t.detach().clone().requires_grad_() for t in fresh]
    want = fn(*eager_leaves)
    (want[0].sum() + want[1].sum()).backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=tol, atol=tol)
    for g, t in zip(got_grads, eager_leaves, strict=True):
        if t.grad is None:  # an input the outputs do not depend on
            assert g is None or not g.any()
            continue
        # (a broadcast input's gradient is a sum over thousands of rows, in another order
        # than eager's: its rounding scales with the size of the terms, not of the result)
        scale = max(1.0, float(np.abs(t.grad.numpy()).max()))
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=10 * tol, atol=10 * tol * scale)


def _kernel_of(graph):
    fused = [n for n in graph.graph.nodes if n.op == "fused"]
    assert fused, "nothing was fused"
    return max(fused, key=lambda n: len(n.target.ops)).target


@pytest.mark.parametrize(
    ("shape", "operands", "plan"),
    [
        ((3, 5), "full", None),  # small: whole arrays, one call
        ((512, 1024), "full", "flat"),  # every input the output's shape: flat chunks
        ((512, 1024), "broadcast", "rows"),  # a row and a column broadcast: chunks of rows
        ((1, 1 << 20), "broadcast", None),  # one huge row: whole arrays
    ],
)
def test_the_plan_follows_the_kernel(shape, operands, plan):
    # catches: a plan that never chunks (so the chunked paths go untested), or one that
    # slices an input which broadcasts along the chunked dim
    x = mt.randn(*shape)
    other = mt.randn(*shape) if operands == "full" else mt.randn(shape[1])
    third = mt.randn(*shape) if operands == "full" else mt.randn(shape[0], 1)

    def fn(a, b, c):
        return mt.tanh(a * b + c) * 0.5 + a

    graph = jit.optimize(jit.trace(fn, (x, other, third)))
    kernel = _kernel_of(graph)
    arrays = tuple(t.numpy() for t in (x, other, third))
    found = fusion.chunk_plan(kernel, arrays)
    assert (found[0] if found else None) == plan
    np.testing.assert_allclose(
        graph(x, other, third).numpy(), fn(x, other, third).numpy(), rtol=1e-5, atol=1e-6
    )


def test_a_compiled_mlp_block_trains_like_eager():
    mt.manual_seed(0)
    fc1, fc2 = mt.nn.Linear(64, 256), mt.nn.Linear(256, 64)

    def block(x):
        return x + fc2(F.gelu(fc1(x), approximate="tanh"))

    x = mt.randn(512, 64)
    compiled = mt.compile(block)
    got = compiled(x)
    got.sum().backward()
    grads = [p.grad.numpy().copy() for p in (fc1.weight, fc2.weight)]
    for p in (fc1.weight, fc2.weight):
        p.grad = None
    want = block(x)
    want.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    for g, p in zip(grads, (fc1.weight, fc2.weight), strict=True):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_second_derivatives_flow_through_a_fused_node():
    # catches: a create_graph backward that differentiated detached copies of the inputs,
    # so the gradient was a constant and its own gradient silently zero
    def f(x):
        return mt.tanh(x * 2.0 + 1.0) * x

    x = mt.randn(4, 5, requires_grad=True)
    graph = jit.optimize(jit.trace(f, x))
    assert any(n.op == "fused" for n in graph.graph.nodes)
    (first,) = mt.autograd.grad(graph(x).sum(), [x], create_graph=True)
    first.sum().backward()
    fused = x.grad.numpy().copy()
    x.grad = None
    (want,) = mt.autograd.grad(f(x).sum(), [x], create_graph=True)
    want.sum().backward()
    np.testing.assert_allclose(first.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(fused, x.grad.numpy(), rtol=1e-5, atol=1e-6)
