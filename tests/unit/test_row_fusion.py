"""Row-local fusion (issue 20): elementwise groups joined across reductions over trailing
dims (LayerNorm, a softmax-free normalisation) run as one kernel, chunk by chunk of rows,
with the same results as eager, forward and backward; and chunks shared among threads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as mt
from minitorch import jit, nn
from minitorch.jit import fusion

from .fuser_programs import grow, programs


def normalise(x, w, b):
    h = x * w + b
    h = 0.5 * h * (1.0 + mt.tanh(0.79788456 * (h + 0.044715 * h * h * h)))
    mean = h.mean(dim=-1, keepdim=True)
    centred = h - mean
    var = (centred * centred).mean(dim=-1, keepdim=True)
    return centred / mt.sqrt(var + 1e-5)


def _fused(module):
    return [n for n in module.graph.nodes if n.op == "fused"]


def _args(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    return tuple(mt.tensor(a.astype(dtype)) for a in (x, w, b))


@pytest.mark.parametrize("shape", [(6, 8), (512, 1024), (64, 16, 96)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_a_normalisation_is_one_kernel_with_eagers_results(shape, dtype):
    # catches: a reduction that splits the block into groups writing their results to memory
    # (the fusion did nothing for it), or a chunked reduction that sees only part of a row
    args = _args(shape, dtype)
    optimized = jit.optimize(jit.trace(normalise, args))
    (node,) = _fused(optimized)
    assert [op.op for op in node.target.ops].count("mean") == 2
    tol = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-12}[dtype]
    with mt.no_grad():
        got, want = optimized(*args).numpy(), normalise(*args).numpy()
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_a_chunked_row_local_kernel_runs_by_rows_bit_for_bit():
    # catches: a row-local kernel cut in flat slices (a mean over half a row), and a
    # per-chunk mean that differs from eager's whole-array one
    args = _args((512, 1024))
    kernel = _fused(jit.optimize(jit.trace(normalise, args)))[0].target
    assert kernel.row_local
    plan = fusion.chunk_plan(kernel, tuple(a.numpy() for a in args))
    assert plan is not None and plan[0] == "rows"
    with mt.no_grad():
        np.testing.assert_array_equal(
            jit.optimize(jit.trace(normalise, args))(*args).numpy(), normalise(*args).numpy()
        )


def test_layer_norm_trains_through_its_fused_kernel_as_eager():
    # catches: a reduction's backward (Mean keeps its count on ctx) run without the context
    # its forward filled, or gradients of the reduced values lost
    mt.manual_seed(0)
    norm = nn.LayerNorm(96)
    x = mt.randn(300, 96, requires_grad=True)
    traced = jit.optimize(jit.trace(norm, x))
    assert any("mean" in n.target.summary() for n in _fused(traced))
    traced(x).pow(2).sum().backward()
    got = [t.grad.numpy().copy() for t in (x, norm.weight, norm.bias)]
    for t in (x, norm.weight, norm.bias):
        t.grad = None
    norm(x).pow(2).sum().backward()
    for g, t in zip(got, (x, norm.weight, norm.bias), strict=True):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_second_derivatives_flow_through_a_row_local_kernel():
    # catches: create_graph through a fused reduction giving a constant gradient
    def f(x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return (centred * centred).sum(dim=-1, keepdim=True) * 0.5

    x = mt.randn(8, 5, requires_grad=True)
    graph = jit.optimize(jit.trace(f, x))
    assert _fused(graph)
    (g,) = mt.autograd.grad(graph(x).sum(), x, create_graph=True)
    (gg,) = mt.autograd.grad((g * g).sum(), x)
    x2 = x.detach().clone().requires_grad_()
    (e,) = mt.autograd.grad(f(x2).sum(), x2, create_graph=True)
    (ee,) = mt.autograd.grad((e * e).sum(), x2)
    np.testing.assert_allclose(gg.numpy(), ee.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: (x - x.mean(dim=0, keepdim=True)) * 2.0,  # over the rows: not row-local
        lambda x: (x * 2.0).mean(dim=-1) + 1.0,  # keepdim=False
        lambda x: (x * 2.0).sum(dim=-1, keepdim=True, dtype=mt.float64) + 1.0,  # dtype=
    ],
    ids=["dim0", "no-keepdim", "sum-dtype"],
)
def test_reductions_that_are_not_row_local_stay_outside(fn):
    # catches: a reduction over dim 0 computed per chunk of rows (each chunk's own mean)
    x = mt.randn(4096, 300)  # (big enough to run in chunks of rows)
    optimized = jit.optimize(jit.trace(fn, x))
    for node in _fused(optimized):
        assert not node.target.row_local
    np.testing.assert_allclose(optimized(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)


def test_a_region_never_reads_what_it_computes_through_another_node():
    # catches: a merge across a reduction whose result goes through a matmul and back into
    # the region (a cycle: the fused node would need its own output)
    w = mt.randn(64, 64)

    def fn(x):
        h = mt.tanh(x) * 2.0
        m = h.mean(dim=-1, keepdim=True)
        back = (h - m) @ w  # outside the region, reading it
        return (h - m) * 3.0 + back

    x = mt.randn(200, 64)
    optimized = jit.optimize(jit.trace(fn, x))
    np.testing.assert_allclose(optimized(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-5)


REDUCE = [
    lambda t: t.mean(dim=-1, keepdim=True),
    lambda t: t.sum(dim=-1, keepdim=True),
    lambda t: t.mean(dim=(1, 2), keepdim=True),
]
ELEMENTWISE = [mt.tanh, mt.sigmoid, lambda t: t * 1.5, lambda t: t - 0.25, lambda t: t.abs()]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b]


@settings(max_examples=100, deadline=None)
@given(
    choices=programs(kinds=3, ops=10, max_size=10),
    shape=st.sampled_from([(4, 3, 5), (256, 8, 160), (3000, 2, 40)]),
)
def test_random_programs_with_reductions_match_eager_forward_and_backward(choices, shape):
    # catches: any row-local kernel whose chunks, shapes or backward differ from eager's
    def fn(x):
        values = grow([x], choices, ELEMENTWISE, BINARY, REDUCE)
        return values[-1] + x * 0.5, values[len(values) // 2] * 2.0

    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal(shape).astype(np.float64), requires_grad=True)
    optimized = jit.optimize(jit.trace(fn, x))
    got = optimized(x)
    (gx,) = mt.autograd.grad(got[0].sum() + got[1].sum(), x)
    x2 = x.detach().clone().requires_grad_()
    want = fn(x2)
    (wx,) = mt.autograd.grad(want[0].sum() + want[1].sum(), x2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gx.numpy(), wx.numpy(), rtol=1e-9, atol=1e-9)


def test_a_row_local_kernel_saves_and_loads():
    # catches: a reduction's dims saved as if they were a ref, or op_shapes lost on load
    import io

    args = _args((64, 32))
    optimized = jit.optimize(jit.trace(normalise, args))
    buffer = io.BytesIO()
    optimized.save(buffer)
    buffer.seek(0)
    loaded = jit.load(buffer)
    assert _fused(loaded)[0].target.row_local
    with mt.no_grad():
        np.testing.assert_array_equal(loaded(*args).numpy(), optimized(*args).numpy())


def test_chunks_shared_among_threads_give_one_threads_results(monkeypatch):
    # catches: threads writing into each other's scratch buffers or chunks, and a failing
    # chunk in a worker thread passed over silently
    args = _args((2048, 512))
    optimized = jit.optimize(jit.trace(normalise, args))
    with mt.no_grad():
        monkeypatch.setattr(mt.threads, "_threads", 1)
        one = optimized(*args).numpy()
        monkeypatch.setattr(mt.threads, "_threads", 4)
        for _ in range(3):
            np.testing.assert_array_equal(optimized(*args).numpy(), one)

    def boom(step):
        if step == 3:
            raise ValueError("chunk 3 failed")

    with pytest.raises(ValueError, match="chunk 3 failed"):
        fusion.run_chunks(boom, list(range(8)))


def test_training_keeps_the_intermediates_and_backward_twice_still_agrees():
    # catches: a kept-intermediates backward that wraps its saved values twice on a second
    # backward (retain_graph), or that differs from the recomputing one
    args = _args((64, 48), "float64")
    x = args[0].detach().requires_grad_()
    optimized = jit.optimize(jit.trace(normalise, args))
    out = optimized(x, *args[1:])
    assert type(out.grad_fn).__name__.startswith("FusedElementwiseKept")
    out.pow(2).sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    out.pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-12)
    x2 = args[0].detach().requires_grad_()
    normalise(x2, *args[1:]).pow(2).sum().backward()
    np.testing.assert_allclose(first, x2.grad.numpy(), rtol=1e-10, atol=1e-12)
