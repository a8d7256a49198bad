"""Ops that are also formulas of ops (LayerNorm, GELU): one node in eager, their parts for
the layers that read ops one by one (apply hooks and the tracer, autocast), same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit
from minitorch.function import register_apply_hook

F = mt.nn.functional


def _leaves(seed: int, *shapes: tuple, dtype=mt.float64) -> list:
    rng = np.random.default_rng(seed)
    return [mt.tensor(rng.standard_normal(s) * 2 + 0.5, dtype=dtype, requires_grad=True)
            for s in shapes]  # fmt: skip


CASES = {
    "layer_norm": lambda x, w, b: F.layer_norm(x, (6,), w, b),
    "layer_norm two dims, no affine": lambda x, w, b: F.layer_norm(x, (5, 6)) * w.sum() + b,
    "gelu": lambda x, w, b: F.gelu(x * w + b),
    "gelu tanh": lambda x, w, b: F.gelu(x * w + b, approximate="tanh"),
    "attention, causal": lambda x, w, b: F.scaled_dot_product_attention(
        x, x * w, x + b, is_causal=True
    ),
    # a broadcast key and value (one for every batch) and a bool mask that hides a whole row
    "attention, bool mask": lambda x, w, b: F.scaled_dot_product_attention(
        x, (x * w)[0], (x + b)[0], attn_mask=_HIDE_ROW
    ),
    # a float mask that gets a gradient, and a scale of its own
    "attention, float mask": lambda x, w, b: F.scaled_dot_product_attention(
        x, x * w, x, attn_mask=(x * b)[0, :, :5], scale=0.3
    ),
}
_HIDE_ROW = mt.tensor([[True] * 5] * 4 + [[False] * 5])


@pytest.mark.parametrize("name", CASES)
def test_eager_op_agrees_with_its_decomposition(name):
    # catches: a backward formula that differs from the ops' (a sign, a missing mean term,
    # the weight's gradient summed over the wrong dims), a forward in another order
    fn = CASES[name]
    x, w, b = _leaves(0, (4, 5, 6), (6,), (6,))
    eager = fn(x, w, b)
    (eager * eager).sum().backward()
    got = [eager.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    seen = []
    handle = register_apply_hook(lambda op, *_: seen.append(op.name))  # the formula runs
    try:
        parts = fn(x, w, b)
    finally:
        handle.remove()
    assert "mul" in seen and not {"layer_norm", "gelu", "scaled_dot_product_attention"} & set(seen)
    (parts * parts).sum().backward()
    want = [parts.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_gradients_and_second_derivatives(name):
    # catches: saved values not differentiable again (create_graph through the op's own
    # backward gives a zero or wrong second derivative)
    x, w, b = _leaves(1, (1, 5, 6), (6,), (6,))
    assert mt.autograd.gradcheck(CASES[name], (x, w, b))
    assert mt.autograd.gradgradcheck(CASES[name], (x, w, b))


def test_one_node_in_eager_and_the_parts_under_a_hook_and_a_trace():
    # catches: the op recorded as its nine (or five) parts in eager; a hook or trace that
    # sees a node it cannot fuse or export instead of the ops it knows
    x, w, b = _leaves(2, (3, 6), (6,), (6,))
    y = F.layer_norm(x, (6,), w, b)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    seen = []
    handle = register_apply_hook(lambda op, args, kwargs, out: seen.append(op.name))
    try:
        F.gelu(F.layer_norm(x, (6,), w, b))
    finally:
        handle.remove()
    assert "layer_norm" not in seen and "gelu" not in seen
    assert {"mean", "sqrt", "erf"} <= set(seen)
    graph = jit.trace(lambda x: F.gelu(F.layer_norm(x, (6,)), approximate="tanh"), (x,)).graph
    ops = graph.op_counts()
    assert "layer_norm" not in ops and "gelu" not in ops and "tanh" in ops
    assert F.layer_norm(x, (6,)).grad_fn.name() == "NativeLayerNormBackward0"  # hook gone


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", ["affine", "several dims", "no affine", "bias=False"])
def test_layer_norm_agrees_with_pytorch(case, dtype):
    # catches: float16/bfloat16 rounded at each step instead of once, the weight and bias
    # gradients in the wrong dtype or shape, normalised over the wrong dims
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    dims = (5, 6) if case == "several dims" else (6,)
    data = [rng.standard_normal(s) for s in ((4, 5, 6), dims, dims, (4, 5, 6))]
    mine = [mt.tensor(a, dtype=getattr(mt, dtype), requires_grad=True) for a in data[:3]]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in data[:3]]
    outs = []
    for lib, (x, w, b) in ((mt, mine), (torch, theirs)):
        weight = None if case == "no affine" else w
        bias = None if case in ("no affine", "bias=False") else b
        y = lib.nn.functional.layer_norm(x, dims, weight, bias)
        y.backward(lib.tensor(data[3]).to(y.dtype))
        outs.append([y] + [t.grad for t in (x, w, b) if t.grad is not None])
    assert len(outs[0]) == len(outs[1])
    tol = 1e-5 if dtype == "float32" else 2e-2
    for a, t in zip(*outs, strict=True):
        assert a.dtype.name == str(t.dtype).removeprefix("torch.") and a.shape == tuple(t.shape)
        np.testing.assert_allclose(
            a.detach().float().numpy(), t.detach().float().numpy(), rtol=tol, atol=tol
        )


def test_chapter_07_kernel_dispatch_sees_the_parts():
    # catches: a LayerNorm or GELU that skips the kernels while they serve the device (the
    # op has no kernel of its own; its parts do), or a dispatch layer left on the stack
    x = mt.tensor([0.5, -1.0], requires_grad=True)
    mt.cuda.enable("cpu")
    try:
        inside = F.gelu(x).grad_fn.name()
    finally:
        mt.cuda.disable("cpu")
    assert inside == "MulBackward0"
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
