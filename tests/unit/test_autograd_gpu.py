"""Autograd on "cuda" (cupy) gives the CPU's gradients. Skipped cleanly without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import autograd

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs cupy and a CUDA GPU"),
]


def both(shape, seed):
    rng = np.random.default_rng(seed)
    cpu = minitorch.tensor(rng.standard_normal(shape), dtype=minitorch.float32)
    return cpu.requires_grad_(), cpu.detach().to("cuda").requires_grad_()


def model(x, w1, b1, w2, labels):
    h = (x @ w1 + b1).relu()
    logits = h @ w2
    y = minitorch.cat([logits, logits.max(1, keepdim=True).values], 1)
    return -(y[:, :3].log_softmax(1) * labels).sum() / x.shape[0] + y[[0, 0, 1]].tanh().mean()


def test_mlp_gradients_match_the_cpu():
    rng = np.random.default_rng(0)
    x_np, labels_np = rng.standard_normal((8, 5)), np.eye(3)[rng.integers(0, 3, 8)]
    params = [both(s, i) for i, s in enumerate([(5, 6), (6,), (6, 3)])]
    losses = []
    for k, device in enumerate(["cpu", "cuda"]):
        x = minitorch.tensor(x_np, dtype=minitorch.float32, device=device)
        labels = minitorch.tensor(labels_np, dtype=minitorch.float32, device=device)
        loss = model(x, *[p[k] for p in params], labels)
        loss.backward()
        losses.append(loss)
    np.testing.assert_allclose(
        losses[1].detach().cpu().numpy(), losses[0].detach().numpy(), rtol=1e-5
    )
    for cpu, gpu in params:
        assert gpu.grad.device == "cuda:0" and gpu.grad.dtype is minitorch.float32
        np.testing.assert_allclose(gpu.grad.cpu().numpy(), cpu.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_moving_to_the_gpu_is_differentiable():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to("cuda") * 3).sum()
    y.backward()
    assert x.grad.device == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_gradcheck_on_the_gpu():
    x = minitorch.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=minitorch.float64, device="cuda")
    x.requires_grad_()
    assert autograd.gradcheck(lambda t: (t @ t).sigmoid()[:, [1, 1]], (x,))
