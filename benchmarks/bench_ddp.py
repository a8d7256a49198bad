"""All-reduce bandwidth (local backend vs MPI vs PyTorch's gloo) and DDP step time.

1. ``all_reduce`` of float32 messages from 1 KB to 64 MB on 2 ranks: minitorch's ``local``
   backend (loopback TCP, ring), minitorch's ``mpi`` backend (under ``mpiexec -n 2``, when
   mpi4py is installed) and PyTorch's gloo (when torch is installed). Best time of several,
   as bus bandwidth 2(N-1)/N * bytes / time, and the ratio of each to MPI.
2. One training step of an MLP on a global batch of 256: one process on the whole batch vs
   DDP on 2 ranks with half the batch each (the slower rank's time).

    python benchmarks/bench_ddp.py [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import minitorch as mt  # noqa: E402
import minitorch.distributed as dist  # noqa: E402
import minitorch.nn.functional as F  # noqa: E402
from minitorch import nn, optim  # noqa: E402

SIZES = [2**k for k in range(10, 27, 2)]  # 1 KiB ... 64 MiB
QUICK_SIZES = [2**k for k in (10, 16, 20, 24)]


def _repeats(nbytes: int) -> int:
    return int(min(30, max(3, 2**25 // nbytes)))


def _time_all_reduce(all_reduce, barrier, make, sizes) -> list[float]:
    """Best seconds per size; ``make(n)`` makes a float32 buffer of n elements."""
    best = []
    for nbytes in sizes:
        buf = make(nbytes // 4)
        all_reduce(buf)  # warm up the links and the allocator
        times = []
        for _ in range(_repeats(nbytes)):
            barrier()
            start = time.perf_counter()
            all_reduce(buf)
            times.append(time.perf_counter() - start)
        best.append(min(times))
    return best


def minitorch_worker(rank: int, backend: str, sizes: list[int]) -> list[float]:
    if not dist.is_initialized():
        dist.init_process_group(backend)
    return _time_all_reduce(dist.all_reduce, dist.barrier, mt.ones, sizes)


def torch_worker(rank: int, sizes: list[int]) -> list[float]:
    import torch
    import torch.distributed as tdist

    torch.set_num_threads(1)
    tdist.init_process_group("gloo")
    try:
        return _time_all_reduce(tdist.all_reduce, tdist.barrier, torch.ones, sizes)
    finally:
        tdist.destroy_process_group()


def mpi_times(sizes: list[int]) -> list[float] | None:
    """The MPI backend's times, from ``mpiexec -n 2`` running this file as a worker."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec"
    )
    if mpiexec is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mpi.json"
        cmd = [mpiexec, "-n", "2", sys.executable, __file__, "--mpi-worker", str(out)]
        cmd += [str(s) for s in sizes]
        subprocess.run(cmd, check=True, timeout=600)
        return json.loads(out.read_text())


def _mpi_worker_main(out: str, sizes: list[int]) -> None:
    times = minitorch_worker(0, "mpi", sizes)
    if dist.get_rank() == 0:
        Path(out).write_text(json.dumps(times))
    dist.destroy_process_group()


# --- DDP step vs one process ------------------------------------------------------------------
BATCH, STEPS = 256, 20


def _model() -> nn.Module:
    mt.manual_seed(0)
    return nn.Sequential(
        nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )


def step_time(rank: int, world: int) -> float:
    rng = np.random.default_rng(rank)
    n = BATCH // max(world, 1)
    x = mt.from_numpy(rng.standard_normal((n, 64)).astype(np.float32))
    y = mt.from_numpy(rng.integers(0, 10, n))
    model = _model()
    if world:
        dist.init_process_group()
        model = dist.DistributedDataParallel(model)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    best = float("inf")
    for _ in range(STEPS):
        if world:
            dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        best = min(best, time.perf_counter() - start)
    return best


def _fmt_time(s: float) -> str:
    return f"{s * 1e6:8.0f} us" if s < 1e-3 else f"{s * 1e3:8.2f} ms"


def _fmt_size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 2**10} KiB"


def main() -> None:
    sizes = QUICK_SIZES if "--quick" in sys.argv else SIZES
    bus = lambda nbytes, t: nbytes / t / 1e9  # 2 ranks: 2(N-1)/N = 1
    local = dist.spawn(minitorch_worker, 2, ("local", sizes), timeout=600)[0]
    mpi = mpi_times(sizes)
    try:
        import torch  # noqa: F401

        gloo = dist.spawn(torch_worker, 2, (sizes,), timeout=600)[0]
    except ImportError:
        gloo = None
    print("all_reduce, 2 ranks, float32: best time and bus bandwidth (GB/s)")
    head = f"{'size':>8} | {'local':>20}"
    head += f" | {'mpi':>20} | local/mpi" if mpi else ""
    head += f" | {'torch gloo':>20} | local/gloo" if gloo else ""
    print(head)
    for k, nbytes in enumerate(sizes):
        row = f"{_fmt_size(nbytes):>8} | {_fmt_time(local[k])} {bus(nbytes, local[k]):6.2f} GB/s"
        if mpi:
            row += f" | {_fmt_time(mpi[k])} {bus(nbytes, mpi[k]):6.2f} GB/s"
            row += f" | {local[k] / mpi[k]:8.2f}x"
        if gloo:
            row += f" | {_fmt_time(gloo[k])} {bus(nbytes, gloo[k]):6.2f} GB/s"
            row += f" | {local[k] / gloo[k]:9.2f}x"
        print(row)
    if not mpi:
        print("(no MPI figures: pip install -e '.[mpi]' for mpi4py and MPICH)")
    single = step_time(0, 0)
    ddp = max(dist.spawn(step_time, 2, (2,), timeout=600))
    print(f"\nMLP 64-512-512-10, global batch {BATCH}, SGD step (best of {STEPS}):")
    print(f"  one process, whole batch: {_fmt_time(single)}")
    print(
        f"  DDP, 2 ranks, half each:  {_fmt_time(ddp)}   (DDP / one process: "
        f"{ddp / single:.2f}x; on 2 shared cores the ranks compete for the same CPUs)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--mpi-worker":
        os.environ.setdefault("MINITORCH_DIST_TIMEOUT", "300")
        _mpi_worker_main(sys.argv[2], [int(s) for s in sys.argv[3:]])
    else:
        main()
