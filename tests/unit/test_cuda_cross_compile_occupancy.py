"""The occupancy calculation: hand-worked cases from the SM limits, and NVIDIA's own
calculator (``cuda_occupancy.h``, from the nvidia-cuda-runtime-cu12 wheel, built with the
system's C++ compiler) on a grid of kernels, where both are there."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from minitorch.cuda.occupancy import LIMITS, occupancy


@pytest.mark.parametrize(
    "registers, shared, threads, arch, fraction, limited_by",
    [
        # 32 registers x 32 lanes = 1024 per warp: 64 warps fit, all an SM can hold
        (32, 0, 256, "sm_90", 1.0, ("warps", "registers")),
        # 64 per thread: 2048 per warp, 8 warps in each of the 4 quarters of 64K: 32 warps
        (64, 0, 256, "sm_90", 0.5, ("registers",)),
        # 40 -> 1280 per warp; 16384 // 1280 = 12 warps per quarter, 48 in all: 6 blocks of 8
        (40, 8192, 256, "sm_90", 0.75, ("registers",)),
        # 48 KiB + the 1 KiB the driver reserves per block: 228 // 49 = 4 blocks (32 warps)
        (16, 48 * 1024, 256, "sm_90", 0.5, ("shared memory",)),
        (16, 48 * 1024, 256, "sm_80", 3 * 8 / 64, ("shared memory",)),  # 164 // 49 = 3
        # one warp per block: at most 32 blocks, half of the 64 warps
        (16, 0, 32, "sm_90", 0.5, ("blocks",)),
        # 255 registers x 1024 threads do not fit in 64K registers at all
        (255, 0, 1024, "sm_90", 0.0, ("registers",)),
    ],
)
def test_hand_worked_cases(registers, shared, threads, arch, fraction, limited_by):
    occ = occupancy(registers, shared, threads, arch)
    assert occ.fraction == pytest.approx(fraction) and occ.limited_by == limited_by
    assert occ.max_warps == 64 and occ.warps_per_sm == occ.blocks_per_sm * -(-threads // 32)


def test_limits_are_the_programming_guides():
    # CUDA C++ Programming Guide, technical specifications for compute capability 8.0 and 9.0
    h100, a100 = LIMITS["sm_90"], LIMITS["sm_80"]
    assert (h100.shared_bytes, h100.max_shared_per_block) == (228 * 1024, 227 * 1024)
    assert (a100.shared_bytes, a100.max_shared_per_block) == (164 * 1024, 163 * 1024)
    for sm in (h100, a100):
        assert (sm.max_threads, sm.max_warps, sm.max_blocks, sm.registers) == (2048, 64, 32, 65536)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match=r"no SM limits for 'sm_75'; known: sm_80, sm_90"):
        occupancy(32, 0, 256, "sm_75")
    with pytest.raises(ValueError, match=r"a block has 1 to 1024 threads, got 2048"):
        occupancy(32, 0, 2048)


CALCULATOR = r"""
#include <cstdio>
#include "cuda_occupancy.h"
int main() {
  int major, minor, smem_sm, smem_optin, regs, smem, threads, barriers;
  while (scanf("%d %d %d %d %d %d %d %d", &major, &minor, &smem_sm, &smem_optin, &regs, &smem,
               &threads, &barriers) == 8) {
    cudaOccDeviceProp p;
    p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = 2048; p.regsPerBlock = 65536; p.regsPerMultiprocessor = 65536;
    p.warpSize = 32; p.sharedMemPerBlock = 49152; p.sharedMemPerMultiprocessor = smem_sm;
    p.numSms = 132; p.sharedMemPerBlockOptin = smem_optin; p.reservedSharedMemPerBlock = 1024;
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = 1024; a.numRegs = regs; a.sharedSizeBytes = smem;
    a.partitionedGCConfig = PARTITIONED_GC_OFF; a.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
    a.maxDynamicSharedSizeBytes = 0; a.numBlockBarriers = barriers;
    cudaOccDeviceState s;
    cudaOccResult r;
    int err = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, 0);
    printf("%d\n", err ? -1 : r.activeBlocksPerMultiprocessor);
  }
}
"""


def _occupancy_header() -> Path | None:
    spec = importlib.util.find_spec("nvidia")
    for base in spec.submodule_search_locations if spec else ():
        header = Path(base) / "cuda_runtime" / "include" / "cuda_occupancy.h"
        if header.exists():
            return header
    return None


def test_agrees_with_nvidias_occupancy_calculator(tmp_path):
    # catches: a rounding (per-warp registers, 4 partitions, 128-byte shared units, the
    # reserved 1 KiB) or a limit that differs from what the CUDA runtime computes
    header, compiler = _occupancy_header(), shutil.which("g++") or shutil.which("c++")
    if header is None or compiler is None:
        pytest.skip(
            "needs cuda_occupancy.h (pip install nvidia-cuda-runtime-cu12) and a C++ compiler"
        )
    binary = tmp_path / "occupancy"
    source = tmp_path / "occupancy.cpp"
    source.write_text(CALCULATOR)
    subprocess.run([compiler, "-O1", f"-I{header.parent}", str(source), "-o", str(binary)],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    cases = [
        (arch, regs, smem, threads, barriers)
        for arch in ("sm_80", "sm_90")
        for regs in (8, 16, 24, 32, 33, 40, 48, 56, 64, 72, 96, 128, 168, 200, 255)
        for smem in (0, 100, 1024, 4096, 8192, 16384, 33000, 49152)
        for threads in (32, 64, 96, 128, 192, 256, 384, 512, 640, 1024)
        for barriers in (0, 1)
    ]
    lines = []
    for arch, regs, smem, threads, barriers in cases:
        sm = LIMITS[arch]
        major, minor = arch[3], arch[4]
        lines.append(f"{major} {minor} {sm.shared_bytes} {sm.max_shared_per_block} {regs} {smem} "
                     f"{threads} {barriers}")  # fmt: skip
    run = subprocess.run([str(binary)], input="\n".join(lines), capture_output=True, text=True,
                         check=True, timeout=120)  # fmt: skip
    theirs = [int(v) for v in run.stdout.split()]
    assert len(theirs) == len(cases)
    wrong = [
        (case, ours.blocks_per_sm, want)
        for case, want in zip(cases, theirs, strict=True)
        if (ours := occupancy(case[1], case[2], case[3], case[0], case[4])).blocks_per_sm != want
    ]
    assert not wrong, wrong[:10]
