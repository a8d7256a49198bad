"""Chapter 07's pieces in the framework: the strided multiplication, reduction, softmax and
tiled-matmul kernels behind ``cuda.dispatch`` (on the GPU, or in the simulator with
``enable("cpu")``), and the fused kernel's code lines. (07.1's axpy and 07.7's convolution
have no op in minitorch to run behind.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import array_module_of
from ..cuda import fusion_codegen
from ..cuda.kernels import matmul, reduce, softmax
from .pieces import piece


def _constant(kernel: Any, name: str, exercise: str) -> int:
    """A block size the learner's notebook sets beside its kernel (``BLOCK = 64``)."""
    value = getattr(getattr(kernel, "func", kernel), "__globals__", {}).get(name)
    if not isinstance(value, int) or value < 1:
        raise ValueError(
            f"exercise {exercise}: the notebook's {name} must be a positive int beside the "
            f"kernel, got {value!r}"
        )
    return value


def _float32(*arrays: Any) -> bool:
    return all(a.dtype == np.float32 for a in arrays)


@piece(
    "07.2",
    "strided_mul_kernel",
    site="every single float32 multiplication on the GPU path (any strides, broadcasting)",
)
def _strided_mul(mine: Any, strided_mul_kernel: Any) -> None:
    launch = mine.wrap("07.2", "strided_mul_kernel", lambda g, b, *a: strided_mul_kernel[g, b](*a))
    package = fusion_codegen.run_steps
    block = 256

    def run_steps(steps: list, arrays: list, *args: Any, **kwargs: Any) -> Any:
        if [tuple(s) for s in steps] != [("mul", "x0", "x1")] or args or kwargs.get("block"):
            return package(steps, arrays, *args, **kwargs)  # (not a multiplication: not 07.2's)
        if len(arrays) != 2 or not all(getattr(a, "dtype", None) == np.float32 for a in arrays):
            mine.package_ran("07.2", "a dtype other than float32")
            return package(steps, arrays, *args, **kwargs)
        xp = array_module_of(arrays[0])
        arrays = [xp.asarray(a) for a in arrays]
        shape = tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
        out = xp.full(shape, xp.nan, dtype=np.float32)  # (every element must be written)
        n = int(out.size)
        if n:
            (a, a_strides, a_offset), (b, b_strides, b_offset) = (
                fusion_codegen.strided_operand(x, shape) for x in arrays
            )
            ndim = max(len(shape), 1)
            dims = xp.asarray(list(shape) or [1], dtype=np.int64)
            a_strides = xp.asarray(a_strides or [0], dtype=np.int64)
            b_strides = xp.asarray(b_strides or [0], dtype=np.int64)
            grid = (n + block - 1) // block
            launch(grid, block, a, b, out.reshape(-1), dims, a_strides, b_strides,
                   a_offset, b_offset, ndim, n)  # fmt: skip
        return out

    mine.patches.replace(fusion_codegen, "run_steps", run_steps)


@piece("07.3", "block_sum_kernel", site="every sum on the GPU path: rounds of your block sums")
def _block_sum(mine: Any, block_sum_kernel: Any) -> None:
    block = _constant(block_sum_kernel, "BLOCK", "07.3")
    launch = mine.wrap("07.3", "block_sum_kernel", lambda g, b, *a: block_sum_kernel[g, b](*a))
    package_all, package_rows = reduce.sum_all, reduce.sum_last_dim

    def sum_all(x: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not _float32(x):
            mine.package_ran("07.3", "a dtype other than float32, or a chosen block")
            return package_all(x, *args, **kwargs)
        xp = array_module_of(x)
        values = xp.ascontiguousarray(x).reshape(-1)
        if values.size == 0:
            return xp.zeros((), dtype=values.dtype)
        while values.size > 1:
            n = int(values.size)
            blocks = (n + block - 1) // block
            partial = xp.full(blocks, xp.nan, dtype=values.dtype)  # (every cell must be written)
            launch(blocks, block, values, partial, n)
            values = partial
        return values.reshape(())

    def sum_last_dim(x: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not _float32(x) or x.ndim == 0 or x.shape[-1] == 0:
            mine.package_ran("07.3", "a dtype other than float32, or a chosen block")
            return package_rows(x, *args, **kwargs)
        xp = array_module_of(x)
        rows = xp.ascontiguousarray(x).reshape(-1, x.shape[-1])
        out = [sum_all(row) for row in rows]
        return xp.stack(out).reshape(x.shape[:-1]) if out else xp.zeros(x.shape[:-1], x.dtype)

    mine.patches.replace(reduce, "sum_all", sum_all)
    mine.patches.replace(reduce, "sum_last_dim", sum_last_dim)


@piece("07.4", "softmax_kernel", site="softmax over the last dim on the GPU path")
def _softmax(mine: Any, softmax_kernel: Any) -> None:
    block = _constant(softmax_kernel, "ROW_BLOCK", "07.4")
    launch = mine.wrap("07.4", "softmax_kernel", lambda g, b, *a: softmax_kernel[g, b](*a))
    package = softmax.softmax_last_dim

    def softmax_last_dim(x: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not _float32(x) or x.ndim == 0:
            mine.package_ran("07.4", "a dtype other than float32, or a chosen block")
            return package(x, *args, **kwargs)
        xp = array_module_of(x)
        values = xp.ascontiguousarray(x)
        out = xp.full_like(values, xp.nan)
        ncols = values.shape[-1]
        rows = values.size // ncols if ncols else 0
        if rows:
            launch(rows, block, values.reshape(-1), out.reshape(-1), ncols)
        return out

    mine.patches.replace(softmax, "softmax_last_dim", softmax_last_dim)


@piece("07.5", "matmul_tiled_kernel", site="every 2-D matmul on the GPU path")
def _matmul(mine: Any, matmul_tiled_kernel: Any) -> None:
    tile = _constant(matmul_tiled_kernel, "TILE", "07.5")
    launch = mine.wrap(
        "07.5", "matmul_tiled_kernel", lambda g, b, *a: matmul_tiled_kernel[g, b](*a)
    )
    package = matmul.matmul_autotuned

    def matmul_yours(a: Any, b: Any) -> Any:
        if not _float32(a, b):
            mine.package_ran("07.5", "a dtype other than float32")
            return package(a, b)
        a, b, out, m, n, k = matmul._prepare(a, b)
        out.fill(np.nan)  # every element must be written, not added into zeros
        if out.size:
            grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
            launch(grid, (tile, tile), a.reshape(-1), b.reshape(-1), out.reshape(-1), m, n, k)
        return out

    mine.patches.replace(matmul, "matmul_autotuned", matmul_yours)


@piece("07.6", "fused_lines", site="the code of every fused elementwise kernel (ops and compile)")
def _fused(mine: Any, fused_lines: Any) -> None:
    learner = mine.wrap("07.6", "fused_lines", fused_lines)
    mine.patches.replace(fusion_codegen, "fused_lines", lambda steps: list(learner(steps)))
