"""``minitorch.linalg``, as ``torch.linalg``: vector and matrix norms.

- ``vector_norm(x, ord=2, dim=None, keepdim=False)``: ``(sum |x|^ord)^(1/ord)``;
- ``matrix_norm(A, ord="fro", dim=(-2, -1))``: the Frobenius norm, or the largest
  (``ord`` 1 / ``inf``) or smallest (-1 / -inf) absolute column / row sum;
- ``norm(A, ord=None, dim=None)``: a vector norm, or a matrix norm for a matrix ``ord``
  on two dims, as ``torch.linalg.norm`` decides.

The spectral and nuclear norms (``ord`` 2 / -2 / ``"nuc"`` of a matrix) need a singular
value decomposition, which minitorch does not have: they are refused with a clear error.
"""

from __future__ import annotations

import math
from typing import Any

from . import ops
from .checks import as_tensor
from .ops import vector_norm
from .shape import normalize_dim
from .tensor import Tensor

__all__ = ["matrix_norm", "norm", "vector_norm"]


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False) -> Any:  # noqa: N803
    """A norm of the matrices in the two dims ``dim`` of ``A``."""
    isinstance(A, Tensor) or as_tensor(A, "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(
            f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, but got "
            f"shape {A.shape}"
        )
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple of ints, but got {dim!r}")
    rows, cols = (normalize_dim(d, A.ndim, "linalg.matrix_norm") for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different, got {dim!r}")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: the largest absolute column sum (sum over the rows), inf: the largest row sum
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = ops.abs(A).sum(summed, keepdim=True)
        pick = ops.max if ord > 0 else ops.min
        out = pick(sums, other, keepdim=True).values
        return out if keepdim else out.squeeze((rows, cols))
    raise NotImplementedError(
        f"linalg.matrix_norm: ord={ord!r} needs the singular values, which minitorch does "
        "not compute; use 'fro', 1, -1, inf or -inf"
    )


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: N803
    """``torch.linalg.norm``: with ``ord`` None, the 2-norm of all elements (of ``dim``);
    a matrix norm when ``ord`` is given and the norm is over two dims (``dim`` a pair, or
    ``A`` a matrix); else the vector norm of ``ord``."""
    isinstance(A, Tensor) or as_tensor(A, "linalg.norm")
    if ord is None:
        return vector_norm(A, 2, dim, keepdim)
    two_dims = (isinstance(dim, (tuple, list)) and len(dim) == 2) or (dim is None and A.ndim == 2)
    if isinstance(ord, str) or two_dims:
        if not two_dims:
            raise RuntimeError(
                f"linalg.norm: ord={ord!r} is a matrix norm: it needs a 2-d input or a pair of "
                f"dims, but got shape {A.shape} and dim={dim!r}"
            )
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim)
    if dim is None and A.ndim != 1:
        raise RuntimeError(
            f"linalg.norm: for a vector norm of a {A.ndim}-d input give dim (or use "
            "linalg.vector_norm, which flattens it)"
        )
    return vector_norm(A, ord, dim, keepdim)
