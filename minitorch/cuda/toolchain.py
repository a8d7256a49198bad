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
        release()
    except ToolchainMissing as exc:
        return str(exc)
    return None


def require() -> None:
    """Raise :class:`ToolchainMissing` naming what to install, unless all is there."""
    problem = missing()
    if problem is not None:
        raise ToolchainMissing(f"compiling a kernel needs the CUDA toolchain: {problem}")


# -- one CUDA release's parts ------------------------------------------------------------------
#
# NVRTC writes PTX of its own release's ISA version, and ptxas refuses PTX newer than itself
# ("Ptx assembly aborted due to errors"); the headers must be the ones that NVRTC's release
# ships. So the three parts are taken from one release, chosen by path: NVRTC 13 installed
# beside (PyPI's torch brings it, in nvidia/cu13) must not be the one cupy happens to load.

Version = tuple[int, int]


@dataclass(frozen=True)
class Release:
    """Where one CUDA release's compile parts are, and the version each says it is."""

    where: str  # "pip wheels" or a toolkit's folder
    nvrtc: Path | None  # libnvrtc.so.<major>
    headers: Path | None  # the folder holding cuda_fp16.h and cuda_runtime_api.h
    ptxas: Path | None
    nvrtc_version: Version | None = None
    headers_version: Version | None = None
    ptxas_version: Version | None = None

    def describe(self) -> str:
        def part(name: str, path: Path | None, version: Version | None) -> str:
            if path is None:
                return f"no {name}"
            return f"{name} {'.'.join(map(str, version)) if version else '(version unknown)'}"

        parts = [
            part("NVRTC", self.nvrtc, self.nvrtc_version),
            part("headers", self.headers, self.headers_version),
            part("ptxas", self.ptxas, self.ptxas_version),
        ]
        return f"{self.where}: {', '.join(parts)}"

    def problem(self, major: int) -> str | None:
        """Why these parts cannot compile together for cupy's CUDA ``major``; None if they can."""
        found = (self.nvrtc_version, self.headers_version, self.ptxas_version)
        if None in found:
            return "incomplete"
        if {v[0] for v in found} != {major}:  # type: ignore[index]
            return f"not all CUDA {major}"
        if self.nvrtc_version > self.ptxas_version:  # type: ignore[operator]
            return "ptxas is older than NVRTC, so it cannot read NVRTC's PTX"
        return None


def cupy_cuda_major() -> int | None:
    """The CUDA major version the installed cupy wheel is built for (``cupy-cuda12x``: 12)."""
    from importlib import metadata

    for dist in metadata.distributions():
        if m := re.fullmatch(r"cupy[-_]cuda(\d+)x", (dist.metadata["Name"] or "").lower()):
            return int(m.group(1))
    return None


def wheel_release(major: int, site_dirs: list[Path] | None = None) -> Release:
    """The parts NVIDIA's pip wheels for CUDA ``major`` installed: CUDA 12's one wheel a part
    (``nvidia/cuda_nvrtc``, ``nvidia/cuda_runtime``, ``nvidia/cuda_nvcc``), CUDA 13's in one
    folder (``nvidia/cu13``)."""
    if site_dirs is None:
        site_dirs = _nvidia_dirs()
    if major <= 12:
        lib, include, bin_ = "cuda_nvrtc/lib", "cuda_runtime/include", "cuda_nvcc/bin"
    else:
        lib, include, bin_ = (f"cu{major}/{sub}" for sub in ("lib", "include", "bin"))
    return _release(
        "pip wheels",
        _first(d / lib / f"libnvrtc.so.{major}" for d in site_dirs),
        _first(d / include for d in site_dirs if (d / include / "cuda_fp16.h").exists()),
        _first(d / bin_ / "ptxas" for d in site_dirs),
    )


def toolkit_release(root: Path, major: int) -> Release:
    """The parts of a CUDA toolkit installed at ``root`` (``/usr/local/cuda``, ``$CUDA_PATH``)."""
    libs = [
        root / sub / f"libnvrtc.so.{major}" for sub in ("lib64", "lib", "targets/x86_64-linux/lib")
    ]
    include = root / "include"
    return _release(
        str(root),
        _first(libs),
        include if (include / "cuda_fp16.h").exists() else None,
        _first([root / "bin" / "ptxas"]),
    )


def releases(major: int) -> list[Release]:
    """Every place that may hold CUDA ``major``'s parts, the pip wheels first."""
    found = [wheel_release(major)]
    roots = [os.environ.get(name) for name in ("CUDA_PATH", "CUDA_HOME")] + ["/usr/local/cuda"]
    seen: set[Path] = set()
    for root in roots:
        if root and Path(root).is_dir() and Path(root).resolve() not in seen:
            seen.add(Path(root).resolve())
            found.append(toolkit_release(Path(root), major))
    return found


_chosen: Release | None = None


def release() -> Release:
    """The CUDA release this process compiles with, its NVRTC loaded for cupy (first call).

    Raises :class:`ToolchainMissing` saying what was found and what to install when no
    release has all three parts, or when cupy already loaded another NVRTC."""
    global _chosen
    if _chosen is None:
        major = cupy_cuda_major() or 12
        candidates = releases(major)
        usable = [r for r in candidates if r.problem(major) is None]
        if not usable:
            seen = "; ".join(
                f"{r.describe()} ({r.problem(major)})" for r in candidates + _other_releases(major)
            )
            raise ToolchainMissing(
                f"no CUDA {major} release has NVRTC, the CUDA headers and a ptxas as new as NVRTC "
                f"(found {seen}): pip install " + " ".join(WHEELS[1:])
            )
        _load_nvrtc(usable[0])
        _chosen = usable[0]
    return _chosen


def nvrtc_options(options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """cupy's NVRTC options for a ``cupyx.jit`` kernel (its ``options`` first), as on a GPU,
    with the chosen release's CUDA headers in place of the ones cupy looked up."""
    import cupy
    from cupy._core import core

    headers = release().headers
    ours = Path(cupy.__file__).resolve().parent
    kept = [
        o
        for o in core.assemble_cupy_compiler_options(tuple(options))
        if not o.startswith("-I") or Path(o[2:]).resolve().is_relative_to(ours)
    ]
    return (*kept, f"-I{headers}", "-ftz=true", "--device-as-default-execution-space")


def include_dirs() -> list[str]:
    return [o[2:] for o in nvrtc_options() if o.startswith("-I")]


def _load_nvrtc(chosen: Release) -> None:
    """Load the chosen NVRTC before cupy looks for one: cupy (through cuda-pathfinder) then
    takes the library already loaded. If cupy loaded another one earlier, say so."""
    import ctypes

    from cupy.cuda import compiler

    ctypes.CDLL(str(chosen.nvrtc), mode=os.RTLD_GLOBAL)
    loaded = tuple(compiler._get_nvrtc_version())
    if loaded != chosen.nvrtc_version:
        raise ToolchainMissing(
            f"cupy already loaded NVRTC {'.'.join(map(str, loaded))} in this process, not "
            f"{chosen.describe()}; compile in a new process (restart the kernel)"
        )


def _other_releases(major: int) -> list[Release]:
    """Other CUDA majors' wheels that are installed, to name them when nothing matches."""
    other = []
    for m in (12, 13, 14):
        if m != major:
            r = wheel_release(m)
            if r.nvrtc or r.ptxas or r.headers:
                other.append(r)
    return other


def _nvidia_dirs() -> list[Path]:
    """The ``nvidia`` namespace package's folders (one per site-packages that has one)."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _first(paths) -> Path | None:
    return next((Path(p) for p in paths if Path(p).exists()), None)


def _release(where: str, nvrtc: Path | None, headers: Path | None, ptxas: Path | None) -> Release:
    return Release(
        where,
        nvrtc,
        headers,
        ptxas,
        _nvrtc_version(nvrtc) if nvrtc else None,
        _headers_version(headers) if headers else None,
        _ptxas_version(ptxas) if ptxas else None,
    )


def _nvrtc_version(library: Path) -> Version | None:
    """From ``libnvrtc-builtins.so.<major>.<minor>``, which each NVRTC ships beside itself
    (read off the file name, never by loading: a loaded NVRTC is the one cupy takes)."""
    for sibling in library.resolve().parent.glob("libnvrtc-builtins.so.*"):
        if m := re.fullmatch(r"libnvrtc-builtins\.so\.(\d+)\.(\d+)", sibling.name):
            return int(m.group(1)), int(m.group(2))
    return None


def _headers_version(folder: Path) -> Version | None:
    """From ``CUDART_VERSION`` (``12090``: 12.9) in the headers' ``cuda_runtime_api.h``."""
    try:
        text = (folder / "cuda_runtime_api.h").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", text)
    return (int(m.group(1)) // 1000, int(m.group(1)) % 1000 // 10) if m else None


def _ptxas_version(tool: Path) -> Version | None:
    """From ``ptxas --version`` (``Cuda compilation tools, release 12.9, ...``)."""
    try:
        said = subprocess.run(
            [str(tool), "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release (\d+)\.(\d+)", said)
    return (int(m.group(1)), int(m.group(2))) if m else None


def cupy_header() -> str:
    """The ``#include`` lines cupy puts before every kernel it compiles."""
    from cupy._core import core

    return "".join(f"#include <{h}>\n" for h in core._cupy_header_list)


def to_ptx(source: str, arch: str, options: tuple[str, ...] = (), name: str = "kernels.cu") -> str:
    """NVRTC: CUDA C++ (cupy's headers are added) to PTX for ``arch``'s virtual architecture."""
    from cupy.cuda import compiler

    flags = nvrtc_options(options) + (f"-arch=compute_{arch_number(arch)}",)  # loads NVRTC
    program = compiler._NVRTCProgram(cupy_header() + source, name, method="ptx")
    try:
        ptx, _ = program.compile(flags)
    except compiler.CompileException as exc:
        raise CompileError("NVRTC", str(exc)) from None
    return ptx.decode() if isinstance(ptx, bytes) else ptx


def assemble(ptx: str, arch: str) -> dict[str, Resources]:
    """ptxas: PTX to ``arch``'s binary; each entry function's (mangled name's) resources."""
    tool = release().ptxas
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
