"""Eager vs optimized graph on an elementwise-heavy block (LayerNorm -> Linear -> GELU ->
Linear, residual): what fusion buys.

Run: ``.venv/bin/python benchmarks/bench_jit.py [--repeat N]``. All contenders run in this
process on the same data, timed in turns (``timing.best_times``): minitorch eager, the
traced graph run by the interpreter (no passes), the optimized graph (folding, CSE, DCE,
elementwise fusion), and PyTorch eager when it is installed. Forward passes without
grad (inference), then one forward + backward.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--families-only", action="store_true")
    parser.add_argument(
        "--keep-heap",
        action="store_true",
        help="glibc keeps freed memory (no mmap, no trim): eager's fresh arrays then cost "
        "no page faults, the allocator state most favourable to eager",
    )
    args = parser.parse_args()
    if args.keep_heap:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: its largest value
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD: never give memory back
    families(max(args.repeat // 8, 5))
    if args.families_only:
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
    print(
        f"\nforward + backward: eager {best['eager'] * 1e3:.3f} ms, optimized "
        f"{best['optimized'] * 1e3:.3f} ms ({best['eager'] / best['optimized']:.2f}x; "
        "fused nodes run generated backward code in training)"
    )


if __name__ == "__main__":
    main()
