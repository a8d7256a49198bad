"""Every kernel compiles for the H200 (sm_90) on a machine with no GPU: cupyx.jit -> NVRTC ->
ptxas, with the argument types each is launched with; and the figures ptxas gives are the
kernels' own. Skipped, naming the wheels to install, where the toolchain is missing.

All kernels (the package's and chapter 07's lesson and solution notebooks') are compiled
once, together, by the module fixture (one NVRTC run): about 6 s on two cores."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch as mt
from minitorch.cuda import codegen, toolchain
from minitorch.cuda import cross_compile as cc
from minitorch.cuda.kernels import matmul, reduce
from minitorch.cuda.notebook_kernels import notebook_kernels
from minitorch.cuda.package_kernels import package_launches

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [ROOT / "chapters" / "07_gpu.ipynb", ROOT / "solutions" / "07_gpu_solutions.ipynb"]
MISSING = toolchain.missing()
needs_toolchain = pytest.mark.skipif(
    MISSING is not None, reason=f"needs the CUDA compile toolchain: {MISSING}"
)


@pytest.fixture(scope="module")
def compiled() -> dict[str, cc.KernelReport]:
    launches = package_launches()
    for path in NOTEBOOKS:
        launches += [
            cc.Launch(f"{path.name}:{launch.name}", launch.kernel, launch.args, launch.block)
            for launch in notebook_kernels(path).launches
        ]
    return {r.name: r for r in cc.reports(launches, "sm_90")}


def _failures(reports) -> str:
    return "\n".join(f"{r.name} ({r.where}): {r.summary()}" for r in reports if not r.ok)


@needs_toolchain
def test_every_package_kernel_compiles_for_sm_90(compiled):
    # catches: a package kernel (either dtype, any autotune candidate) a GPU cannot compile
    package = [r for name, r in compiled.items() if ".ipynb:" not in name]
    assert len(package) == len(package_launches()) and not _failures(package), _failures(package)
    names = " ".join(r.name for r in package)
    kinds = ["fused exp", "block_sum_warp", "row_sum", "softmax_rows", "matmul_naive"]
    kinds += ["matmul_tiled 32", "matmul_register_blocked 128/8/8", "ch05 fused GELU"]
    for kind in kinds:
        assert kind in names


@needs_toolchain
def test_every_chapter_07_notebook_kernel_compiles_for_sm_90(compiled):
    # catches: a lesson or solution kernel that only the simulator runs
    found = {name.partition(".ipynb:")[2]: r for name, r in compiled.items() if ".ipynb:" in name}
    assert {"whose_element", "shift_right", "shuffle_down", "axpy_kernel", "strided_mul_kernel",
            "block_sum_kernel", "softmax_kernel", "matmul_tiled_kernel"} <= set(found)  # fmt: skip
    assert not _failures(found.values()), _failures(found.values())


@needs_toolchain
def test_the_figures_are_each_kernels_own(compiled):
    # catches: reports mixed up between the kernels compiled together, or parsed wrongly
    for dtype, size in (("float32", 4), ("float64", 8)):
        for tile in (8, 16, 32):  # two tile x tile arrays of shared memory, nothing else
            r = compiled[f"matmul_tiled {tile} ({dtype})"]
            assert r.shared_bytes == 2 * tile * tile * size and r.barriers == 1
        r = compiled[f"matmul_register_blocked 64/4/16 ({dtype})"]
        assert r.shared_bytes == 2 * 64 * 16 * size
        assert compiled[f"block_sum ({dtype})"].shared_bytes == reduce.BLOCK * size
        assert compiled[f"fused exp ({dtype})"].shared_bytes == 0
        assert compiled[f"fused exp ({dtype})"].barriers == 0
    # register blocking keeps r*r accumulators per thread: registers grow with r
    regs = [compiled[f"matmul_register_blocked {c} (float32)"].registers for c in
            ("32/2/8", "64/4/8", "128/8/8")]  # fmt: skip
    assert regs == sorted(regs) and regs[-1] >= 64 > regs[0]
    # float64 accumulators take two registers each (a float32 one would be narrowed)
    assert (compiled["matmul_register_blocked 128/8/8 (float64)"].registers
            > compiled["matmul_register_blocked 128/8/8 (float32)"].registers + 32)  # fmt: skip
    assert all(r.spill_bytes == 0 for r in compiled.values())  # no shipped kernel spills


@needs_toolchain
def test_float64_kernels_keep_float64_variables():
    # catches: `acc = 0.0` in a kernel: on a GPU a variable keeps the type of its first value,
    # a Python float is a float32, and every float64 sum is then rounded to float32
    for launch in package_launches(("float64",)):
        body = cc.cuda_source(launch.kernel, *launch.args).split("{", 1)[1]
        assert not re.search(r"\bfloat\b", body), f"{launch.name} has float32 variables"


@needs_toolchain
def test_occupancy_follows_from_the_reported_figures(compiled):
    r = compiled["matmul_register_blocked 128/8/8 (float32)"]
    threads = r.block[0] * r.block[1]
    assert r.occupancy == cc.occupancy.occupancy(r.registers, r.shared_bytes, threads, "sm_90", 1)
    assert r.occupancy.fraction < 1 and "registers" in r.occupancy.limited_by
    assert compiled["block_sum (float32)"].occupancy.fraction == 1


@needs_toolchain
def test_summary_is_one_line_with_the_figures():
    x, out = np.zeros(1000, np.float32), np.zeros(8, np.float32)
    r = cc.report(reduce.block_sum_kernel(256, "float32"), x, out, x.size, block=256)
    assert r.ok and r.stage is None
    assert re.fullmatch(r"compiles for sm_90: \d+ registers, 1 KiB shared, occupancy 100%",
                        r.summary())  # fmt: skip
    big = cc.report(matmul.register_blocked_kernel(128, 8, 8), x, x, x, 4, 4, 4, block=(16, 16))
    assert re.search(r"occupancy \d+% \(limited by registers\)$", big.summary())


@needs_toolchain
def test_block_sum_warp_compiles_without_a_gpu():
    # catches: cupy's shuffles asking the driver for the warp size while transpiling (no
    # GPU: CUDARuntimeError, re-raised by cupyx.jit as "TypeError: an integer is required")
    kernel = reduce.block_sum_warp_kernel(256, "float32")
    source = cc.cuda_source(kernel, cc.Array("float32"), cc.Array("float32"), 1000)
    assert source.count("__shfl_down_sync(0xffffffff, v, ") == 5
    assert cc.report(kernel, cc.Array("float32"), cc.Array("float32"), 1000).ok


@needs_toolchain
def test_thread_coordinates_are_signed_ints_on_the_gpu_too():
    # catches: cupy's unsigned threadIdx (NumPy 2 refuses `row * k` with an int k, and
    # thread 0's `tid - 1` would wrap to 4294967295 where the simulator gives -1)
    source = cc.cuda_source(matmul.naive_kernel("float32"), *[cc.Array("float32")] * 3, 4, 4, 4)
    assert "int row = " in source and "unsigned" not in source.split("{", 1)[1]


@needs_toolchain
def test_a_compile_error_names_the_line_in_the_learners_terms():
    src = """@rawkernel()
def halves(x, out, n):
    i = grid(1)
    if i < n:
        out[i] = x[i / 2]
"""
    kernel = codegen.compile_kernel(src, "halves")
    r = cc.report(kernel, np.zeros(8, np.float32), np.zeros(8, np.float32), 8)
    assert not r.ok and r.stage == "cupyx.jit" and r.line == 5 and r.code == "out[i] = x[i / 2]"
    assert r.summary() == (
        "does not compile for sm_90: line 5 (out[i] = x[i / 2]): TypeError: Array indices "
        "must be integers."
    )
    src = """@rawkernel()
def total(x, out, n):
    acc = 0
    for j in range(n):
        acc = acc + x[j]
    out[0] = acc
"""
    r = cc.report(codegen.compile_kernel(src, "total"), np.zeros(8), np.zeros(1), 8)
    assert r.stage == "kernel language" and r.line == 5
    assert "`acc` is first an int (`acc = 0`, line 3), then given a float" in r.summary()


@needs_toolchain
def test_the_command_line_reports_every_kernel_and_exits_0(capsys, compiled):
    assert cc.main(["--arch", "sm_90", str(NOTEBOOKS[1])]) == 0
    out = capsys.readouterr().out
    assert "compiled for sm_90 (H100, H200)" in out and "every kernel" in out
    row = next(line for line in out.splitlines() if line.startswith("matmul_tiled_kernel"))
    assert re.search(r"8x8\s+\d+\s+512 B\s+0\s+1\s+\d+%", row), row


@needs_toolchain
def test_the_command_line_names_each_failing_kernel_and_exits_1(tmp_path, capsys):
    cells = [
        "from minitorch.cuda import jit\nimport numpy as np\nN = 8",
        "@jit.rawkernel()\ndef fine(x, out):\n    i = jit.grid(1)\n    out[i] = x[i]",
        "@jit.rawkernel()\ndef float_index(x, out):\n    i = jit.grid(1)\n    out[i] = x[i / 2]",
        "x = np.zeros(N, dtype=np.float32)\nfine[1, 8](x, x)\nfloat_index[1, 8](x, x)",
    ]
    path = tmp_path / "learner.ipynb"
    code = [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells]
    path.write_text(json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert cc.main([str(path)]) == 1
    captured = capsys.readouterr()
    assert re.search(r"^fine\s+8\s+\d+", captured.out, re.M)
    assert "1 kernel(s) do not compile for sm_90" in captured.err
    assert f"- float_index (<{path} cell 2>:2, {path}): does not compile for sm_90: line 4 " in (
        captured.err
    )
    assert "Array indices must be integers" in captured.err


def test_a_missing_toolchain_names_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupyx.jit", None)  # as if cupy were not installed
    assert "pip install cupy-cuda12x nvidia-cuda-nvrtc-cu12" in toolchain.missing()
    with pytest.raises(toolchain.ToolchainMissing, match="pip install cupy-cuda12x"):
        cc.report(reduce.block_sum_kernel(256, "float32"), np.zeros(4), np.zeros(1), 4)
    assert cc.main([]) == 2
    assert "cannot compile kernels: cupy is not installed: pip install" in capsys.readouterr().err


def _fake_release(root: Path, layout: str, nvrtc: str, headers: str, ptxas: str) -> None:
    """NVIDIA's wheel layout under ``root/nvidia``: ``"cu12"`` (a folder a wheel) or ``"cu13"``
    (one folder), each part saying the version it is as the real ones do."""
    if layout == "cu12":
        lib, include, bin_ = (
            root / "nvidia" / d for d in ("cuda_nvrtc/lib", "cuda_runtime/include", "cuda_nvcc/bin")
        )
    else:
        lib, include, bin_ = (root / "nvidia" / "cu13" / d for d in ("lib", "include", "bin"))
    for folder in (lib, include, bin_):
        folder.mkdir(parents=True, exist_ok=True)
    major = nvrtc.split(".")[0]
    (lib / f"libnvrtc.so.{major}").write_bytes(b"")
    (lib / f"libnvrtc-builtins.so.{nvrtc}").write_bytes(b"")
    (include / "cuda_fp16.h").write_text("")
    h_major, h_minor = map(int, headers.split("."))
    (include / "cuda_runtime_api.h").write_text(
        f"#define CUDART_VERSION  {h_major * 1000 + h_minor * 10}\n"
    )
    (bin_ / "ptxas").write_text(
        f"#!/bin/sh\necho 'Cuda compilation tools, release {ptxas}, V{ptxas}.1'\n"
    )
    (bin_ / "ptxas").chmod(0o755)


def test_the_parts_come_from_one_cuda_release_whatever_else_is_installed(tmp_path):
    # catches: NVRTC taken from another release than ptxas (PyPI's torch installs CUDA 13's
    # NVRTC in nvidia/cu13, which writes PTX that CUDA 12.9's ptxas refuses)
    _fake_release(tmp_path, "cu12", nvrtc="12.9", headers="12.9", ptxas="12.9")
    _fake_release(tmp_path, "cu13", nvrtc="13.0", headers="13.0", ptxas="13.0")
    cu12 = toolchain.wheel_release(12, [tmp_path / "nvidia"])
    assert cu12.nvrtc == tmp_path / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
    assert cu12.headers == tmp_path / "nvidia/cuda_runtime/include"
    assert cu12.ptxas == tmp_path / "nvidia/cuda_nvcc/bin/ptxas"
    assert (cu12.nvrtc_version, cu12.headers_version, cu12.ptxas_version) == ((12, 9),) * 3
    assert cu12.problem(12) is None
    cu13 = toolchain.wheel_release(13, [tmp_path / "nvidia"])
    assert cu13.nvrtc == tmp_path / "nvidia/cu13/lib/libnvrtc.so.13"
    assert cu13.problem(13) is None and cu13.problem(12) == "not all CUDA 12"


def test_a_ptxas_older_than_nvrtc_is_refused(tmp_path):
    # catches: pairing by major version alone (NVRTC 12.9's PTX is too new for ptxas 12.4)
    _fake_release(tmp_path, "cu12", nvrtc="12.9", headers="12.9", ptxas="12.4")
    found = toolchain.wheel_release(12, [tmp_path / "nvidia"])
    assert found.problem(12) == "ptxas is older than NVRTC, so it cannot read NVRTC's PTX"
    assert found.describe() == "pip wheels: NVRTC 12.9, headers 12.9, ptxas 12.4"


def test_unmatched_parts_say_what_was_found_and_what_to_install(tmp_path, monkeypatch):
    # catches: a failure deep inside ptxas instead of a message naming versions and the fix
    _fake_release(tmp_path, "cu13", nvrtc="13.0", headers="13.0", ptxas="13.0")
    only_cu13 = [toolchain.wheel_release(12, [tmp_path / "nvidia"])]
    monkeypatch.setattr(toolchain, "_chosen", None)
    monkeypatch.setattr(toolchain, "releases", lambda major: only_cu13)
    monkeypatch.setattr(toolchain, "_nvidia_dirs", lambda: [tmp_path / "nvidia"])
    monkeypatch.setitem(sys.modules, "cupyx.jit", sys.modules.get("cupyx.jit") or object())
    problem = toolchain.missing()
    assert problem.startswith("no CUDA 12 release has NVRTC, the CUDA headers and a ptxas")
    assert "pip wheels: no NVRTC, no headers, no ptxas (incomplete)" in problem
    assert "pip wheels: NVRTC 13.0, headers 13.0, ptxas 13.0 (not all CUDA 12)" in problem
    assert problem.endswith(
        "pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12"
    )


@needs_toolchain
def test_cupy_compiles_with_the_chosen_nvrtc():
    # catches: choosing the parts but letting cupy load whichever NVRTC it finds first
    from cupy.cuda import compiler

    chosen = toolchain.release()
    assert chosen.problem(toolchain.cupy_cuda_major()) is None
    assert tuple(compiler._get_nvrtc_version()) == chosen.nvrtc_version
    assert str(chosen.headers) in toolchain.include_dirs()


def test_ptxas_reports_are_parsed_per_entry_function():
    log = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN5mtk0_1aEv' for 'sm_90'
ptxas info    : Function properties for _ZN5mtk0_1aEv
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN5mtk1_1bEv' for 'sm_90'
ptxas info    : Function properties for _ZN5mtk1_1bEv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, 360 bytes cmem[0]
"""
    found = toolchain.parse_ptxas(log)
    assert found["_ZN5mtk0_1aEv"] == toolchain.Resources(255, 2048, 1, 8, 4, 12)
    assert found["_ZN5mtk1_1bEv"] == toolchain.Resources(10, 0, 0, 0, 0, 0)
    assert found["_ZN5mtk0_1aEv"].spill_bytes == 16


def test_bad_architecture_and_block_are_refused():
    with pytest.raises(ValueError, match="must look like 'sm_90', got 'hopper'"):
        toolchain.arch_number("hopper")
    with pytest.raises(TypeError, match=r"block must be an int or a tuple of 1 to 3 ints"):
        cc._block((16, 16, 1, 1))


def test_with_cupy_installed_and_no_gpu_gpu_tests_skip_with_a_reason():
    # catches: installing the toolchain wheels turning a laptop into a "GPU" machine
    cupy = pytest.importorskip("cupy")
    if mt.cuda.is_available():
        pytest.skip("this machine has a GPU: the gpu tests run")
    assert mt.cuda.device_count() == 0 and not cupy.cuda.is_available()
    with pytest.raises(RuntimeError, match=r"cuda:0 is not available: minitorch uses cupy"):
        mt.zeros(2, device="cuda")
    import warnings

    import minitorch.distributed as dist

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cupy warns when it finds no libnccl
        from cupy.cuda import nccl
    assert dist.is_nccl_available() == bool(getattr(nccl, "available", True))
    files = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("test_*.py")
        if "mark.gpu" in p.read_text() and p.name != Path(__file__).name
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-m",
            "gpu",
            "-p",
            "no:cacheprovider",
            *files,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = run.stdout.strip().splitlines()[-1]
    assert run.returncode in (0, 5) and "skipped" in summary, run.stdout[-2000:]
    assert not re.search(r"\d+ (passed|failed|error)", summary), summary
    reasons = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert reasons and all("GPU" in line for line in reasons), reasons
