"""Every chapter 07 kernel matches numpy in the simulator, on shapes with ragged edge tiles;
the same kernels through the backend seam; and (marked gpu) on the device."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch.cuda import autotune, fusion_codegen, kernels, simulator

SHAPES = [(1, 1, 1), (7, 5, 3), (19, 13, 23), (8, 16, 8), (33, 9, 17)]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_matmul_variants_match_numpy(rng, m, n, k):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(kernels.matmul_naive(a, b), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(kernels.matmul_tiled(a, b, tile=8), want, rtol=1e-4, atol=1e-4)
    blocked = kernels.matmul_register_blocked(a, b, tile=16, r=4, tile_k=4)
    np.testing.assert_allclose(blocked, want, rtol=1e-4, atol=1e-4)


def test_tiling_divides_global_reads(rng):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    reads = {}
    for name, run in [("naive", kernels.matmul_naive), ("tiled", kernels.matmul_tiled)]:
        with simulator.recording() as launches:
            run(a, a)
        reads[name] = sum(s.global_reads for s in launches)
    assert reads["naive"] == 2 * 32**3
    assert reads["tiled"] == 2 * 32**3 // 16


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_sum_all_matches_numpy(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_allclose(kernels.sum_all(x, block=32), x.sum(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 1), (2, 5, 33), (4, 100)])
def test_row_sums_and_softmax_match_numpy(rng, shape):
    x = (rng.standard_normal(shape) * 20).astype(np.float32)
    np.testing.assert_allclose(kernels.sum_last_dim(x, block=16), x.sum(-1), rtol=1e-4, atol=1e-4)
    e = np.exp(x - x.max(-1, keepdims=True))
    got = kernels.softmax_last_dim(x, block=16)
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_elementwise_reads_views_and_broadcasts_in_place(rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    view = x.transpose(2, 0, 1)[1:, ::-1, 1::2]
    col = rng.standard_normal((4, 1)).astype(np.float32)
    np.testing.assert_allclose(kernels.zip_op("sub", view, col), view - col, rtol=1e-6)
    np.testing.assert_allclose(kernels.map_op("tanh", view), np.tanh(view), rtol=1e-5)


def test_a_fused_chain_is_one_kernel_reading_each_input_once(rng):
    steps = [("mul", "x0", "x1"), ("sigmoid", "t0"), ("sub", 1.0, "t1"), ("div", "t2", "x1")]
    x, y = rng.uniform(1, 2, (6, 7)), rng.uniform(1, 2, (7,))
    with simulator.recording() as launches:
        got = fusion_codegen.run_steps(steps, [x, y])
    np.testing.assert_allclose(got, fusion_codegen.reference(steps, [x, y]), rtol=1e-12)
    (stats,) = launches
    assert stats.array_traffic["in0"] == (42, 0) and stats.array_traffic["out"] == (0, 42)
    assert stats.array_traffic["in1"] == (42, 0)


def test_autotune_tunes_once_per_shape(rng):
    autotune.clear()
    a = rng.standard_normal((9, 10)).astype(np.float32)
    b = rng.standard_normal((10, 11)).astype(np.float32)
    np.testing.assert_allclose(kernels.matmul_autotuned(a, b), a @ b, rtol=1e-4, atol=1e-4)
    with simulator.recording() as launches:
        kernels.matmul_autotuned(a, b)
    assert len(launches) == 1 and len(autotune.cached()) == 1


def test_the_backend_seam_routes_ops_to_the_kernels_with_autograd():
    mt.manual_seed(0)
    x = mt.randn(3, 5, requires_grad=True)
    w = mt.randn(5, 4, requires_grad=True)

    def loss():
        y = (x @ w).relu() * 2.0 - x.sum(-1, keepdim=True)
        return (y.softmax(-1) * y.exp()).sum()

    expected = loss()
    expected.backward()
    grads = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    mt.cuda.enable("cpu")
    try:
        with simulator.recording() as launches:
            got = loss()
            got.backward()
    finally:
        mt.cuda.disable("cpu")
    names = {s.kernel for s in launches}
    assert {"fused_kernel", "softmax_rows", "row_sum"} <= names
    assert any(n.startswith("matmul") for n in names)
    np.testing.assert_allclose(got.item(), expected.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), grads[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), grads[1], rtol=1e-4, atol=1e-5)
    assert mt.backend.kernel_for(mt.ops.Add, "cpu") is None  # disabled again


def test_the_seam_leaves_what_it_does_not_cover_to_forward():
    mt.cuda.enable("cpu")
    try:
        with simulator.recording() as launches:
            ints = mt.tensor([1, 2, 3]) + mt.tensor([4, 5, 6])
            batched = mt.ones(2, 3, 4) @ mt.ones(4, 5)
    finally:
        mt.cuda.disable("cpu")
    assert launches == []
    assert ints.tolist() == [5, 7, 9] and batched.shape == (2, 3, 5)


# --- on the device ------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not mt.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_every_kernel_matches_on_the_gpu(rng):
    import cupy as cp

    a = rng.standard_normal((70, 45)).astype(np.float32)
    b = rng.standard_normal((45, 33)).astype(np.float32)
    ga, gb = cp.asarray(a), cp.asarray(b)
    want = a.astype(np.float64) @ b
    for got in (
        kernels.matmul_naive(ga, gb),
        kernels.matmul_tiled(ga, gb, tile=16),
        kernels.matmul_register_blocked(ga, gb, tile=64, r=4, tile_k=16),
    ):
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-4, atol=1e-4)
    x = rng.standard_normal((9, 300)).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    got = cp.asnumpy(kernels.softmax_last_dim(cp.asarray(x)))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(kernels.sum_all(cp.asarray(x))), x.sum(), rtol=1e-4)
    np.testing.assert_allclose(
        cp.asnumpy(kernels.sum_last_dim(cp.asarray(x))), x.sum(-1), rtol=1e-4, atol=1e-4
    )
    steps = [("mul", "x0", "x1"), ("exp", "t0"), ("add", "t1", 1.0)]
    y = rng.standard_normal(300).astype(np.float32)
    got = cp.asnumpy(fusion_codegen.run_steps(steps, [cp.asarray(x), cp.asarray(y)]))
    np.testing.assert_allclose(got, fusion_codegen.reference(steps, [x, y]), rtol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not mt.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_the_cuda_device_routes_ops_to_the_kernels():
    x = mt.randn(4, 40).to("cuda")
    w = mt.randn(40, 8).to("cuda")
    mt.cuda.enable("cuda")
    try:
        got = (x @ w).softmax(-1).cpu().numpy()
    finally:
        mt.cuda.disable("cuda")
    np.testing.assert_allclose(got, (x @ w).softmax(-1).cpu().numpy(), rtol=1e-4, atol=1e-5)
