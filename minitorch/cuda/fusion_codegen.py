"""Fusion codegen: a chain of elementwise ops becomes ONE kernel.

Unfused, ``exp(x * y) + 1`` runs three kernels, and each writes its whole result to
global memory for the next to read back. Fused, one kernel reads ``x`` and ``y`` once,
keeps the intermediates in registers, and writes the result once.

The fused node is a small list of *steps*, each ``(op, *operands)``; an operand is an input
``"x0"``, ``"x1"``, ... the result of an earlier step ``"t0"``, ``"t1"``, ... or a Python
number. The last step is the result::

    steps = [("mul", "x0", "x1"), ("exp", "t0"), ("add", "t1", 1.0)]     # exp(x0 * x1) + 1

(Chapter 05's fusion pass groups elementwise graph nodes; its fused node lowers to these
steps, one per node, in order.) :func:`fused_lines` writes one line of kernel code per step
(``t0 = x0 * x1``); :func:`kernel_source` puts them in a kernel in which thread ``i``
finds its inputs' elements through their strides, broadcasting included (a broadcast dim
has stride 0), so no input is ever copied or expanded.
"""

from __future__ import annotations

import functools
from functools import lru_cache
from typing import Any

import numpy as np

from ..backend import array_module_of
from ..ops.registry import elementwise
from ..ops.scalar import arity, array_function
from . import codegen


#: One line of kernel code per op, ``{0}``, ``{1}`` its operands: each op's scalar formula
#: (``minitorch.ops.scalar``), which is written in the kernel language already.
def _formulas(names: tuple[str, ...]) -> dict[str, str]:
    ops = elementwise()
    return {name: ops[name].scalar for name in names}


#: The ops the chapter teaches with (exercise 07.6 prints these two tables) ...
UNARY = _formulas(("neg", "exp", "log", "sqrt", "tanh", "relu", "sigmoid"))
BINARY = _formulas(("add", "sub", "mul", "div", "maximum", "minimum"))
#: ... and the rest of the elementwise ops chapter 05's fusion pass fuses.
_BY_ARITY = {
    n: {name: op.scalar for name, op in elementwise().items() if arity(op.scalar) == n}
    for n in (1, 2)
}
#: The same formulas on numpy arrays: the reference the kernels are tested against.
NUMPY = {
    name: functools.partial(array_function(op.scalar), np) for name, op in elementwise().items()
}


def operand(value: Any) -> str:
    """Kernel code for an operand: a name stays a name, a number becomes a float literal."""
    if isinstance(value, str):
        return value
    return repr(float(value))


def fused_lines(steps: list) -> list[str]:
    """One line of kernel code per step: ``t{k} = <op applied to its operands>``."""
    lines = []
    for k, (op, *args) in enumerate(steps):
        table = _BY_ARITY.get(len(args), {})
        if op not in table:
            raise ValueError(f"fusion: no elementwise op {op!r} with {len(args)} operand(s)")
        lines.append(f"t{k} = " + table[op].format(*(operand(a) for a in args)))
    return lines


def count_inputs(steps: list) -> int:
    """How many inputs (``x0``, ``x1``, ...) the steps read."""
    used = [int(a[1:]) for _, *args in steps for a in args if isinstance(a, str) and a[0] == "x"]
    return max(used) + 1 if used else 0


def output_names(outputs: tuple[int, ...] | None) -> list[str]:
    """The kernel's output arguments: ``out``, or ``out0, out1, ...`` for several."""
    if outputs is None or len(outputs) == 1:
        return ["out"]
    return [f"out{m}" for m in range(len(outputs))]


def kernel_source(
    lines: list[str],
    ninputs: int,
    name: str = "fused_kernel",
    outputs: tuple[int, ...] | None = None,
) -> str:
    """The source of a kernel that computes ``lines`` for every element of the output.

    Arguments: ``out`` (contiguous), the inputs ``in0, in1, ...`` (flat storage), ``shape``
    (the output's), ``strides`` (``ninputs x ndim``: each input's element strides,
    broadcast to the output's shape, 0 where it is broadcast), ``offsets``, ``ndim``, ``n``.
    ``outputs``: which steps' results to store (default: the last one); with several, the
    kernel takes ``out0, out1, ...`` instead of ``out``.
    """
    ins = ", ".join(f"in{j}" for j in range(ninputs))
    stored = (len(lines) - 1,) if outputs is None else outputs
    outs = output_names(outputs)
    body = [
        "@rawkernel()",
        f"def {name}({', '.join(outs)}, {ins}, shape, strides, offsets, ndim, n):",
        "    i = blockIdx.x * blockDim.x + threadIdx.x",
        "    if i < n:",
        "        rest = int64(i)",
    ]
    body += [f"        p{j} = offsets[{j}]" for j in range(ninputs)]
    body += [
        "        for d in range(ndim - 1, -1, -1):  # the last dim varies fastest",
        "            k = rest % shape[d]",
        "            rest = rest // shape[d]",
    ]
    body += [f"            p{j} += k * strides[{j}, d]" for j in range(ninputs)]
    body += [f"        x{j} = in{j}[p{j}]" for j in range(ninputs)]
    body += ["        " + line for line in lines]
    body += [f"        {o}[i] = t{k}" for o, k in zip(outs, stored, strict=True)]
    return "\n".join(body) + "\n"


@lru_cache(maxsize=256)
def _kernel(lines: tuple[str, ...], ninputs: int, outputs: tuple[int, ...] | None) -> Any:
    source = kernel_source(list(lines), ninputs, outputs=outputs)
    return codegen.compile_kernel(source, "fused_kernel")


def compile_lines(lines: list[str], ninputs: int, outputs: tuple[int, ...] | None = None) -> Any:
    """The fused kernel for these lines (compiled once, then cached); ``outputs`` as in
    :func:`kernel_source`."""
    return _kernel(tuple(lines), ninputs, None if outputs is None else tuple(outputs))


def strided_operand(array: Any, out_shape: tuple) -> tuple[Any, list[int], int]:
    """(flat storage, element strides broadcast to ``out_shape``, offset) of an array view."""
    xp = array_module_of(array)
    base = array
    while getattr(base, "base", None) is not None and isinstance(base.base, type(array)):
        base = base.base
    item = array.itemsize
    if base.flags.c_contiguous and base.dtype == array.dtype:
        flat = base.reshape(-1)
        offset = (_address(array) - _address(base)) // item
    else:  # a view of something we cannot read flat: read a contiguous copy
        flat = xp.ascontiguousarray(array).reshape(-1)
        array, offset = flat.reshape(array.shape), 0
    strides = [s // item for s in array.strides]
    lead = len(out_shape) - array.ndim
    dims = zip(strides, array.shape, out_shape[lead:], strict=True)
    full = [0] * lead + [0 if n == 1 and m != 1 else s for s, n, m in dims]
    return flat, full, offset


def _address(array: Any) -> int:
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr


def launch_fused(
    kernel: Any,
    arrays: list,
    out_shape: tuple,
    dtype: Any,
    block: int = 256,
    noutputs: int = 1,
) -> Any:
    """Run a fused kernel over ``arrays`` (broadcast to ``out_shape``); the new output (a
    tuple of ``noutputs`` new outputs for a kernel that stores several)."""
    xp = array_module_of(arrays[0])
    outs = [xp.empty(out_shape, dtype=dtype) for _ in range(noutputs)]
    n = int(outs[0].size)
    ndim = len(out_shape)
    flats, strides, offsets = [], [], []
    for a in arrays:
        flat, st, off = strided_operand(a, out_shape)
        flats.append(flat)
        strides.append(st)
        offsets.append(off)
    shape_arr = xp.asarray(list(out_shape) or [1], dtype=np.int64)
    strides_arr = xp.asarray(strides if ndim else [[0]] * len(arrays), dtype=np.int64)
    offsets_arr = xp.asarray(offsets, dtype=np.int64)
    if n:
        grid = (n + block - 1) // block
        flat_outs = [o.reshape(-1) for o in outs]
        kernel[grid, block](*flat_outs, *flats, shape_arr, strides_arr, offsets_arr, ndim, n)
    return outs[0] if noutputs == 1 else tuple(outs)


def run_steps(steps: list, arrays: list, block: int = 256, caller: str = "") -> Any:
    """Evaluate ``steps`` on ``arrays`` (numpy or cupy) with one fused kernel; ``caller``
    (``"zip_op"``) names the function a learner called in error messages."""
    ninputs = count_inputs(steps)
    if ninputs != len(arrays):
        raise ValueError(f"fusion: the steps read {ninputs} inputs, but {len(arrays)} were given")
    xp = array_module_of(arrays[0])
    arrays = [xp.asarray(a) for a in arrays]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = " and ".join(str(tuple(a.shape)) for a in arrays)
        what = caller or f"fused kernel {'; '.join(str(s) for s in steps)}"
        raise ValueError(
            f"{what}: the input shapes {shapes} do not broadcast to one shape"
        ) from None
    dtype = xp.result_type(*arrays)
    if dtype.kind != "f":
        dtype = np.dtype(np.float32)
    try:
        lines = fused_lines(steps)
    except ValueError as err:
        if not caller:
            raise
        raise ValueError(f"{caller}: {str(err).removeprefix('fusion: ')}") from None
    kernel = compile_lines(lines, ninputs)
    return launch_fused(kernel, arrays, shape, dtype, block)


def reference(steps: list, arrays: list) -> np.ndarray:
    """``steps`` evaluated op by op with numpy (float64): what a fused kernel must give."""
    values: dict[str, Any] = {
        f"x{j}": np.asarray(a, dtype=np.float64) for j, a in enumerate(arrays)
    }
    result: Any = None
    for k, (op, *args) in enumerate(steps):
        result = NUMPY[op](*(values[a] if isinstance(a, str) else float(a) for a in args))
        values[f"t{k}"] = result
    return np.asarray(result)
