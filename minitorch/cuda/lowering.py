"""Chapter 05's fused node as ONE GPU kernel: lower a ``jit.FusedKernel`` to fusion steps.

Chapter 05's fusion pass leaves a ``fused`` node whose target is a ``FusedKernel``: its
``ops`` are ``ElementwiseOp(op, args)`` with args ``("input", i)``, ``("op", j)`` or a
number, and ``outputs`` names the ops whose results leave the kernel. That is already
:mod:`minitorch.cuda.fusion_codegen`'s step list under other names, so lowering is a renaming::

    ElementwiseOp("mul", (("input", 0), ("op", 2)))   ->   ("mul", "x0", "t2")

and the generated kernel reads each input element once, keeps every intermediate in
registers, and writes each output once. :func:`run` launches it (the simulator on numpy
arrays, ``cupyx.jit`` on cupy arrays); :func:`fused_elementwise_kernel` is the backend
kernel through which a fused node on a ``cuda`` tensor (or on the CPU, after
``minitorch.cuda.enable("cpu")``) runs this way.
"""

from __future__ import annotations

from typing import Any

from . import fusion_codegen

_FLOATS = ("float32", "float64")


def operand(arg: Any) -> Any:
    """A fused node's argument as a fusion operand: ``"x<i>"``, ``"t<j>"`` or the number."""
    if isinstance(arg, tuple):
        kind, index = arg
        return f"x{index}" if kind == "input" else f"t{index}"
    return arg


def lower(kernel: Any) -> list[tuple]:
    """The fusion steps of a ``FusedKernel``: one ``(op, *operands)`` per op, in order."""
    return [(op.op, *(operand(a) for a in op.args)) for op in kernel.ops]


def compile_fused(kernel: Any) -> Any:
    """The generated kernel of a ``FusedKernel`` (compiled once per distinct chain)."""
    lines = fusion_codegen.fused_lines(lower(kernel))
    return fusion_codegen.compile_lines(lines, len(kernel.inputs), tuple(kernel.outputs))


def source(kernel: Any) -> str:
    """The Python source of that kernel (what the simulator runs and ``cupyx.jit`` compiles)."""
    lines = fusion_codegen.fused_lines(lower(kernel))
    return fusion_codegen.kernel_source(lines, len(kernel.inputs), outputs=tuple(kernel.outputs))


def run(kernel: Any, arrays: list, block: int = 256) -> tuple:
    """The ``FusedKernel``'s outputs (new arrays, a tuple) from its input arrays, by one
    launch of the generated kernel: simulated for numpy arrays, on the GPU for cupy's."""
    if len(arrays) != len(kernel.inputs):
        raise ValueError(
            f"fused kernel {kernel.name}: takes {len(kernel.inputs)} inputs, got {len(arrays)}"
        )
    outs = fusion_codegen.launch_fused(
        compile_fused(kernel),
        list(arrays),
        tuple(kernel.shape),
        kernel.dtype,
        block,
        noutputs=len(kernel.outputs),
    )
    return outs if isinstance(outs, tuple) else (outs,)


def fused_elementwise_kernel(*arrays: Any, kernel: Any) -> Any:
    """The backend kernel for ``jit.fusion.FusedElementwise``: its outputs computed by one
    generated kernel. Other dtypes (float16) go to the numpy-generated forward."""
    from ..jit.fusion import FusedElementwise

    if kernel.row_local:  # (reductions: each op's own forward, on any backend's arrays)
        outs = kernel.run_by_ops(tuple(arrays))
        return outs[0] if len(outs) == 1 else outs
    if kernel.dtype not in _FLOATS or any(a.dtype.name != kernel.dtype for a in arrays):
        return FusedElementwise.forward(*arrays, kernel=kernel)
    outs = run(kernel, list(arrays))
    return outs[0] if len(outs) == 1 else outs
