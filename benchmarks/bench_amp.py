"""Mixed precision: bytes saved for backward and step time, float32 vs AMP, minitorch vs PyTorch.

Run: ``.venv/bin/python benchmarks/bench_amp.py``. One training step (forward under
autocast, scaled backward, Adam through a GradScaler) of an MLP on a wide batch, in float32
and in float16/bfloat16 AMP, timed in turns in this process (``timing.best_times``). On the
CPU, AMP saves memory but not time: numpy has no half-precision BLAS, so minitorch multiplies
in float32 and rounds (and pays for the casts). With cupy and a GPU the same step also runs
on the GPU, where tensor cores make float16 matmuls faster. Also printed: numpy's own
float16 matmul against float32, the reason minitorch does not use it.
"""

from __future__ import annotations

import numpy as np
from timing import best_times

import minitorch as mt
from minitorch.amp import GradScaler, autocast, memory_report

try:
    import torch
except ImportError:  # the reference extra is optional
    torch = None

BATCH, WIDTH = 2048, 512


def _step(lib, device, dtype):
    """A step function for ``lib`` (minitorch or torch) at ``dtype`` (None: float32)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(
        lib.nn.Linear(WIDTH, WIDTH), lib.nn.ReLU(),
        lib.nn.Linear(WIDTH, WIDTH), lib.nn.ReLU(),
        lib.nn.Linear(WIDTH, 10),
    ).to(device)  # fmt: skip
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    if lib is mt:
        scaler = GradScaler(enabled=dtype is mt.float16)
        cast = autocast(device, dtype=dtype or mt.float16, enabled=dtype is not None)
    else:
        scaler = torch.amp.GradScaler(device, enabled=dtype is torch.float16)
        cast = torch.autocast(device, dtype=dtype or torch.float16, enabled=dtype is not None)
    x = lib.randn(BATCH, WIDTH, device=device)
    y = lib.randint(0, 10, (BATCH,), device=device)

    def step():
        opt.zero_grad()
        with cast:
            loss = lib.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    def memory():
        with cast:
            loss = lib.nn.functional.cross_entropy(model(x), y)
        return memory_report(model.parameters(), loss)

    return step, memory


def _sync(device):
    if device == "cuda":
        mt.backend.get("cuda").xp.cuda.Device().synchronize()


def bench_device(device: str, repeat: int) -> None:
    dtypes = {"fp32": None, "fp16-AMP": mt.float16}
    if device == "cpu":
        dtypes["bf16-AMP"] = mt.bfloat16
    print(f"\n== {device}: MLP {WIDTH}-{WIDTH}-10, batch {BATCH}, one training step ==")
    steps = {}
    for name, dtype in dtypes.items():
        step, memory = _step(mt, device, dtype)
        report = memory()
        print(
            f"minitorch {name:9s} parameters {report.parameters / 2**20:6.1f} MiB  gradients "
            f"{report.gradients / 2**20:6.1f} MiB  saved activations "
            f"{report.activations / 2**20:6.1f} MiB"
        )

        def timed(step=step):
            step()
            _sync(device)

        steps[f"minitorch {name}"] = timed
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        for name, dtype in {"fp32": None, "fp16-AMP": torch.float16}.items():
            steps[f"torch {name}"] = _step(torch, device, dtype)[0]
    times = best_times(steps, repeat)
    base = times["minitorch fp32"]
    for name, seconds in times.items():
        print(f"{name:20s} {seconds * 1e3:8.2f} ms   {seconds / base:5.2f}x minitorch fp32")


def bench_numpy_matmul(repeat: int) -> None:
    """numpy's float16 matmul is a plain loop, without BLAS."""
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    half = a.astype(np.float16)
    times = best_times(
        {
            "numpy float32 matmul": lambda: a @ a,
            "numpy float16 matmul": lambda: half @ half,
            "minitorch float16 matmul": lambda: mt.matmul(mt.from_numpy(half), mt.from_numpy(half)),
        },
        repeat,
    )
    print("\n== 256x256 matmul ==")
    for name, seconds in times.items():
        ratio = seconds / times["numpy float32 matmul"]
        print(f"{name:26s} {seconds * 1e3:8.3f} ms   {ratio:7.1f}x numpy float32")


if __name__ == "__main__":
    bench_numpy_matmul(repeat=8)
    bench_device("cpu", repeat=8)
    if mt.cuda.is_available():
        bench_device("cuda", repeat=20)
    else:
        print("\n(no GPU: the CUDA comparison is skipped)")
