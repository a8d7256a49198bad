"""Eager vs optimized graph on an elementwise-heavy block (LayerNorm -> Linear -> GELU ->
Linear, residual): what fusion buys.

Run: ``.venv/bin/python benchmarks/bench_jit.py [--repeat N]``. All contenders run in this
process on the same data, timed in turns (``timing.best_times``): minitorch eager, the
traced graph run by the interpreter (no passes), the optimized graph (folding, CSE, DCE,
elementwise fusion), and PyTorch eager when it is installed. Forward passes without
grad (inference), then one forward + backward.

First the graph families of issue 20 (a memory-bound chain, GELU + normalise). Then the
MLP block twice, each time in a process of its own with glibc's allocator in one state
(``HEAPS``: glibc as a fresh process has it, where eager's megabyte temporaries are often
mapped page by page, or a kept heap that hands them out again), because at this size that
state moves eager's time more than fusion does; ``--heap default|warm`` times one state
in this process.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import best_times

import minitorch
from minitorch import jit
from minitorch.jit import fusion

try:
    import torch
except ImportError:  # the reference extra is optional
    torch = None


def block(lib, width: int):
    class MLPBlock(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = lib.nn.LayerNorm(width)
            self.fc1 = lib.nn.Linear(width, 4 * width)
            self.fc2 = lib.nn.Linear(4 * width, width)

        def forward(self, x):
            h = lib.nn.functional.gelu(self.fc1(self.norm(x)), approximate="tanh")
            return x + self.fc2(h)

    return MLPBlock()


def chain(lib, x):
    """Ten cheap elementwise ops: memory-bound."""
    y = x * 1.5 + 0.5
    y = lib.tanh(y) * x - 0.25
    y = y * y + x
    y = lib.sigmoid(y) * 0.1 + 1.0
    return lib.maximum(y, x)


def gelu_norm(lib, x, w, b):
    """x*w + b, tanh-GELU, then a LayerNorm-like normalisation over the last dim."""
    h = x * w + b
    h = 0.5 * h * (1.0 + lib.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
    mean = h.mean(dim=-1, keepdim=True)
    centred = h - mean
    var = (centred * centred).mean(dim=-1, keepdim=True)
    return centred / lib.sqrt(var + 1e-5)


def families(repeat: int) -> None:
    """Eager vs ``minitorch.compile`` on the graph families of issue 20, best of ``repeat``."""
    rng = np.random.default_rng(0)
    x_big = minitorch.tensor(rng.standard_normal((2048, 4096)).astype(np.float32))
    x_mid = minitorch.tensor(rng.standard_normal((256, 4096)).astype(np.float32))
    w = minitorch.tensor(rng.standard_normal(4096).astype(np.float32))
    b = minitorch.tensor(rng.standard_normal(4096).astype(np.float32))
    cases = {
        "10-op elementwise chain, (2048, 4096)": (
            lambda x: chain(minitorch, x),
            (x_big,),
        ),
        "x*w+b -> tanh-GELU -> normalise, (256, 4096)": (
            lambda x, w, b: gelu_norm(minitorch, x, w, b),
            (x_mid, w, b),
        ),
    }
    print(f"\ngraph families, forward without grad (best of {repeat}):")
    for name, (fn, inputs) in cases.items():
        compiled = minitorch.compile(fn)
        fusion.ROW_LOCAL = False  # the same, fused elementwise only (split at each reduction)
        split = minitorch.compile(fn)
        with minitorch.no_grad():
            split(*inputs)
        fusion.ROW_LOCAL = True
        with minitorch.no_grad():
            diff = float(np.abs(compiled(*inputs).numpy() - fn(*inputs).numpy()).max())

            def run_eager(fn=fn, inputs=inputs):
                with minitorch.no_grad():
                    fn(*inputs)

            def run_compiled(compiled=compiled, inputs=inputs):
                with minitorch.no_grad():
                    compiled(*inputs)

        def run_whole(run=run_compiled):
            chunk_bytes = fusion.WHOLE_BYTES
            fusion.WHOLE_BYTES = float("inf")  # every fused group on whole arrays
            try:
                run()
            finally:
                fusion.WHOLE_BYTES = chunk_bytes

        def run_split(split=split, inputs=inputs):
            with minitorch.no_grad():
                split(*inputs)

        def run_one_thread(run=run_compiled):
            threads = minitorch.threads._threads
            minitorch.threads._threads = 1  # (the fused kernels' count only, not BLAS's)
            try:
                run()
            finally:
                minitorch.threads._threads = threads

        best = best_times(
            {
                "eager": run_eager,
                "compiled": run_compiled,
                "whole": run_whole,
                "split": run_split,
                "one": run_one_thread,
            },
            repeat,
        )
        e = best["eager"]
        print(
            f"  {name:46} eager {e * 1e3:7.2f} ms, compiled {best['compiled'] * 1e3:7.2f} ms: "
            f"{e / best['compiled']:.2f}x (one thread {e / best['one']:.2f}x, whole arrays "
            f"{e / best['whole']:.2f}x, split at reductions {e / best['split']:.2f}x; "
            f"max diff {diff:.1e})"
        )


#: The two states of glibc's allocator the MLP block is timed in: how eager's fresh arrays
#: of a megabyte are made decides more of its time than anything else at this size.
HEAPS = {
    "default": "glibc as it comes, in a process that has run nothing else (its thresholds "
    "adapt to what the process frees: eager's temporaries are often mapped fresh)",
    "warm": "freed memory kept and handed out again, no page faults (eager's best case)",
}
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (mallopt's parameter numbers)


def set_heap(state: str) -> None:
    """Put glibc's allocator in one of the :data:`HEAPS` states, for the whole process."""
    if state == "warm":
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)  # its largest value
        libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)  # never give memory back


def both_heaps(args: argparse.Namespace) -> None:
    """The MLP block in each heap state, each in a process of its own, then both ratios."""
    import subprocess
    import sys

    ratios = {}
    for state, meaning in HEAPS.items():
        print(f"\n=== MLP block, heap {state!r}: {meaning}", flush=True)
        command = [sys.executable, __file__, "--block-only", "--heap", state]
        command += ["--repeat", str(args.repeat), "--batch", str(args.batch)]
        command += ["--width", str(args.width)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        print("\n".join(line for line in out.splitlines() if not line.startswith("RATIOS")))
        found = [line.split()[1:] for line in out.splitlines() if line.startswith("RATIOS")]
        ratios[state] = found[0]
    print(f"\nMLP block, batch {args.batch}, width {args.width}: eager / optimized")
    print(f"  {'heap':8} {'forward (target >= 1.5x)':>26} {'forward + backward (>= 1.0x)':>30}")
    for state, (forward, train) in ratios.items():
        print(f"  {state:8} {forward + 'x':>26} {train + 'x':>30}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--families-only", action="store_true")
    parser.add_argument("--block-only", action="store_true")
    parser.add_argument(
        "--heap",
        choices=sorted(HEAPS),
        help="time the MLP block alone, in this process, with glibc in this state (by "
        "default, each state in a process of its own): "
        + "; ".join(f"{k}: {v}" for k, v in HEAPS.items()),
    )
    parser.add_argument("--keep-heap", action="store_true", help="the same as --heap warm")
    args = parser.parse_args()
    if args.keep_heap:
        args.heap = "warm"
    if args.heap:
        set_heap(args.heap)
    if args.families_only or not args.block_only and args.heap is None:  # (their big
        # arrays would warm the heap of a process that then times the block in one state)
        families(max(args.repeat // 8, 5))
    if args.families_only:
        return
    if args.heap is None:
        both_heaps(args)
        return
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, args.width)).astype(np.float32)
    minitorch.manual_seed(0)
    eager = block(minitorch, args.width)
    x = minitorch.tensor(x_np)
    traced = jit.trace(eager, x)
    optimized = jit.optimize(traced)
    counts = traced.graph.op_counts(), optimized.graph.op_counts()
    print(
        f"graph nodes: traced {len(traced.graph.nodes)}, optimized "
        f"{len(optimized.graph.nodes)} ({counts[1].get('fused', 0)} fused)"
    )
    diff = np.abs(optimized(x).detach().numpy() - eager(x).detach().numpy()).max()
    print(f"max |optimized - eager| = {diff:.2e}")

    def forward(model, inp, no_grad):
        def run():
            with no_grad():
                model(inp)

        return run

    fns = {
        "minitorch eager": forward(eager, x, minitorch.no_grad),
        "traced (interpreter)": forward(traced, x, minitorch.no_grad),
        "optimized (fused)": forward(optimized, x, minitorch.no_grad),
    }
    if torch is not None:
        torch.manual_seed(0)
        tblock = block(torch, args.width)
        fns["PyTorch eager"] = forward(tblock, torch.tensor(x_np), torch.no_grad)
    best = best_times(fns, args.repeat)
    print(f"\nforward, batch {args.batch}, width {args.width} (best of {args.repeat}):")
    for name, t in best.items():
        print(f"  {name:22} {t * 1e3:7.3f} ms")
    speedup = best["minitorch eager"] / best["optimized (fused)"]
    print(f"  eager / optimized = {speedup:.2f}x  (target >= 1.5x)")
    if torch is not None:
        print(f"  optimized / PyTorch = {best['optimized (fused)'] / best['PyTorch eager']:.2f}x")

    xg = minitorch.tensor(x_np, requires_grad=True)

    def train(model):
        def run():
            model(xg).sum().backward()

        return run

    best = best_times({"eager": train(eager), "optimized": train(optimized)}, args.repeat // 2)
    trains = best["eager"] / best["optimized"]
    print(
        f"\nforward + backward: eager {best['eager'] * 1e3:.3f} ms, optimized "
        f"{best['optimized'] * 1e3:.3f} ms ({trains:.2f}x; "
        "fused nodes run generated backward code in training)"
    )
    print(f"RATIOS {speedup:.2f} {trains:.2f}")


if __name__ == "__main__":
    main()
