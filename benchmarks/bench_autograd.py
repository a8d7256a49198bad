"""Autograd speed, side by side in one process: minitorch vs PyTorch (CPU) vs numpy by hand.

1. Forward + backward of a 3-layer MLP (batch 256, 784 -> 1024 -> 1024 -> 10, float32,
   ReLU, mean cross-entropy via log-softmax): minitorch, PyTorch, and hand-written numpy
   with manual gradients. Large matmuls dominate, so this measures what autograd *adds*.
2. Per-op overhead: a chain of 1,000 small ops (10 elements, grad on) forward + backward.
   Tiny arrays make the arithmetic free, so this measures the bookkeeping per op.

Run:  python benchmarks/bench_autograd.py [--repeat N]
PyTorch is optional; without it the PyTorch columns are skipped. Targets: minitorch within
1.2x of numpy and 1.5x of PyTorch on the MLP, within 3x of PyTorch per small op.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from timing import best_times

import minitorch as mt

BATCH, SIZES = 256, (784, 1024, 1024, 10)
CHAIN = 1000


def mlp_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    onehot = np.eye(SIZES[-1], dtype=np.float32)[labels]
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, onehot, params


# --- the MLP three ways -------------------------------------------------------------------------
def mlp_autograd(lib, x_np: np.ndarray, onehot_np: np.ndarray, params_np: list) -> Callable:
    """The MLP in a framework with autograd: ``lib`` is minitorch or torch (same code)."""
    x, onehot = lib.from_numpy(x_np), lib.from_numpy(onehot_np)
    params = [lib.tensor(p, requires_grad=True) for p in params_np]

    def step() -> list:
        for p in params:
            p.grad = None
        w1, b1, w2, b2, w3, b3 = params
        h1 = (x @ w1 + b1).relu()
        h2 = (h1 @ w2 + b2).relu()
        logits = h2 @ w3 + b3
        loss = -(logits.log_softmax(1) * onehot).sum() / BATCH
        loss.backward()
        return [p.grad for p in params]

    return step


def mlp_numpy(x: np.ndarray, onehot: np.ndarray, params: list) -> Callable:
    """The same network with its gradients derived and written by hand."""

    def step() -> list:
        w1, b1, w2, b2, w3, b3 = params
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        _loss = -(logp * onehot).sum() / BATCH
        # backward
        g_logp = -onehot / BATCH
        g_logits = g_logp - np.exp(logp) * g_logp.sum(axis=1, keepdims=True)
        g_w3, g_b3 = h2.T @ g_logits, g_logits.sum(axis=0)
        g_z2 = (g_logits @ w3.T) * (z2 > 0)
        g_w2, g_b2 = h1.T @ g_z2, g_z2.sum(axis=0)
        g_z1 = (g_z2 @ w2.T) * (z1 > 0)
        g_w1, g_b1 = x.T @ g_z1, g_z1.sum(axis=0)
        return [g_w1, g_b1, g_w2, g_b2, g_w3, g_b3]

    return step


# --- a chain of small ops ---------------------------------------------------------------------
def chain(x) -> Callable:
    """1,000 alternating elementwise ops on 10 elements, then backward."""

    def step() -> None:
        y = x
        for _ in range(CHAIN // 4):
            y = y * 1.001
            y = y + 0.001
            y = y.tanh()
            y = y - 0.0001
        y.sum().backward()
        x.grad = None

    return step


def forward_chain(x) -> Callable:
    def step() -> None:
        y = x
        for _ in range(CHAIN // 4):
            y = y * 1.001
            y = y + 0.001
            y = y.tanh()
            y = y - 0.0001

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=16, help="timed runs per measurement")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: its columns are skipped (pip install torch)\n")

    x, onehot, params = mlp_data()
    # Same gradients first: a fast wrong answer is no answer.
    ref = mlp_numpy(x, onehot, params)()
    got = mlp_autograd(mt, x, onehot, params)()
    for g_ref, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g.numpy(), g_ref, rtol=2e-3, atol=2e-5)

    print(f"MLP forward+backward: batch {BATCH}, {' -> '.join(map(str, SIZES))}, float32")
    contenders = {
        "numpy": mlp_numpy(x, onehot, params),
        "minitorch": mlp_autograd(mt, x, onehot, params),
    }
    if torch is not None:
        contenders["torch"] = mlp_autograd(torch, x, onehot, params)
    t = best_times(contenders, args.repeat)
    print(f"  numpy by hand   {t['numpy'] * 1e3:8.2f} ms")
    print(f"  minitorch       {t['minitorch'] * 1e3:8.2f} ms")
    if torch is not None:
        threads = torch.get_num_threads()
        print(f"  PyTorch (cpu)   {t['torch'] * 1e3:8.2f} ms   ({threads} threads)")
    print(f"  minitorch / numpy   {t['minitorch'] / t['numpy']:5.2f}x   (target <= 1.2x)")
    if torch is not None:
        print(f"  minitorch / PyTorch {t['minitorch'] / t['torch']:5.2f}x   (target <= 1.5x)")

    print(f"\nPer-op overhead: a chain of {CHAIN} ops on 10 elements, forward + backward")
    x_mt = mt.randn(10, requires_grad=True)
    contenders = {"minitorch": chain(x_mt), "minitorch forward": forward_chain(x_mt)}
    if torch is not None:
        x_pt = torch.randn(10, requires_grad=True)
        contenders.update({"torch": chain(x_pt), "torch forward": forward_chain(x_pt)})
    t = {k: v / CHAIN for k, v in best_times(contenders, args.repeat * 2).items()}
    with mt.no_grad():
        no_graph = best_times({"x": forward_chain(x_mt)}, args.repeat)["x"] / CHAIN
    print(
        f"  minitorch       {t['minitorch'] * 1e6:6.2f} us/op  (forward with graph "
        f"{t['minitorch forward'] * 1e6:5.2f}, without {no_graph * 1e6:5.2f})"
    )
    if torch is not None:
        print(
            f"  PyTorch (cpu)   {t['torch'] * 1e6:6.2f} us/op  (forward with graph "
            f"{t['torch forward'] * 1e6:5.2f})"
        )
        print(f"  minitorch / PyTorch {t['minitorch'] / t['torch']:5.2f}x   (target <= 2.5x)")


if __name__ == "__main__":
    main()
