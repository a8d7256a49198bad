"""One training step (forward, backward, Adam) of an MLP and a small CNN: minitorch vs PyTorch.

Run: ``.venv/bin/python benchmarks/bench_training.py`` (PyTorch comes with ``make test``'s
environment; without it only minitorch's times are printed). Both frameworks run in this
process on the same data, timed in turns (``timing.best_times``); the best step is reported.
"""

from __future__ import annotations

import numpy as np
from timing import best_times

import minitorch

try:
    import torch
except ImportError:  # the reference extra is optional
    torch = None


def mlp(lib):
    return lib.nn.Sequential(
        lib.nn.Linear(784, 1024), lib.nn.ReLU(),
        lib.nn.Linear(1024, 1024), lib.nn.ReLU(),
        lib.nn.Linear(1024, 10),
    )  # fmt: skip


def cnn(lib):
    return lib.nn.Sequential(
        lib.nn.Conv2d(1, 16, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Conv2d(16, 32, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Flatten(), lib.nn.Linear(32 * 7 * 7, 10),
    )  # fmt: skip


def make_step(lib, model, x, y):
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def run(name: str, build, x_shape: tuple, repeats: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = rng.integers(0, 10, x_shape[0])
    steps = {
        "minitorch": make_step(
            minitorch, build(minitorch), minitorch.tensor(x), minitorch.tensor(y)
        )
    }
    if torch is not None:
        torch.manual_seed(0)
        steps["PyTorch"] = make_step(torch, build(torch), torch.tensor(x), torch.tensor(y))
    best = best_times(steps, repeats)
    line = f"{name:<34} minitorch {best['minitorch'] * 1e3:8.2f} ms"
    if torch is not None:
        ratio = best["minitorch"] / best["PyTorch"]
        line += f"   PyTorch {best['PyTorch'] * 1e3:8.2f} ms   ratio {ratio:5.2f}x"
    print(line)


def main() -> None:
    print("one training step = zero_grad + forward + cross-entropy + backward + Adam step")
    run("MLP 784-1024-1024-10, batch 256", mlp, (256, 784), repeats=12)
    run("CNN 2 conv + linear, batch 64", cnn, (64, 1, 28, 28), repeats=12)
    print("targets: MLP within 1.5x of PyTorch, CNN within 3x")


if __name__ == "__main__":
    main()
