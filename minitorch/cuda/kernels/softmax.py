"""Softmax along the last dim: one block per row, three passes over the row.

``softmax(x)_j = exp(x_j - m) / sum_k exp(x_k - m)`` with ``m = max_k x_k`` (subtracting
the max keeps every ``exp`` at most 1, so nothing overflows). The block's threads stride
over the row: each finds the max of its share, a shared-memory tree combines the shares;
then the same for the sum of ``exp(x - m)``; then each writes its share of the output.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ...backend import array_module_of
from .. import jit
from .reduce import _check_block

BLOCK = 128


@cache
def softmax_kernel(block: int, dtype: str) -> jit.RawKernel:
    _check_block(block)
    element = getattr(jit, dtype)

    @jit.rawkernel()
    def softmax_rows(x, out, ncols):
        buf = jit.shared_memory(element, block)
        tid = jit.threadIdx.x
        base = jit.blockIdx.x * ncols
        # 1. the row's max
        m = x[base]
        for j in range(tid, ncols, block):
            m = max(m, x[base + j])
        buf[tid] = m
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = max(buf[tid], buf[tid + stride])
            jit.syncthreads()
            stride = stride // 2
        m = buf[0]
        jit.syncthreads()  # everyone has read buf[0] before it is overwritten below
        # 2. the sum of exp(x - max)
        total = element(0.0)
        for j in range(tid, ncols, block):
            total = total + jit.exp(x[base + j] - m)
        buf[tid] = total
        jit.syncthreads()
        stride = jit.blockDim.x // 2
        while stride > 0:
            if tid < stride:
                buf[tid] = buf[tid] + buf[tid + stride]
            jit.syncthreads()
            stride = stride // 2
        total = buf[0]
        # 3. normalise
        for j in range(tid, ncols, block):
            out[base + j] = jit.exp(x[base + j] - m) / total

    return softmax_rows


def softmax_last_dim(x: Any, block: int = BLOCK) -> Any:
    """Softmax along the last dim of ``x`` (numpy or cupy), as a new array."""
    xp = array_module_of(x)
    values = xp.ascontiguousarray(x)
    if values.dtype.kind != "f":
        values = values.astype(np.float32)
    out = xp.empty_like(values)
    ncols = values.shape[-1] if values.ndim else 1
    rows = values.size // ncols if ncols else 0
    if rows:
        kernel = softmax_kernel(block, values.dtype.name)
        kernel[rows, block](values.reshape(-1), out.reshape(-1), ncols)
    return out
