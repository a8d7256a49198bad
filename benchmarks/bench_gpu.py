"""Chapter 07's kernels: on a GPU, speed against cuBLAS/cupy and the memory bandwidth; on a
CPU, the simulator's correctness (a GPU is needed for any speed figure).

    .venv/bin/python benchmarks/bench_gpu.py            # GPU when cupy finds one
    .venv/bin/python benchmarks/bench_gpu.py --quick    # smaller sizes (1024-2048)

On a GPU, one prepared run prints:
- fp32 matmul, 1024-8192: tiled (16, 32) and register-blocked kernels vs ``cupy.matmul``
  (cuBLAS), as TFLOP/s and as a fraction of cuBLAS (target: best >= 50%);
- a fused elementwise chain vs the same ops unfused in cupy, and as a fraction of the
  device's copy bandwidth (target >= 70%);
- softmax along the last dim vs cupy's (``exp(x - max) / sum``);
- each float32 kernel's registers, shared memory and occupancy as compiled offline
  (``minitorch.cuda.cross_compile``: cupyx.jit -> NVRTC -> ptxas, no GPU involved) next to what the
  driver reports for the kernel cupy loaded (``cuFuncGetAttribute``,
  ``cuOccupancyMaxActiveBlocksPerMultiprocessor``): the offline figures' check.
Times are CUDA-event times, best of a few runs after a warm-up (compilation excluded).
Without a GPU the compile figures are printed alone (with the toolchain installed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch as mt  # noqa: E402
from minitorch.cuda import autotune, fusion_codegen, kernels, simulator  # noqa: E402

STEPS = [("mul", "x0", "x1"), ("sigmoid", "t0"), ("mul", "t1", "x0"), ("add", "t2", 1.0)]


def gpu_ms(fn, *args, repeat: int = 5) -> float:
    """Best CUDA-event time of ``fn(*args)`` in ms, after a warm-up call."""
    return autotune.gpu_time(fn, *args, repeat=repeat)


def bench_matmul(cp, sizes: list[int]) -> None:
    print("\nfp32 matmul (square n x n), TFLOP/s and fraction of cuBLAS")
    variants = {
        "tiled 16": lambda a, b: kernels.matmul_tiled(a, b, tile=16),
        "tiled 32": lambda a, b: kernels.matmul_tiled(a, b, tile=32),
        "regblock 64/4/8": lambda a, b: kernels.matmul_register_blocked(a, b, 64, 4, 8),
        "regblock 64/4/16": lambda a, b: kernels.matmul_register_blocked(a, b, 64, 4, 16),
        "regblock 128/8/8": lambda a, b: kernels.matmul_register_blocked(a, b, 128, 8, 8),
    }
    print(f"{'n':>6} {'cuBLAS':>8} " + " ".join(f"{name:>17}" for name in variants))
    for n in sizes:
        a = cp.random.standard_normal((n, n), dtype=cp.float32)
        b = cp.random.standard_normal((n, n), dtype=cp.float32)
        flops = 2.0 * n**3
        ref = gpu_ms(cp.matmul, a, b)
        cells = []
        for name, fn in variants.items():
            try:
                if n == sizes[0]:  # check once per variant
                    err = float(cp.abs(fn(a, b) - cp.matmul(a, b)).max())
                    assert err < 1e-2 * n**0.5, f"{name}: max error {err}"
                t = gpu_ms(fn, a, b, repeat=3)
                cells.append(f"{flops / t / 1e9:6.1f} ({ref / t:4.0%})")
            except Exception as exc:  # a configuration the device refuses
                cells.append(f"{'failed: ' + type(exc).__name__:>17}")
        print(f"{n:>6} {flops / ref / 1e9:8.1f} " + " ".join(f"{c:>17}" for c in cells))


def bench_fusion(cp, n: int) -> None:
    print(f"\nfused elementwise x * sigmoid(x * y) + 1 on {n} float32 elements")
    x = cp.random.standard_normal(n, dtype=cp.float32)
    y = cp.random.standard_normal(n, dtype=cp.float32)
    kernel = fusion_codegen.compile_lines(fusion_codegen.fused_lines(STEPS), 2)

    def fused():
        return fusion_codegen.launch_fused(kernel, [x, y], (n,), np.float32)

    def unfused():
        return x * (1 / (1 + cp.exp(-(x * y)))) + 1

    err = float(cp.abs(fused() - unfused()).max())
    copy = gpu_ms(lambda: cp.copyto(cp.empty_like(x), x))
    t_fused, t_unfused = gpu_ms(fused), gpu_ms(unfused)
    bandwidth = 2 * 4 * n / copy / 1e6  # GB/s of a device copy (read + write)
    achieved = 3 * 4 * n / t_fused / 1e6  # two inputs read, one output written
    print(f"max |fused - unfused| {err:.2e}")
    print(f"copy bandwidth {bandwidth:7.0f} GB/s; fused kernel {achieved:7.0f} GB/s "
          f"({achieved / bandwidth:.0%} of it)")  # fmt: skip
    print(f"fused {t_fused:.3f} ms, unfused cupy {t_unfused:.3f} ms "
          f"(fused is {t_unfused / t_fused:.2f}x faster)")  # fmt: skip


def bench_softmax(cp, rows: int, cols: int) -> None:
    print(f"\nsoftmax along the last dim of ({rows}, {cols}) float32")
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)

    def cupy_softmax():
        e = cp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    err = float(cp.abs(kernels.softmax_last_dim(x) - cupy_softmax()).max())
    t_ours = gpu_ms(lambda: kernels.softmax_last_dim(x))
    t_cupy = gpu_ms(cupy_softmax)
    print(f"max error {err:.2e}; kernel {t_ours:.3f} ms, cupy {t_cupy:.3f} ms "
          f"(ratio cupy/kernel {t_cupy / t_ours:.2f})")  # fmt: skip


def compile_figures() -> list:
    """The offline compile reports of the package's float32 kernels, printed as a table (an
    empty list, and a note, without the toolchain)."""
    from minitorch.cuda import cross_compile as cc
    from minitorch.cuda import toolchain
    from minitorch.cuda.package_kernels import package_launches

    problem = toolchain.missing()
    if problem is not None:
        print(f"\ncompile figures: skipped ({problem})")
        return []
    launches = package_launches(("float32",))
    reports = cc.reports(launches, "sm_90")
    print("\nfloat32 kernels compiled for sm_90 offline (cupyx.jit -> NVRTC -> ptxas)")
    print(cc.HEADER)
    for report in reports:
        print(cc.table_row(report))
    return list(zip(launches, reports, strict=True))


def _device_args(cp, launch) -> tuple:
    """Real arguments of a launch's types, safe for one block: zeros (strides 0 read element
    0), 65536 elements per 1-d array, 256 x 256 per 2-d one, the sizes package_launches uses."""
    from minitorch.cuda.cross_compile import Array

    args = []
    for a in launch.args:
        if isinstance(a, Array):
            args.append(cp.zeros(65536 if a.ndim == 1 else (256,) * a.ndim, dtype=a.dtype))
        else:
            args.append(a)
    return tuple(args)


def compile_figures_vs_driver(cp) -> None:
    """Each kernel once on the GPU (one block), then the driver's figures for the function
    cupy loaded against the offline report: registers, static shared memory, blocks per SM."""
    from cupy.cuda import driver

    from minitorch.cuda import cross_compile as cc

    rows = compile_figures()
    if not rows:
        return
    print("\noffline vs driver (registers, shared bytes, blocks per SM at the kernel's block)")
    mismatches = 0
    for launch, report in rows:
        if not report.ok:
            continue
        try:
            args = _device_args(cp, launch)
            launch.kernel[(1, 1, 1), launch.block](*args)
            cp.cuda.Device().synchronize()
            twin = launch.kernel._gpu
            types = tuple(cc.cupy_type(a, launch.kernel.mode) for a in args)
            (function, _), *_ = [v for k, v in twin._cache.items() if k[0] == types]
            regs = driver.funcGetAttribute(driver.CU_FUNC_ATTRIBUTE_NUM_REGS, function.ptr)
            shared = driver.funcGetAttribute(
                driver.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function.ptr
            )
            threads = launch.block[0] * launch.block[1] * launch.block[2]
            blocks = driver.occupancyMaxActiveBlocksPerMultiprocessor(function.ptr, threads, 0)
        except Exception as exc:  # report and go on: one kernel must not hide the others
            print(f"  {launch.name:46} failed on the GPU: {type(exc).__name__}: {exc}")
            mismatches += 1
            continue
        ours = (report.registers, report.shared_bytes, report.occupancy.blocks_per_sm)
        same = ours == (regs, shared, blocks)
        mismatches += not same
        print(f"  {launch.name:46} offline {ours}  driver {(regs, shared, blocks)}"
              f"{'' if same else '  <- differs'}")  # fmt: skip
    print(f"  {mismatches} kernel(s) differ")


def simulator_correctness() -> None:
    """No GPU: check every kernel in the simulator on small ragged shapes, and count traffic."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((37, 29)).astype(np.float32)
    b = rng.standard_normal((29, 41)).astype(np.float32)
    want = a.astype(np.float64) @ b
    rows = []
    for name, fn in [
        ("matmul naive", lambda: kernels.matmul_naive(a, b)),
        ("matmul tiled 16", lambda: kernels.matmul_tiled(a, b, 16)),
        ("matmul regblock 32/4/8", lambda: kernels.matmul_register_blocked(a, b, 32, 4, 8)),
    ]:
        with simulator.recording() as launches:
            got = fn()
        reads = sum(s.global_reads for s in launches)
        rows.append((name, bool(np.allclose(got, want, atol=1e-4)), reads))
    x = (rng.standard_normal((13, 300)) * 30).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    softmax_ok = np.allclose(kernels.softmax_last_dim(x), e / e.sum(-1, keepdims=True), atol=1e-6)
    rows.append(("softmax", bool(softmax_ok), None))
    rows.append(("sum", bool(np.isclose(kernels.sum_all(x), x.sum(), rtol=1e-4)), None))
    y = rng.standard_normal(300).astype(np.float32)
    fused = fusion_codegen.run_steps(STEPS, [x, y])
    rows.append(
        (
            "fused chain",
            bool(np.allclose(fused, fusion_codegen.reference(STEPS, [x, y]), atol=1e-5)),
            None,
        )
    )
    print("no GPU: simulator correctness only (speed needs a GPU)")
    for name, ok, reads in rows:
        extra = f"  global reads {reads}" if reads is not None else ""
        print(f"  {name:24} {'ok' if ok else 'WRONG'}{extra}")
    if not all(ok for _, ok, _ in rows):
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    if not mt.cuda.is_available():
        simulator_correctness()
        compile_figures()
        return
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(f"device: {props['name'].decode()}, cupy {cp.__version__}")
    sizes = [1024, 2048] if args.quick else [1024, 2048, 4096, 8192]
    bench_matmul(cp, sizes)
    bench_fusion(cp, 1 << 24 if args.quick else 1 << 26)
    bench_softmax(cp, 4096, 1024)
    bench_softmax(cp, 1024, 8192)
    compile_figures_vs_driver(cp)


if __name__ == "__main__":
    main()
