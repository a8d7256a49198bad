"""Matrix multiplication ``out = a @ b`` (``a``: m x k, ``b``: k x n), in three steps.

1. **naive**: one thread per output element, reading a row of ``a`` and a column of ``b``
   from global memory: ``2k`` reads per output, ``2mnk`` in all.
2. **tiled**: a block computes a ``tile x tile`` piece of the output. It walks along ``k``
   one tile at a time: its threads load a tile of ``a`` and a tile of ``b`` into shared
   memory (one element each), ``syncthreads()``, and every thread multiplies from shared
   memory. Each element loaded is used ``tile`` times: global reads drop ``tile``-fold.
3. **register-blocked**: each thread computes an ``r x r`` patch of outputs, kept in
   registers (``r*r`` scalar accumulators), so each value read from shared memory is used
   ``r`` times too. The kernel is generated for the chosen sizes (the kernel language has
   no local arrays: the ``r*r`` accumulators are ``r*r`` named variables).

All three handle any ``m, n, k``: loads past the edge of a matrix put 0 in the tile, and
outputs past the edge are not written.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ...backend import array_module_of
from ...checks import as_number
from .. import codegen, jit

NAIVE_BLOCK = 16


@cache
def naive_kernel(dtype: str = "float32") -> jit.RawKernel:
    """One thread per output element (``dtype``: the accumulator's, as the arrays')."""
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def matmul_naive(a, b, out, m, n, k):
        row = jit.blockIdx.y * jit.blockDim.y + jit.threadIdx.y
        col = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if row < m and col < n:
            acc = element(0.0)  # a GPU variable keeps its first type: element's, not float32
            for p in range(k):
                acc = acc + a[row * k + p] * b[p * n + col]
            out[row * n + col] = acc

    return matmul_naive


@cache
def tiled_kernel(tile: int, dtype: str = "float32") -> jit.RawKernel:
    """The shared-memory tiled kernel for ``tile x tile`` blocks."""
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def matmul_tiled(a, b, out, m, n, k):
        a_tile = jit.shared_memory(element, tile * tile)
        b_tile = jit.shared_memory(element, tile * tile)
        tx = jit.threadIdx.x
        ty = jit.threadIdx.y
        row = jit.blockIdx.y * tile + ty
        col = jit.blockIdx.x * tile + tx
        acc = element(0.0)
        for start in range(0, k, tile):
            # each thread loads one element of each tile (0 past the edges)
            if row < m and start + tx < k:
                a_tile[ty * tile + tx] = a[row * k + start + tx]
            else:
                a_tile[ty * tile + tx] = 0.0
            if start + ty < k and col < n:
                b_tile[ty * tile + tx] = b[(start + ty) * n + col]
            else:
                b_tile[ty * tile + tx] = 0.0
            jit.syncthreads()  # the tiles are loaded
            for p in range(tile):
                acc = acc + a_tile[ty * tile + p] * b_tile[p * tile + tx]
            jit.syncthreads()  # everyone is done with the tiles before the next load
        if row < m and col < n:
            out[row * n + col] = acc

    return matmul_tiled


def register_blocked_source(tile: int, r: int, tile_k: int, dtype: str = "float32") -> str:
    """The source of the register-blocked kernel: a ``tile x tile`` output tile per block of
    ``(tile/r)^2`` threads, each owning rows ``ty + i*(tile/r)``, cols ``tx + j*(tile/r)``."""
    if tile % r:
        raise ValueError(f"register blocking: tile {tile} is not a multiple of r={r}")
    t = tile // r  # threads per block side
    lines = [
        "@rawkernel()",
        "def matmul_register_blocked(a, b, out, m, n, k):",
        f"    a_tile = shared_memory({dtype}, {tile * tile_k})  # {tile} x {tile_k}",
        f"    b_tile = shared_memory({dtype}, {tile_k * tile})  # {tile_k} x {tile}",
        "    tx = threadIdx.x",
        "    ty = threadIdx.y",
        f"    tid = ty * {t} + tx",
        f"    row0 = blockIdx.y * {tile}",
        f"    col0 = blockIdx.x * {tile}",
    ]
    lines += [f"    acc_{i}_{j} = {dtype}(0.0)" for i in range(r) for j in range(r)]
    lines += [
        f"    for start in range(0, k, {tile_k}):",
        f"        for e in range(tid, {tile * tile_k}, {t * t}):  # cooperative tile loads",
        f"            ar = e // {tile_k}",
        f"            ac = e % {tile_k}",
        "            if row0 + ar < m and start + ac < k:",
        "                a_tile[e] = a[(row0 + ar) * k + start + ac]",
        "            else:",
        "                a_tile[e] = 0.0",
        f"            br = e // {tile}",
        f"            bc = e % {tile}",
        "            if start + br < k and col0 + bc < n:",
        "                b_tile[e] = b[(start + br) * n + col0 + bc]",
        "            else:",
        "                b_tile[e] = 0.0",
        "        syncthreads()",
        f"        for p in range({tile_k}):",
    ]
    lines += [f"            a_{i} = a_tile[(ty + {i * t}) * {tile_k} + p]" for i in range(r)]
    lines += [f"            b_{j} = b_tile[p * {tile} + tx + {j * t}]" for j in range(r)]
    lines += [
        f"            acc_{i}_{j} = acc_{i}_{j} + a_{i} * b_{j}" for i in range(r) for j in range(r)
    ]
    lines += ["        syncthreads()"]
    for i in range(r):
        for j in range(r):
            lines += [
                f"    if row0 + ty + {i * t} < m and col0 + tx + {j * t} < n:",
                f"        out[(row0 + ty + {i * t}) * n + col0 + tx + {j * t}] = acc_{i}_{j}",
            ]
    return "\n".join(lines) + "\n"


@cache
def register_blocked_kernel(tile: int, r: int, tile_k: int, dtype: str = "float32") -> Any:
    source = register_blocked_source(tile, r, tile_k, dtype)
    return codegen.compile_kernel(source, "matmul_register_blocked")


def _prepare(a: Any, b: Any) -> tuple[Any, Any, Any, int, int, int]:
    for name, x in (("a", a), ("b", b)):
        if not (hasattr(x, "ndim") and hasattr(x, "dtype") and hasattr(x, "shape")):
            raise TypeError(
                f"matmul kernels: {name} must be a numpy or cupy array, but got "
                f"{type(x).__name__} (np.asarray it, or .numpy() a Tensor)"
            )
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(
            f"matmul kernels: need (m, k) @ (k, n) matrices, got shapes {a.shape} and {b.shape}"
        )
    xp = array_module_of(a)
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind != "f":
        dtype = np.dtype(np.float32)
    a = xp.ascontiguousarray(a, dtype=dtype)
    b = xp.ascontiguousarray(b, dtype=dtype)
    m, k = a.shape
    n = b.shape[1]
    return a, b, xp.zeros((m, n), dtype=dtype), m, n, k


def matmul_naive(a: Any, b: Any, block: int = NAIVE_BLOCK) -> Any:
    as_number(block, "matmul_naive", "block", low=1, integer=True)
    a, b, out, m, n, k = _prepare(a, b)
    if out.size:
        grid = ((n + block - 1) // block, (m + block - 1) // block)
        kernel = naive_kernel(out.dtype.name)[grid, (block, block)]
        kernel(a.reshape(-1), b.reshape(-1), out.reshape(-1), m, n, k)
    return out


def matmul_tiled(a: Any, b: Any, tile: int = 16) -> Any:
    as_number(tile, "matmul_tiled", "tile", low=1, integer=True)
    a, b, out, m, n, k = _prepare(a, b)
    if out.size:
        grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
        kernel = tiled_kernel(tile, out.dtype.name)
        kernel[grid, (tile, tile)](a.reshape(-1), b.reshape(-1), out.reshape(-1), m, n, k)
    return out


def matmul_register_blocked(a: Any, b: Any, tile: int = 64, r: int = 4, tile_k: int = 16) -> Any:
    for name, value in (("tile", tile), ("r", r), ("tile_k", tile_k)):
        as_number(value, "matmul_register_blocked", name, low=1, integer=True)
    if tile % r:
        raise ValueError(f"matmul_register_blocked: tile ({tile}) must be a multiple of r ({r})")
    a, b, out, m, n, k = _prepare(a, b)
    if out.size:
        t = tile // r
        grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
        kernel = register_blocked_kernel(tile, r, tile_k, out.dtype.name)
        kernel[grid, (t, t)](a.reshape(-1), b.reshape(-1), out.reshape(-1), m, n, k)
    return out


#: The variants autotuning chooses among: (name, function, keyword arguments).
CANDIDATES = (
    ("tiled", matmul_tiled, {"tile": 8}),
    ("tiled", matmul_tiled, {"tile": 16}),
    ("tiled", matmul_tiled, {"tile": 32}),
    ("register_blocked", matmul_register_blocked, {"tile": 32, "r": 2, "tile_k": 8}),
    ("register_blocked", matmul_register_blocked, {"tile": 64, "r": 4, "tile_k": 8}),
    ("register_blocked", matmul_register_blocked, {"tile": 64, "r": 4, "tile_k": 16}),
    ("register_blocked", matmul_register_blocked, {"tile": 128, "r": 8, "tile_k": 8}),
)


def matmul_autotuned(a: Any, b: Any) -> Any:
    """``a @ b`` with the variant autotuning found fastest for this shape (cached)."""
    from ..autotune import tune

    _, func, kwargs = tune("matmul", a, b, candidates=CANDIDATES)
    return func(a, b, **kwargs)
