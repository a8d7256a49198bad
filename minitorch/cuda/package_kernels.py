"""Every kernel this package ships, as it launches them: argument types and block shape.

One :class:`~minitorch.cuda.cross_compile.Launch` per kernel and dtype the package runs on a GPU
(float32 and float64, the dtypes :mod:`minitorch.cuda.dispatch` routes to kernels):

- the fusion codegen's kernel for each elementwise op alone (``map_op``/``zip_op`` and the
  dispatched ops run exactly these), and chapter 05's fused nodes lowered to one kernel;
- the reductions: the shared-memory tree, the same finished by warp shuffles, row sums;
- softmax along the last dim;
- the matmuls: naive, tiled and register-blocked, with every configuration autotuning
  tries (:data:`minitorch.cuda.kernels.matmul.CANDIDATES`) and the functions' defaults.

Arrays are passed flat (1-d) and sizes as Python ints, as the host functions do.
"""

from __future__ import annotations

from .launches import Array, Launch

DTYPES = ("float32", "float64")


def package_launches(dtypes: tuple[str, ...] = DTYPES) -> list[Launch]:
    """Every kernel the package launches on a GPU, with its arguments' types and its block."""
    launches = []
    for dtype in dtypes:
        launches += elementwise_launches(dtype)
        launches += reduction_launches(dtype)
        launches += matmul_launches(dtype)
    launches += lowering_launches(dtypes)
    return launches


def _fused_args(dtype: str, ninputs: int, noutputs: int = 1, input_dtypes: tuple = ()) -> tuple:
    """``fusion_codegen.launch_fused``'s arguments: outputs, flat inputs, shape, strides, offsets,
    ndim, n (shape/strides/offsets are int64 arrays; ndim and n Python ints)."""
    outs = tuple(Array(dtype) for _ in range(noutputs))
    ins = tuple(Array(d) for d in (input_dtypes or (dtype,) * ninputs))
    return (*outs, *ins, Array("int64"), Array("int64", 2), Array("int64"), 2, 1024)


def elementwise_launches(dtype: str) -> list[Launch]:
    from ..ops.registry import elementwise
    from ..ops.scalar import arity
    from . import fusion_codegen

    launches = []
    for op, spec in sorted(elementwise().items()):
        n = arity(spec.scalar)
        steps = [(op, *(f"x{j}" for j in range(n)))]
        kernel = fusion_codegen.compile_lines(fusion_codegen.fused_lines(steps), n)
        launches.append(Launch(f"fused {op} ({dtype})", kernel, _fused_args(dtype, n), (256, 1, 1)))
    return launches


def reduction_launches(dtype: str) -> list[Launch]:
    from .kernels import reduce, softmax

    x, out = Array(dtype), Array(dtype)
    block = reduce.BLOCK
    return [
        Launch(f"block_sum ({dtype})", reduce.block_sum_kernel(block, dtype), (x, out, 1024),
               (block, 1, 1)),
        Launch(f"block_sum_warp ({dtype})", reduce.block_sum_warp_kernel(block, dtype),
               (x, out, 1024), (block, 1, 1)),
        Launch(f"row_sum ({dtype})", reduce.row_sum_kernel(block, dtype), (x, out, 1024),
               (block, 1, 1)),
        Launch(f"softmax_rows ({dtype})", softmax.softmax_kernel(softmax.BLOCK, dtype),
               (x, out, 1024), (softmax.BLOCK, 1, 1)),
    ]  # fmt: skip


def matmul_launches(dtype: str) -> list[Launch]:
    from .kernels import matmul

    args = (Array(dtype), Array(dtype), Array(dtype), 256, 256, 256)  # a, b, out, m, n, k
    b = matmul.NAIVE_BLOCK
    launches = [Launch(f"matmul_naive ({dtype})", matmul.naive_kernel(dtype), args, (b, b, 1))]
    tiles = sorted({16} | {kw["tile"] for name, _, kw in matmul.CANDIDATES if name == "tiled"})
    for tile in tiles:
        kernel = matmul.tiled_kernel(tile, dtype)
        launches.append(Launch(f"matmul_tiled {tile} ({dtype})", kernel, args, (tile, tile, 1)))
    configs = [(64, 4, 16)] + [
        (kw["tile"], kw["r"], kw["tile_k"])
        for name, _, kw in matmul.CANDIDATES
        if name == "register_blocked"
    ]
    for tile, r, tile_k in sorted(set(configs)):
        kernel = matmul.register_blocked_kernel(tile, r, tile_k, dtype)
        t = tile // r
        name = f"matmul_register_blocked {tile}/{r}/{tile_k} ({dtype})"
        launches.append(Launch(name, kernel, args, (t, t, 1)))
    return launches


def lowering_launches(dtypes: tuple[str, ...] = DTYPES) -> list[Launch]:
    """Chapter 05's fused nodes, lowered to one kernel each: GELU's tanh approximation, traced
    and optimized by chapter 05 (float32, float64)."""
    import numpy as np

    import minitorch as mt

    from ..nn import functional as F
    from . import lowering

    def gelu(t: mt.Tensor) -> mt.Tensor:
        return F.gelu(t, approximate="tanh")

    launches = []
    for dtype in dtypes:
        z = mt.tensor(np.zeros((4, 8)), dtype=getattr(mt, dtype))
        graph = mt.jit.optimize(mt.jit.trace(gelu, z))
        for node in graph.graph.nodes:
            if node.op != "fused":
                continue
            fused = node.target
            kernel = lowering.compile_fused(fused)
            args = _fused_args(
                fused.dtype,
                len(fused.inputs),
                len(fused.outputs),
                tuple(d for d, _ in fused.inputs),
            )
            name = f"ch05 fused GELU node, {len(fused.ops)} ops ({fused.dtype})"
            launches.append(Launch(name, kernel, args, (256, 1, 1)))
    return launches
