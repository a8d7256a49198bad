"""Compile kernels for a real GPU on any machine, and report what each one uses.

    python -m minitorch.cuda.cross_compile [--arch sm_90] [NOTEBOOK ...]

compiles every kernel this package ships (:func:`package_launches`) and every kernel the
notebooks define (:mod:`minitorch.cuda.notebook_kernels`) the way a GPU would: the kernel
language's Python through ``cupyx.jit`` to CUDA C++, NVRTC to PTX, ptxas to ``sm_90`` code,
with the argument types the kernel is launched with. It prints one row per kernel (registers
per thread, shared memory, spills, barriers and the occupancy those give at its block size,
:mod:`minitorch.cuda.occupancy`) and exits 1 naming each kernel that does not compile. No
GPU or driver is needed (:mod:`minitorch.cuda.toolchain` says what to install).

For one kernel, :func:`report` gives the same figures as an object::

    report(kernels.reduce.block_sum_kernel(256, "float32"), x, partial, x.size, block=256)
    # .summary(): 'compiles for sm_90: 16 registers, 1 KiB shared, occupancy 100%'
"""

from __future__ import annotations

import argparse
import linecache
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import jit, occupancy, toolchain
from .launches import Array, Launch
from .occupancy import Occupancy
from .toolchain import CompileError, Resources

DEFAULT_ARCH = "sm_90"


@dataclass(frozen=True)
class KernelReport:
    """What compiling one kernel for one architecture gave: its resources and occupancy, or
    the error, the kernel line it is about, and the ``stage`` that refused it: ``"kernel
    language"`` (what the simulator refuses too), ``"cupyx.jit"``, ``"NVRTC"`` or ``"ptxas"``."""

    name: str
    arch: str
    block: tuple[int, int, int]
    where: str  # file:line of the kernel's definition
    resources: Resources | None = None
    occupancy: Occupancy | None = None
    stage: str | None = None
    error: str | None = None
    line: int | None = None  # the line of the kernel's file the error points at
    code: str | None = None  # that line's text

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def registers(self) -> int | None:
        return None if self.resources is None else self.resources.registers

    @property
    def shared_bytes(self) -> int | None:
        return None if self.resources is None else self.resources.shared_bytes

    @property
    def spill_bytes(self) -> int | None:
        return None if self.resources is None else self.resources.spill_bytes

    @property
    def barriers(self) -> int | None:
        return None if self.resources is None else self.resources.barriers

    def summary(self) -> str:
        """One line: ``compiles for sm_90: 22 registers, 4 KiB shared, occupancy 100%``, or
        ``does not compile for sm_90: line 7 (acc = acc + x[i]): ...``."""
        if self.resources is None or self.occupancy is None:
            named = self.stage == "kernel language"  # its message names the line already
            at = (
                f"line {self.line} ({self.code}): " if self.line and self.code and not named else ""
            )
            return f"does not compile for {self.arch}: {at}{self.error}"
        r, occ = self.resources, self.occupancy
        text = f"compiles for {self.arch}: {r.registers} registers, {_shared(r.shared_bytes)}"
        if r.spill_bytes:
            text += f", {r.spill_bytes} bytes spilled to local memory"
        text += f", occupancy {occ}"
        if occ.fraction < 1:
            text += f" (limited by {' and '.join(occ.limited_by)})"
        return text


def _shared(nbytes: int) -> str:
    if nbytes == 0:
        return "no shared memory"
    if nbytes < 1024:
        return f"{nbytes} bytes shared"
    kib = nbytes / 1024
    return f"{kib:.0f} KiB shared" if kib.is_integer() else f"{kib:.1f} KiB shared"


# -- argument types -------------------------------------------------------------------------


def cupy_type(value: Any, mode: str = "cuda") -> Any:
    """The ``cupyx.jit`` type of a launch argument: an array (numpy, cupy or :class:`Array`)
    or a number (typed as cupy types it: an ``int`` is ``int32``, a ``float`` ``float32``)."""
    from cupyx.jit import _cuda_typerules, _cuda_types

    if isinstance(value, Array):
        return _cuda_types.CArray(np.dtype(value.dtype), value.ndim, True, True)
    if hasattr(value, "dtype") and hasattr(value, "shape") and not np.isscalar(value):
        contiguous = bool(getattr(value, "flags", {"C_CONTIGUOUS": True})["C_CONTIGUOUS"])
        small = int(np.prod(value.shape)) * np.dtype(value.dtype).itemsize < 2**31
        return _cuda_types.CArray(np.dtype(value.dtype), len(value.shape), contiguous, small)
    if isinstance(value, (bool, int, float, np.generic)):
        return _cuda_typerules.get_ctype_from_scalar(mode, value)
    raise TypeError(
        f"compile: a kernel argument is an array or a number, got {type(value).__name__}"
    )


# -- one kernel, and many at once -------------------------------------------------------------


def report(
    kernel: jit.RawKernel, *args: Any, block: Any = 256, arch: str = DEFAULT_ARCH
) -> KernelReport:
    """Compile ``kernel`` for ``arch`` with the types of ``args`` (arrays, :class:`Array` or
    numbers, as the kernel is launched with) and report its resources and its occupancy at
    ``block`` threads per block (an int or a tuple). A kernel that does not compile gives a
    report with ``error``; a missing toolchain raises :class:`toolchain.ToolchainMissing`."""
    name = getattr(kernel, "__name__", "kernel")
    return reports([Launch(name, kernel, tuple(args), _block(block))], arch)[0]


def reports(launches: Sequence[Launch], arch: str = DEFAULT_ARCH) -> list[KernelReport]:
    """:func:`report` for many kernels, compiled together (one NVRTC run for all those that
    transpile; a kernel compiled before in this process is not compiled again)."""
    toolchain.require()
    toolchain.arch_number(arch)
    if arch not in occupancy.LIMITS:
        raise ValueError(
            f"compile: no SM limits for {arch!r} to compute occupancy with; known: "
            f"{', '.join(occupancy.LIMITS)}"
        )
    done: dict[int, KernelReport] = {}
    units: dict[int, tuple[str, tuple[str, ...]]] = {}
    for i, launch in enumerate(launches):
        try:
            units[i] = _transpile(launch)
        except Exception as exc:  # cupyx.jit refuses the Python: say where, as it says it
            done[i] = _transpile_failure(launch, arch, exc)
    for i, outcome in toolchain.compile_many(units, arch).items():
        launch = launches[i]
        if isinstance(outcome, CompileError):
            done[i] = _base(launch, arch, stage=outcome.stage, error=_compiler_message(outcome))
        else:
            threads = launch.block[0] * launch.block[1] * launch.block[2]
            occ = occupancy.occupancy(
                outcome.registers, outcome.shared_bytes, threads, arch, outcome.barriers
            )
            done[i] = _base(launch, arch, resources=outcome, occupancy=occ)
    return [done[i] for i in range(len(launches))]


def _block(block: Any) -> tuple[int, int, int]:
    dims = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"compile: block must be an int or a tuple of 1 to 3 ints, got {block!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def _where(kernel: jit.RawKernel) -> str:
    """``file:line`` of the kernel's definition (the file relative to the working directory
    or the repository when it is inside; generated and notebook kernels keep their name)."""
    code = kernel.func.__code__
    path = Path(code.co_filename)
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if not code.co_filename.startswith("<") and path.is_relative_to(root):
            path = path.relative_to(root)
            break
    return f"{path}:{code.co_firstlineno}"


def _base(launch: Launch, arch: str, **fields: Any) -> KernelReport:
    return KernelReport(launch.name, arch, launch.block, _where(launch.kernel), **fields)


# -- cupyx.jit: Python to CUDA C++ ------------------------------------------------------------

#: CUDA C++ and options per (function, mode, argument types): cupyx.jit's output.
_transpiled: dict[tuple, tuple[str, tuple[str, ...]]] = {}


def cuda_source(kernel: jit.RawKernel, *args: Any) -> str:
    """The CUDA C++ ``cupyx.jit`` writes for ``kernel`` launched with ``args`` (arrays,
    :class:`Array` or numbers): what NVRTC compiles. Raises what cupyx.jit raises."""
    toolchain.require()
    return _transpile(Launch(kernel.__name__, kernel, tuple(args), (1, 1, 1)))[0]


def _transpile(launch: Launch) -> tuple[str, tuple[str, ...]]:
    """The kernel's CUDA C++ (as cupyx.jit writes it for these argument types) and options."""
    from cupyx.jit import _compile, _cuda_types

    from . import gpu

    kernel = launch.kernel
    if kernel.device:
        raise TypeError(f"`{kernel.__name__}` is a device function: compile a kernel that calls it")
    code = kernel.func.__code__
    params = code.co_varnames[: code.co_argcount]
    if len(launch.args) != len(params):
        raise TypeError(
            f"kernel {kernel.__name__}: takes {len(params)} arguments ({', '.join(params)}), "
            f"but the launch gave {len(launch.args)}"
        )
    jit.check_language(kernel.func)  # what the simulator refuses, a GPU cannot run either
    jit.check_types(kernel.func, kernel.__name__, launch.args)
    in_types = tuple(cupy_type(a, kernel.mode) for a in launch.args)
    key = (kernel.func, kernel.mode, in_types)
    if key not in _transpiled:
        twin = gpu.compile_kernel(kernel)
        result = _compile.transpile(
            twin._func, ["__global__"], twin._mode, in_types, _cuda_types.void
        )
        _transpiled[key] = (result.code, tuple(result.options))
    return _transpiled[key]


_MARKED = re.compile(r"^>\s?(.*)$")
_LANGUAGE_LINE = re.compile(r"^kernel `[^`]+`, line (\d+): ")


def _transpile_failure(launch: Launch, arch: str, exc: Exception) -> KernelReport:
    """The error, with the kernel line it is about: the kernel language's says it; cupyx.jit
    appends the kernel's source with the offending lines marked ``>``."""
    func = launch.kernel.func
    if isinstance(exc, jit.KernelLanguageError):
        message = str(exc)
        m = _LANGUAGE_LINE.match(message)
        line = int(m.group(1)) if m else None
        text = linecache.getline(func.__code__.co_filename, line).strip() if line else None
        return _base(launch, arch, stage="kernel language", error=message, line=line, code=text)
    head, _, shown = str(exc).partition("\n\n")
    line = text = None
    for k, source_line in enumerate(shown.splitlines()):
        if m := _MARKED.match(source_line):
            line, text = func.__code__.co_firstlineno + k, m.group(1).strip()
            break
    head = head.strip().strip("'\"")  # (a KeyError's message comes quoted)
    message = f"{type(exc).__name__}: {head}"
    return _base(launch, arch, stage="cupyx.jit", error=message, line=line, code=text)


def _compiler_message(error: CompileError) -> str:
    """The first error NVRTC or ptxas gave, without its file name and mangled names."""
    lines = [line for line in error.log.splitlines() if "error" in line] or error.log.splitlines()
    first = lines[0] if lines else str(error)
    first = re.sub(r"^\S*kernels\.cu\(\d+\): ", "", first)
    first = re.sub(r"_ZN\d+mtk\d+_\d+(\w+?)E\w*", r"\1", first)
    return f"{error.stage}: {first.strip()}"


# -- the command line -----------------------------------------------------------------------


def table_row(report: KernelReport) -> str:
    """One row of the command line's table (its columns: :data:`HEADER`)."""
    b = report.block
    block = "x".join(str(d) for d in b[: 3 if b[2] > 1 else 2 if b[1] > 1 else 1])
    if not report.ok or report.resources is None or report.occupancy is None:
        return f"{report.name[:46]:46} {block:>9}  does not compile ({report.stage})"
    r, occ = report.resources, report.occupancy
    limit = "" if occ.fraction >= 1 else f" ({', '.join(occ.limited_by)})"
    shared = f"{r.shared_bytes} B" if r.shared_bytes < 1024 else _shared(r.shared_bytes)[:-7]
    return (
        f"{report.name[:46]:46} {block:>9} {r.registers:5} {shared:>12} {r.spill_bytes:7} "
        f"{r.barriers:9} {str(occ):>10}{limit}"
    )


HEADER = (
    f"{'kernel':46} {'block':>9} {'regs':>5} {'shared':>12} {'spills':>7} {'barriers':>9} "
    f"{'occupancy':>10}"
)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minitorch.cuda.cross_compile``: 0 when every kernel compiles, 1 when one does
    not (each named, with the error and its line), 2 when the toolchain is missing."""
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.cuda.cross_compile",
        description="Compile every kernel minitorch ships, and every kernel the notebooks "
        "define, for a GPU architecture (no GPU needed); print what each uses.",
    )
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help=".ipynb files")
    parser.add_argument(
        "--arch", default=DEFAULT_ARCH, choices=sorted(occupancy.LIMITS), help="(default sm_90)"
    )
    options = parser.parse_args(argv)
    problem = toolchain.missing()
    if problem is not None:
        print(f"cannot compile kernels: {problem}", file=sys.stderr)
        return 2
    from .notebook_kernels import notebook_kernels
    from .package_kernels import package_launches

    groups = [("minitorch's kernels", package_launches(), set(), [])]
    for path in options.notebooks:
        try:
            found = notebook_kernels(path)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        groups.append((path, found.launches, found.assumed, found.not_written))
    every = [launch for _, launches, _, _ in groups for launch in launches]
    results = iter(reports(every, options.arch))
    sm = occupancy.LIMITS[options.arch]
    print(
        f"compiled for {options.arch} ({sm.gpus}): cupyx.jit -> NVRTC -> ptxas; occupancy at "
        "each kernel's block size (minitorch.cuda.occupancy)"
    )
    failed = []
    for title, launches, assumed, not_written in groups:
        print(f"\n{title}\n{HEADER}")
        for launch in launches:
            report_ = next(results)
            mark = "  (types assumed)" if launch.name in assumed else ""
            print(table_row(report_) + mark)
            if not report_.ok:
                failed.append((title, report_))
        for name in not_written:
            print(f"{name}: not written yet (raise NotImplementedError)")
    if failed:
        print(f"\n{len(failed)} kernel(s) do not compile for {options.arch}:", file=sys.stderr)
        for title, r in failed:
            print(f"- {r.name} ({r.where}, {title}): {r.summary()}", file=sys.stderr)
        return 1
    print(f"\nevery kernel ({len(every)}) compiles for {options.arch}")
    return 0


if __name__ == "__main__":  # run the imported module's main: its classes are the package's
    from minitorch.cuda.cross_compile import main as _main

    sys.exit(_main())
