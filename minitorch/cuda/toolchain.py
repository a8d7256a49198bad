"""NVRTC and ptxas on any machine: CUDA C++ to PTX to an ``sm_XX`` binary, with no GPU.

On a GPU, cupy compiles a ``cupyx.jit`` kernel with NVRTC (the CUDA runtime compiler) and
loads it. Neither step needs a GPU to *compile*: NVRTC turns CUDA C++ into PTX for a
virtual architecture (``compute_90``), and ``ptxas`` assembles the PTX for a real one
(``sm_90``: H100/H200) and, asked with ``-v``, says what each kernel uses: registers per
thread, shared memory, spills to local memory, barriers. All three come from PyPI::

    pip install cupy-cuda12x nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12

(``pip install -e ".[cuda]"`` installs them with minitorch). The CUDA C++ gets cupy's own
headers and options, as on a GPU, so the figures are those of the kernel a GPU would run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The toolchain's wheels: cupyx.jit, NVRTC, ptxas (in the nvcc wheel), the CUDA headers.
WHEELS = (
    "cupy-cuda12x",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cuda-runtime-cu12",
)
INSTALL = "pip install " + " ".join(WHEELS)


class ToolchainMissing(RuntimeError):
    """Part of the compile toolchain is not installed (the message says what to install)."""


class CompileError(RuntimeError):
    """NVRTC or ptxas refused the code: ``stage`` names which, ``log`` is what it said."""

    def __init__(self, stage: str, log: str) -> None:
        super().__init__(f"{stage}: {log.strip()}")
        self.stage, self.log = stage, log.strip()


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for one kernel on one architecture."""

    registers: int  # per thread
    shared_bytes: int  # static shared memory per block
    barriers: int  # named barriers (syncthreads() uses barrier 0)
    stack_bytes: int
    spill_stores: int  # bytes stored to local memory because registers ran out
    spill_loads: int

    @property
    def spill_bytes(self) -> int:
        return self.spill_stores + self.spill_loads


def missing() -> str | None:
    """What of the toolchain is not installed, with the pip command; None when all is there."""
    try:
        import cupyx.jit  # noqa: F401
    except ImportError:
        return f"cupy is not installed: {INSTALL}"
    try:
        from cupy.cuda import compiler

        compiler._get_nvrtc_version()
    except Exception as exc:  # cupy raises its own errors when libnvrtc is absent
        why = " ".join(str(exc).split())
        return f"NVRTC (libnvrtc) is not found ({why}): pip install nvidia-cuda-nvrtc-cu12"
    if not any((Path(d) / "cuda_fp16.h").exists() for d in include_dirs()):
        return "the CUDA headers (cuda_fp16.h) are not found: pip install nvidia-cuda-runtime-cu12"
    if ptxas_path() is None:
        return "ptxas is not found: pip install nvidia-cuda-nvcc-cu12"
    return None


def require() -> None:
    """Raise :class:`ToolchainMissing` naming what to install, unless all is there."""
    problem = missing()
    if problem is not None:
        raise ToolchainMissing(f"compiling a kernel needs the CUDA toolchain: {problem}")


def ptxas_path() -> str | None:
    """ptxas: from the ``nvidia-cuda-nvcc-cu12`` wheel, else a CUDA toolkit's."""
    try:
        import nvidia.cuda_nvcc as nvcc

        for base in nvcc.__path__:
            candidate = Path(base) / "bin" / "ptxas"
            if candidate.exists():
                return str(candidate)
    except ImportError:
        pass
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "ptxas").exists():
            return str(Path(root) / "bin" / "ptxas")
    return shutil.which("ptxas")


def nvrtc_options(options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """cupy's NVRTC options for a ``cupyx.jit`` kernel (its ``options`` first), as on a GPU."""
    from cupy._core import core

    return core.assemble_cupy_compiler_options(tuple(options)) + (
        "-ftz=true",
        "--device-as-default-execution-space",
    )


def include_dirs() -> list[str]:
    return [o[2:] for o in nvrtc_options() if o.startswith("-I")]


def cupy_header() -> str:
    """The ``#include`` lines cupy puts before every kernel it compiles."""
    from cupy._core import core

    return "".join(f"#include <{h}>\n" for h in core._cupy_header_list)


def to_ptx(source: str, arch: str, options: tuple[str, ...] = (), name: str = "kernels.cu") -> str:
    """NVRTC: CUDA C++ (cupy's headers are added) to PTX for ``arch``'s virtual architecture."""
    from cupy.cuda import compiler

    program = compiler._NVRTCProgram(cupy_header() + source, name, method="ptx")
    flags = nvrtc_options(options) + (f"-arch=compute_{arch_number(arch)}",)
    try:
        ptx, _ = program.compile(flags)
    except compiler.CompileException as exc:
        raise CompileError("NVRTC", str(exc)) from None
    return ptx.decode() if isinstance(ptx, bytes) else ptx


def assemble(ptx: str, arch: str) -> dict[str, Resources]:
    """ptxas: PTX to ``arch``'s binary; each entry function's (mangled name's) resources."""
    tool = ptxas_path()
    if tool is None:
        raise ToolchainMissing("ptxas is not found: pip install nvidia-cuda-nvcc-cu12")
    with tempfile.TemporaryDirectory(prefix="minitorch-ptxas-") as tmp:
        path = Path(tmp) / "kernels.ptx"
        path.write_text(ptx)
        done = subprocess.run(
            [tool, f"-arch={arch}", "-v", str(path), "-o", str(Path(tmp) / "kernels.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise CompileError("ptxas", done.stderr or done.stdout)
    return parse_ptxas(done.stdout + done.stderr)


# -- many kernels at once ----------------------------------------------------------------------

#: (arch, options, CUDA C++) -> what ptxas reported, or the compile error.
_compiled: dict[tuple[str, tuple[str, ...], str], Resources | CompileError] = {}

_NAMESPACE = re.compile(r"mtk(\d+)_")


def compile_many(
    units: dict[int, tuple[str, tuple[str, ...]]], arch: str
) -> dict[int, Resources | CompileError]:
    """Each unit's (``key -> (CUDA C++ of one kernel, its NVRTC options)``) resources, or its
    compile error. The units not compiled before in this process are compiled as one
    translation unit per set of options, each kernel in a namespace of its own (one NVRTC
    and one ptxas run); when that fails, each alone, to say which failed."""
    todo: dict[tuple[str, ...], list[str]] = {}
    for code, options in units.values():
        if (arch, options, code) not in _compiled and code not in todo.get(options, []):
            todo.setdefault(options, []).append(code)
    for options, codes in todo.items():
        try:
            together = _compile_together(codes, arch, options)
        except CompileError:
            together = {}
        for k, code in enumerate(codes):
            try:
                found = (
                    together[k] if k in together else _compile_together([code], arch, options)[0]
                )
            except CompileError as exc:
                found = exc
            _compiled[(arch, options, code)] = found
    return {i: _compiled[(arch, options, code)] for i, (code, options) in units.items()}


def _compile_together(
    codes: list[str], arch: str, options: tuple[str, ...]
) -> dict[int, Resources]:
    """Kernel ``k`` of ``codes`` -> its resources, from one NVRTC and one ptxas run."""
    parts = []
    for k, code in enumerate(codes):
        body = "\n".join(line for line in code.splitlines() if not line.startswith("#include"))
        parts.append(f"namespace mtk{k}_ {{\n{body}\n}}  // namespace mtk{k}_\n")
    source = '#include "cupy/float16.cuh"\n' + "\n".join(parts)
    found = {}
    for name, resources in assemble(to_ptx(source, arch, options), arch).items():
        if m := _NAMESPACE.search(name):  # (C++ mangles the namespace into the name)
            found[int(m.group(1))] = resources
    missing = set(range(len(codes))) - set(found)
    if missing:
        raise CompileError("ptxas", f"no report for kernel(s) {sorted(missing)}")
    return found


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(log: str) -> dict[str, Resources]:
    """Each entry function's resources from ``ptxas -v``'s report."""
    found: dict[str, Resources] = {}
    entries: set[str] = set()
    current, frame = None, (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entries.add(m.group(1))
            current, frame = m.group(1), (0, 0, 0)
        elif m := _PROPERTIES.search(line):
            current = m.group(1)
        elif m := _FRAME.search(line):
            frame = tuple(int(g) for g in m.groups())  # type: ignore[assignment]
        elif (m := _USED.search(line)) and current in entries:
            barriers = _BARRIERS.search(line)
            smem = _SMEM.search(line)
            found[current] = Resources(
                registers=int(m.group(1)),
                shared_bytes=int(smem.group(1)) if smem else 0,
                barriers=int(barriers.group(1)) if barriers else 0,
                stack_bytes=frame[0],
                spill_stores=frame[1],
                spill_loads=frame[2],
            )
    return found


def arch_number(arch: str) -> str:
    """``"90"`` from ``"sm_90"`` (refusing anything else)."""
    m = re.fullmatch(r"sm_(\d{2,3}[a-z]?)", arch)
    if m is None:
        raise ValueError(f"compile: the architecture must look like 'sm_90', got {arch!r}")
    return m.group(1)
