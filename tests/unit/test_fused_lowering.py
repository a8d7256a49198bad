"""Chapter 05's fused node runs as ONE generated GPU kernel (minitorch.cuda.lowering): every
op the fusion pass fuses has a line of kernel code, a node with several outputs stores each
once, broadcast inputs are read through stride 0, and through the backend seam an optimized
module gives eager's outputs and gradients. The simulator stands in for the GPU here."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import jit, nn
from minitorch.cuda import lowering, simulator
from minitorch.jit.fusion import ElementwiseOp, FusedKernel
from minitorch.jit.ops import ELEMENTWISE

UNARY = sorted({"neg", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "erf"})
BINARY = sorted(ELEMENTWISE - set(UNARY))


def _kernel(ops, inputs, outputs, shape=(3, 5)) -> FusedKernel:
    return FusedKernel("k", tuple(inputs), tuple(ops), tuple(outputs), shape, "float64")


def test_every_fusable_op_is_covered():
    assert set(UNARY) | set(BINARY) == ELEMENTWISE and len(BINARY) == 7


@pytest.mark.parametrize("op", UNARY)
def test_each_unary_op_matches_the_cpu_fused_kernel(op):
    # catches: an op missing from the kernel tables, or a formula that differs from numpy's
    x = np.linspace(-4.0, 4.0, 15).reshape(3, 5)
    if op in ("log", "sqrt"):
        x = np.abs(x) + 0.1
    k = _kernel([ElementwiseOp(op, (("input", 0),))], [("float64", (3, 5))], [0])
    (got,) = lowering.run(k, [x])
    (want,) = k.run((x,))
    # (minitorch's float64 erf is Cody's rational, a few ulp from the kernel's erf())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("op", BINARY)
def test_each_binary_op_matches_with_a_broadcast_operand_and_a_constant(op):
    # catches: operands swapped, broadcasting by copying instead of stride 0, constants lost
    rng = np.random.default_rng(0)
    a = np.abs(rng.standard_normal((3, 5))) + 0.5
    b = np.abs(rng.standard_normal(5)) + 0.5  # broadcast along dim 0
    ops = [
        ElementwiseOp(op, (("input", 0), ("input", 1))),
        ElementwiseOp(op, (("op", 0), 1.5)),
        ElementwiseOp(op, (0.75, ("op", 1))),
    ]
    k = _kernel(ops, [("float64", (3, 5)), ("float64", (5,))], [2])
    with simulator.recording() as launches:
        (got,) = lowering.run(k, [a, b])
    (want,) = k.run((a, b))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(launches) == 1 and launches[0].array_traffic["in1"][0] == 15  # read, not copied


def test_a_node_with_two_outputs_stores_each_once_in_one_launch():
    x = np.linspace(-1, 1, 15).reshape(3, 5)
    ops = [
        ElementwiseOp("tanh", (("input", 0),)),
        ElementwiseOp("exp", (("op", 0),)),
        ElementwiseOp("mul", (("op", 1), ("op", 0))),
    ]
    k = _kernel(ops, [("float64", (3, 5))], [1, 2])
    with simulator.recording() as launches:
        got = lowering.run(k, [x])
    assert len(launches) == 1
    assert launches[0].array_traffic["out0"] == (0, 15)
    assert launches[0].array_traffic["out1"] == (0, 15)
    for g, w in zip(got, k.run((x,)), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_the_wrong_number_of_inputs_is_refused_naming_the_kernel():
    k = _kernel([ElementwiseOp("neg", (("input", 0),))], [("float64", (3, 5))], [0])
    with pytest.raises(ValueError, match="fused kernel k: takes 1 inputs, got 2"):
        lowering.run(k, [np.ones((3, 5)), np.ones((3, 5))])


class GeluBlock(nn.Module):
    def __init__(self, width: int = 8):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(width, 2 * width), nn.Linear(2 * width, width)

    def forward(self, x):
        h = F.gelu(self.fc1(x), approximate="tanh")
        return x + self.fc2(h * h.sigmoid())


def test_an_optimized_module_runs_each_fused_node_as_one_kernel_through_the_seam(monkeypatch):
    # catches: the fused node left to its numpy forward on the device (no launch of its own)
    ran = []
    run = lowering.run
    monkeypatch.setattr(lowering, "run", lambda k, arrays: ran.append(k) or run(k, arrays))
    mt.manual_seed(0)
    block = GeluBlock()
    x = mt.randn(4, 8, requires_grad=True)
    fused = jit.optimize(jit.trace(block, x))
    nodes = fused.graph.op_counts()["fused"]
    assert nodes >= 1
    want = block(x)
    want.sum().backward()
    want_grad = x.grad.numpy().copy()
    x.grad = None
    mt.cuda.enable("cpu")
    try:
        with simulator.recording() as launches:
            got = fused(x)
        got.sum().backward()
    finally:
        mt.cuda.disable("cpu")
    assert len(ran) == nodes and any("tanh" in k.summary() for k in ran)
    assert sum(s.kernel == "fused_kernel" for s in launches) >= nodes
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), want_grad, rtol=1e-4, atol=1e-6)


def test_float16_fused_nodes_stay_with_the_numpy_kernel():
    x = mt.randn(3, 4).half()
    fused = jit.optimize(jit.trace(lambda t: (t * 2.0).tanh(), x))
    mt.cuda.enable("cpu")
    try:
        with simulator.recording() as launches:
            got = fused(x)
    finally:
        mt.cuda.disable("cpu")
    assert launches == [] and got.dtype == mt.float16
    np.testing.assert_allclose(got.numpy(), np.tanh(x.numpy() * 2), rtol=1e-3)


@pytest.mark.gpu
@pytest.mark.skipif(not mt.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_fused_nodes_on_the_gpu():
    mt.manual_seed(0)
    block = GeluBlock()
    x = mt.randn(64, 8)
    want = block(x).detach().numpy()
    block.to("cuda")
    mt.cuda.enable("cuda")
    try:
        fused = jit.optimize(jit.trace(block, x.to("cuda")))
        assert fused.graph.op_counts()["fused"] >= 1
        got = fused(x.to("cuda")).detach().cpu().numpy()
    finally:
        mt.cuda.disable("cuda")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
