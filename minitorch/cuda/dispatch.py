"""Route a device's ops to chapter 07's kernels through the backend seam.

``enable("cuda")`` registers, for each op it covers, a kernel with the backend
(``minitorch.backend.get("cuda").register_kernel(op, kernel)``); ``Function.apply`` then
calls it instead of the op's ``forward``, and nothing in the ops changes. A kernel is a
pure array function with the forward's signature: what backward needs is the op's own
``setup_context``, run by autograd whichever kernel computed the output. A kernel hands
back to ``forward`` the cases it does not cover (integer dtypes, softmax over another dim,
batched matmul, ...).

Chapter 05's fused elementwise node (``jit.fusion.FusedElementwise``) is one of the ops:
it runs as one generated kernel (:mod:`minitorch.cuda.lowering`).

``enable("cpu")`` routes CPU ops through the *simulator*: slow, but it shows the seam at
work on a machine without a GPU (the tests use it on small tensors).
"""

from __future__ import annotations

from typing import Any

from .. import backend, ops
from ..function import Layer
from ..ops.registry import elementwise
from . import fusion_codegen, lowering
from .kernels import matmul_autotuned, softmax_last_dim, sum_all, sum_last_dim

_FLOATS = ("float32", "float64")


def _floating_arrays(*values: Any) -> bool:
    """All arrays share one float dtype, and the rest are Python numbers."""
    arrays = [v for v in values if hasattr(v, "dtype")]
    if not arrays or any(v.dtype.name not in _FLOATS for v in arrays):
        return False
    if len({a.dtype for a in arrays}) != 1:
        return False
    return all(hasattr(v, "dtype") or type(v) in (int, float) for v in values)


def _as_operands(values: tuple) -> list:
    first = next(v for v in values if hasattr(v, "dtype"))
    xp = backend.array_module_of(first)
    return [v if hasattr(v, "dtype") else xp.asarray(v, dtype=first.dtype) for v in values]


def elementwise_kernel(op: type, step: str) -> Any:
    def kernel(*args: Any) -> Any:
        if not _floating_arrays(*args):
            return op.forward(*args)
        operands = [f"x{j}" for j in range(len(args))]
        return fusion_codegen.run_steps([(step, *operands)], _as_operands(args))

    kernel.__name__ = f"{step}_kernel"
    return kernel


def softmax_kernel(x: Any, dim: int) -> Any:
    if not _floating_arrays(x) or x.ndim == 0 or dim not in (-1, x.ndim - 1) or x.size == 0:
        return ops.Softmax.forward(x, dim)
    return softmax_last_dim(x)


def sum_kernel(a: Any, dim: Any, keepdim: bool, dtype: Any = None) -> Any:
    last = (a.ndim - 1,)
    dims = (dim,) if isinstance(dim, int) else dim
    if dims is not None:
        dims = tuple(d % a.ndim for d in dims) if a.ndim else dims
    if not _floating_arrays(a) or dtype is not None or a.ndim == 0 or dims not in (None, last):
        return ops.Sum.forward(a, dim, keepdim, dtype)
    if dims is None:
        out = sum_all(a)
        return out.reshape((1,) * a.ndim) if keepdim else out
    out = sum_last_dim(a)
    return out.reshape(out.shape + (1,)) if keepdim else out


def matmul_kernel(a: Any, b: Any) -> Any:
    if not _floating_arrays(a, b) or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        return ops.MatMul.forward(a, b)
    return matmul_autotuned(a, b)


def kernels() -> dict[type, Any]:
    """Every op this package provides a kernel for -> the kernel."""
    table = {op: elementwise_kernel(op, name) for name, op in elementwise().items()}
    table[ops.Softmax] = softmax_kernel
    table[ops.Sum] = sum_kernel
    table[ops.MatMul] = matmul_kernel
    table[_fused_elementwise()] = lowering.fused_elementwise_kernel
    return table


def _fused_elementwise() -> type:
    """Chapter 05's fused node's op (imported here: the jit package is only needed now)."""
    from ..jit.fusion import FusedElementwise

    return FusedElementwise


class _Parts(Layer):
    """On ``apply``'s stack while the kernels serve a device: an op that is a formula of
    other ops (LayerNorm, GELU, attention: ``Function.decomposition``) runs as those ops,
    each of which has its kernel. It only passes the call on."""

    order = 40
    reads_parts = True


_PARTS = _Parts()
_enabled: set = set()


def enable(device: str = "cuda") -> None:
    """Register the kernels with ``device``'s backend."""
    target = backend.get(device)
    for op, kernel in kernels().items():
        target.register_kernel(op, kernel)
    if not _enabled:
        _PARTS.engage()
    _enabled.add(device)


def disable(device: str = "cuda") -> None:
    """Unregister them: the ops' own forwards run again."""
    target = backend.get(device)
    for op in kernels():
        target.unregister_kernel(op)
    if device in _enabled:
        _enabled.discard(device)
        if not _enabled:
            _PARTS.disengage()
