"""Kernels written once in the kernel language (:mod:`minitorch.cuda.jit`).

Each module shows one idea: ``elementwise`` (strided map/zip with broadcasting, through
the fusion codegen), ``reduce`` (a shared-memory reduction tree), ``softmax`` (one block
per row: max, sum of exps, normalise) and ``matmul`` (naive, shared-memory tiled,
register-blocked). Each has a host function that takes numpy or cupy arrays, launches the
kernel and returns a new array.
"""

from .elementwise import map_op, zip_op
from .matmul import matmul_autotuned, matmul_naive, matmul_register_blocked, matmul_tiled
from .reduce import sum_all, sum_last_dim
from .softmax import softmax_last_dim
