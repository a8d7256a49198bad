"""Occupancy: how many warps of a kernel an SM keeps resident at once, out of its maximum.

An SM runs as many blocks at once as all of its limits allow: threads (warps), blocks,
registers and shared memory. Each block takes ``ceil(threads / 32)`` warps; each warp takes
``registers x 32`` registers, rounded up to the allocation unit (256), from one of the SM's
four register-file partitions; each block takes its shared memory plus 1 KiB the driver
reserves, rounded up to 128 bytes. Occupancy is the resident warps over the SM's maximum.
More resident warps let the SM hide memory latency: while one warp waits for a load,
another computes. The calculation is the CUDA runtime's (``cuda_occupancy.h``, which
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` uses), for the default configuration:
the largest shared-memory carveout, no partitioned global caching.

The limits per SM, by compute capability, are from the *CUDA C++ Programming Guide*,
"Compute Capabilities", table "Technical Specifications per Compute Capability" (8.0:
A100; 9.0: H100/H200), and its sections "Compute Capability 8.x" / "9.0" ("Shared Memory":
the driver reserves 1 KB per block); the allocation granularities (256 registers per warp,
128 bytes of shared memory, 4 register partitions) are ``cuda_occupancy.h``'s, CUDA 12.9.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SMLimits:
    """One streaming multiprocessor's limits (per SM unless it says per block/thread)."""

    arch: str
    gpus: str
    max_threads: int
    max_warps: int
    max_blocks: int
    registers: int
    max_registers_per_block: int
    max_registers_per_thread: int
    shared_bytes: int  # the largest carveout
    max_shared_per_block: int  # with opt-in (dynamic shared memory); static is 48 KiB
    reserved_shared_per_block: int
    max_threads_per_block: int = 1024
    warp_size: int = 32
    register_unit: int = 256  # registers are allocated per warp in units of 256
    register_partitions: int = 4
    shared_unit: int = 128


KIB = 1024

#: The SMs this package reports on (CUDA C++ Programming Guide, compute capabilities 8.0, 9.0).
LIMITS = {
    "sm_80": SMLimits(
        "sm_80", "A100", max_threads=2048, max_warps=64, max_blocks=32, registers=64 * KIB,
        max_registers_per_block=64 * KIB, max_registers_per_thread=255,
        shared_bytes=164 * KIB, max_shared_per_block=163 * KIB, reserved_shared_per_block=KIB,
    ),
    "sm_90": SMLimits(
        "sm_90", "H100, H200", max_threads=2048, max_warps=64, max_blocks=32,
        registers=64 * KIB, max_registers_per_block=64 * KIB, max_registers_per_thread=255,
        shared_bytes=228 * KIB, max_shared_per_block=227 * KIB, reserved_shared_per_block=KIB,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps per SM for one kernel at one block size, and what limits them."""

    arch: str
    threads_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    max_warps: int
    limited_by: tuple[str, ...]  # "warps", "blocks", "registers", "shared memory"
    limits: dict[str, int]  # blocks per SM each resource allows

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps

    def __str__(self) -> str:
        return f"{self.fraction:.0%}"


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(
    registers: int,
    shared_bytes: int,
    threads_per_block: int,
    arch: str = "sm_90",
    barriers: int = 0,
) -> Occupancy:
    """The occupancy of a kernel using ``registers`` per thread, ``shared_bytes`` of shared
    memory and ``barriers`` named barriers per block, launched with blocks of
    ``threads_per_block`` threads, on ``arch``."""
    if arch not in LIMITS:
        raise ValueError(f"occupancy: no SM limits for {arch!r}; known: {', '.join(LIMITS)}")
    sm = LIMITS[arch]
    if not 1 <= threads_per_block <= sm.max_threads_per_block:
        raise ValueError(
            f"occupancy: a block has 1 to {sm.max_threads_per_block} threads, "
            f"got {threads_per_block}"
        )
    warps = -(-threads_per_block // sm.warp_size)
    limits = {"warps": sm.max_warps // warps, "blocks": sm.max_blocks}
    limits["registers"] = _blocks_by_registers(sm, registers, warps)
    # shared memory: the block's plus the driver's reserve, rounded up to the unit
    per_block = _round_up(shared_bytes + sm.reserved_shared_per_block, sm.shared_unit)
    fits = shared_bytes <= sm.max_shared_per_block
    limits["shared memory"] = sm.shared_bytes // per_block if fits else 0
    if barriers and int(arch_major(arch)) >= 9:  # Hopper: 2 barrier sets per block slot
        limits["barriers"] = 2 * sm.max_blocks // barriers
    blocks = min(limits.values())
    limited_by = tuple(name for name, n in limits.items() if n == blocks)
    return Occupancy(
        arch, threads_per_block, blocks, blocks * warps, sm.max_warps, limited_by, limits
    )


def _blocks_by_registers(sm: SMLimits, registers: int, warps: int) -> int:
    """Blocks per SM the register file holds: registers go to warps in units of 256, and
    each of the 4 partitions of the register file holds whole warps."""
    per_warp = _round_up(registers * sm.warp_size, sm.register_unit)
    if per_warp == 0:
        return sm.max_blocks
    if (
        registers > sm.max_registers_per_thread
        or per_warp * _round_up(warps, sm.register_partitions) > sm.max_registers_per_block
    ):
        return 0
    per_partition = sm.registers // sm.register_partitions // per_warp
    return per_partition * sm.register_partitions // warps


def arch_major(arch: str) -> str:
    """``"9"`` from ``"sm_90"``."""
    return arch.removeprefix("sm_")[:-1]
