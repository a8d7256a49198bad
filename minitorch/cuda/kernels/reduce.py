"""Sums with a shared-memory reduction tree.

Each block loads its slice of the input into shared memory, then halves the number of
active threads at each step: thread ``t`` adds cell ``t + stride`` into cell ``t``, a
``syncthreads()`` makes the step's writes visible, and after ``log2(block)`` steps cell 0
holds the block's sum. ``sum_all`` repeats this over the per-block sums until one is left;
``sum_last_dim`` gives each row its own block.

``block_sum_warp_kernel`` is the same tree until 32 values are left; those are in the 32
lanes of warp 0, which finish with five register-to-register shuffles
(``shfl_down_sync``) instead of five more rounds of shared memory and ``syncthreads()``:
lanes of a warp run in lockstep, so they need no barrier to exchange values.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ...backend import array_module_of
from .. import jit

BLOCK = 256


def _check_block(block: int) -> None:
    if block < 2 or block & (block - 1) or block > 1024:
        raise ValueError(f"a reduction tree needs a power-of-two block up to 1024, got {block}")


@cache
def block_sum_kernel(block: int, dtype: str) -> jit.RawKernel:
    """Each block sums ``2 * block`` elements of ``x`` into ``partial[blockIdx.x]``."""
    _check_block(block)
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def block_sum(x, partial, n):
        buf = jit.shared_memory(element, block)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * (block * 2) + tid
        v = element(0.0)  # a variable keeps its first type: element's, not float32
        if i < n:
            v = x[i]
        if i + block < n:  # each thread adds two elements on the way in
            v = v + x[i + block]
        buf[tid] = v
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            partial[jit.blockIdx.x] = buf[0]

    return block_sum


@cache
def block_sum_warp_kernel(block: int, dtype: str) -> jit.RawKernel:
    """As :func:`block_sum_kernel`, but the last 32 partial sums are added by warp shuffles."""
    _check_block(block)
    if block < jit.warpsize:
        raise ValueError(f"a warp-shuffle reduction needs a block of at least 32, got {block}")
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def block_sum_warp(x, partial, n):
        buf = jit.shared_memory(element, block)
        tid = jit.threadIdx.x
        i = jit.blockIdx.x * (block * 2) + tid
        v = element(0.0)
        if i < n:
            v = x[i]
        if i + block < n:
            v = v + x[i + block]
        buf[tid] = v
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride >= 32:  # the shared-memory tree, down to 32 values
            if tid < stride:
                v = v + buf[tid + stride]
                buf[tid] = v
            jit.syncthreads()
            stride = stride // 2
        if tid < 32:  # warp 0: all 32 lanes take part (mask 0xFFFFFFFF), no barrier needed
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 16)
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 8)
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 4)
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 2)
            v = v + jit.shfl_down_sync(0xFFFFFFFF, v, 1)
            if tid == 0:
                partial[jit.blockIdx.x] = v

    return block_sum_warp


@cache
def row_sum_kernel(block: int, dtype: str) -> jit.RawKernel:
    """Block ``r`` sums row ``r`` of a contiguous ``(rows, ncols)`` matrix into ``out[r]``."""
    _check_block(block)
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def row_sum(x, out, ncols):
        buf = jit.shared_memory(element, block)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        acc = element(0.0)
        for j in range(tid, ncols, block):  # block-strided: neighbours read neighbours
            acc = acc + x[base + j]
        buf[tid] = acc
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        if tid == 0:
            out[jit.blockIdx.x] = buf[0]

    return row_sum


def sum_all(x: Any, block: int = BLOCK, warp_shuffle: bool = False) -> Any:
    """The sum of all elements (a 0-d array), by rounds of block sums (finished by warp
    shuffles with ``warp_shuffle=True``)."""
    xp = array_module_of(x)
    values = xp.ascontiguousarray(x).reshape(-1)
    if values.dtype.kind != "f":
        values = values.astype(np.float32)
    make = block_sum_warp_kernel if warp_shuffle else block_sum_kernel
    kernel = make(block, values.dtype.name)
    if values.size == 0:
        return xp.zeros((), dtype=values.dtype)
    while values.size > 1:
        n = int(values.size)
        blocks = (n + 2 * block - 1) // (2 * block)
        partial = xp.empty(blocks, dtype=values.dtype)
        kernel[blocks, block](values, partial, n)
        values = partial
    return values.reshape(())


def sum_last_dim(x: Any, block: int = BLOCK) -> Any:
    """Sums along the last dim (shape ``x.shape[:-1]``)."""
    xp = array_module_of(x)
    values = xp.ascontiguousarray(x)
    if values.dtype.kind != "f":
        values = values.astype(np.float32)
    ncols = values.shape[-1] if values.ndim else 1
    rows = values.size // ncols if ncols else int(np.prod(values.shape[:-1]))
    out = xp.zeros(values.shape[:-1], dtype=values.dtype)
    if rows and ncols:
        row_sum_kernel(block, values.dtype.name)[rows, block](
            values.reshape(-1), out.reshape(-1), ncols
        )
    return out
