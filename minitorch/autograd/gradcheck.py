"""gradcheck: compare autograd's gradients with finite differences, in float64.

For every output element ``j`` and input element ``i``, the analytic derivative
``d out[j] / d in[i]`` (one backward per output element) must match the central
difference ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` within ``atol + rtol * |numerical|``.
On a mismatch the error names the worst element, so a wrong backward is easy to find.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numerical gradients disagree."""


def gradcheck(
    fn: Any,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when ``fn``'s gradients match finite differences for the inputs that require grad.

    Inputs that are not float64 are checked through float64 copies. Non-contiguous float64
    inputs are used as they are, so views and strides are exercised too.
    """
    args = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    wrt = [i for i, t in enumerate(args) if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError(
            "gradcheck: at least one input tensor must have requires_grad=True, but got "
            f"inputs {', '.join(type(a).__name__ for a in args)}"
        )
    for i in wrt:
        t = args[i]
        if t.dtype.name != "float64" or not t.is_leaf:
            args[i] = t.detach().double().requires_grad_()
        elif any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape, strict=True)):
            raise ValueError(
                f"gradcheck: input {i} has overlapping memory (a stride of 0, e.g. from expand); "
                "perturbing one element would move several. Pass .contiguous() instead."
            )
    xs = [args[i] for i in wrt]

    with enable_grad():
        outputs = _outputs(fn(*args))
    analytic = [[_zeros(x, o) for x in xs] for o in outputs]
    for k, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for j in range(out.numel()):
            seed = np.zeros(out.numel())
            seed[j] = 1.0
            go = Tensor._from_array(seed.reshape(out.shape).astype(out._data.dtype))
            go = go.to(out.device)
            grads = grad(out, xs, go, retain_graph=True, allow_unused=True)
            for n, g in enumerate(grads):
                if g is not None:
                    analytic[k][n][:, j] = _host(g).ravel()

    # Central differences, perturbing the inputs' memory directly. (Grad mode stays on:
    # fn may itself compute gradients, as in gradgradcheck.)
    numerical = [[_zeros(x, o) for x in xs] for o in outputs]
    for n, x in enumerate(xs):
        data = x._data
        for p, idx in enumerate(np.ndindex(*x.shape)):
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = [_host(o).ravel() for o in _outputs(fn(*args))]
            data[idx] = orig - eps
            minus = [_host(o).ravel() for o in _outputs(fn(*args))]
            data[idx] = orig
            for k in range(len(outputs)):
                numerical[k][n][p, :] = (plus[k] - minus[k]) / (2 * eps)

    for k in range(len(outputs)):
        for n, x in enumerate(xs):
            problem = _compare(analytic[k][n], numerical[k][n], atol, rtol)
            if problem is None:
                continue
            message = _report(problem, k, wrt[n], x.shape, outputs[k].shape, atol, rtol)
            message += _matrices(analytic[k][n], numerical[k][n])
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True


def gradgradcheck(
    fn: Any,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    """gradcheck of the gradients themselves: checks ``create_graph=True`` backward
    formulas (Hessian-vector products) against finite differences of the first gradients."""
    args = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    for i, t in enumerate(args):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            args[i] = t.detach().double().requires_grad_()
    wrt = [i for i, t in enumerate(args) if isinstance(t, Tensor) and t.requires_grad]
    with enable_grad():
        outputs = [o for o in _outputs(fn(*args)) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [
            Tensor._from_array(rng.standard_normal(o.shape)).to(o.device).requires_grad_()
            for o in outputs
        ]
    grad_outputs = list(grad_outputs)
    count = len(args)

    def first_gradients(*values: Any) -> tuple:
        xs, gos = list(values[:count]), list(values[count:])
        outs = [o for o in _outputs(fn(*xs)) if o.requires_grad]
        grads = grad(outs, [xs[i] for i in wrt], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_gradients,
        args + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )


def _outputs(result: Any) -> list:
    """The floating-point tensors among fn's outputs."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in items if isinstance(o, Tensor) and o.is_floating_point()]


def _zeros(x: Any, out: Any) -> np.ndarray:
    return np.zeros((x.numel(), out.numel()))


def _host(t: Any) -> np.ndarray:
    data = t.detach().cpu()._data
    return np.array(data, dtype=np.float64)


def _compare(a: np.ndarray, n: np.ndarray, atol: float, rtol: float) -> tuple | None:
    """None when close everywhere; else (input pos, output pos, analytic, numerical)."""
    excess = np.abs(a - n) - (atol + rtol * np.abs(n))
    excess = np.where(np.isnan(a) != np.isnan(n), np.inf, excess)
    if not (excess > 0).any():
        return None
    p, j = np.unravel_index(int(np.nanargmax(excess)), excess.shape)
    return int(p), int(j), float(a[p, j]), float(n[p, j])


def _report(
    problem: tuple, k: int, i: int, in_shape: tuple, out_shape: tuple, atol: float, rtol: float
) -> str:
    p, j, a, n = problem
    in_idx = tuple(int(v) for v in np.unravel_index(p, in_shape)) if in_shape else ()
    out_idx = tuple(int(v) for v in np.unravel_index(j, out_shape)) if out_shape else ()
    allowed = atol + rtol * abs(n)
    return (
        f"gradcheck: Jacobian mismatch for output {k} with respect to input {i}.\n"
        f"Worst element: d output{list(out_idx)} / d input{list(in_idx)}: "
        f"analytic {a:.6g} vs numerical {n:.6g} (difference {abs(a - n):.3g}; allowed "
        f"atol + rtol * |numerical| = {allowed:.3g})"
    )


def _matrices(a: np.ndarray, n: np.ndarray) -> str:
    if a.size > 64:
        return ""
    with np.printoptions(precision=4, suppress=True):
        return (
            "\nJacobians (rows: input elements, columns: output elements)\n"
            f"numerical:\n{n}\nanalytical:\n{a}"
        )
