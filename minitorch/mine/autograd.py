"""Chapter 02's pieces in the framework: backward formulas, unbroadcast, the engine, gradcheck."""

from __future__ import annotations

import importlib
import types
from typing import Any

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import no_grad, set_grad_enabled
from ..autograd.graph import AccumulateGrad
from ..ops import elementwise, linalg, reduce
from ..tensor import Tensor
from .pieces import piece

_shape = elementwise._shape


def _save_both(ctx: Any, inputs: tuple, output: Any) -> None:
    """Save both operands (the exercise's backward reads both, whichever needs a gradient)."""
    a, b = inputs
    ctx.shapes = (_shape(a), _shape(b))
    ctx.save_for_backward(a, b)


def _binary_backward(learner: Any) -> Any:
    """A backward of the learner's (written for same-shape operands) in the framework: its
    gradients are summed back to each operand's shape by ``unbroadcast`` (yours, from 02.3,
    when that one is in use too)."""

    def backward(ctx: Any, grad: Any) -> tuple:
        grads = learner(ctx, grad)
        if not isinstance(grads, tuple) or len(grads) != 2:
            raise TypeError(
                f"backward returned {type(grads).__name__} {grads!r:.60}; it must return a "
                "tuple of two gradients, one per input"
            )
        return tuple(
            elementwise.unbroadcast(g, shape) if need and g is not None else None
            for g, shape, need in zip(grads, ctx.shapes, ctx.needs_input_grad, strict=True)
        )

    return backward


def _install_binary(mine: Any, exercise: str, op: type, learner: Any) -> None:
    label = f"{op.__name__}.backward"
    mine.patches.replace(op, "setup_context", staticmethod(_save_both))
    mine.patches.replace(
        op, "backward", staticmethod(_binary_backward(mine.wrap(exercise, label, learner)))
    )


@piece("02.1", "Mul.backward", "Div.backward", site="the gradient of every a * b and a / b")
def _mul_div(mine: Any, mul: Any, div: Any) -> None:
    _install_binary(mine, "02.1", elementwise.Mul, mul)
    _install_binary(mine, "02.1", elementwise.Div, div)


@piece("02.2", "Exp.backward", "Log.backward", site="the gradient of every exp() and log()")
def _exp_log(mine: Any, exp: Any, log: Any) -> None:
    # The package saves what the exercise's forward saves: exp its output, log its input.
    mine.patches.replace(
        elementwise.Exp, "backward", staticmethod(mine.wrap("02.2", "Exp.backward", exp))
    )
    mine.patches.replace(
        elementwise.Log, "backward", staticmethod(mine.wrap("02.2", "Log.backward", log))
    )


@piece("02.3", "unbroadcast", site="every broadcasting op's backward (add, mul, matmul, ...)")
def _unbroadcast(mine: Any, unbroadcast: Any) -> None:
    learner = mine.wrap("02.3", "unbroadcast", unbroadcast)

    def summed_back(grad: Any, shape: Any) -> Any:
        shape = tuple(shape)
        if grad.ndim < len(shape):  # a (1, 3) value written into (3,): only a reshape
            return grad.reshape(shape)
        return learner(grad, shape)

    mine.patches.replace(elementwise, "unbroadcast", summed_back)


@piece("02.4", "MatMul.backward", site="the gradient of every a @ b of matrices")
def _matmul(mine: Any, matmul: Any) -> None:
    learner = mine.wrap("02.4", "MatMul.backward", matmul)
    package = linalg.MatMul.backward

    def backward(ctx: Any, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        if a.ndim < 2 or b.ndim < 2:  # vectors: beyond the exercise
            mine.package_ran("02.4", "a vector operand")
            return package(ctx, grad)
        return learner(ctx, grad)

    mine.patches.replace(linalg.MatMul, "setup_context", staticmethod(_save_matmul))
    mine.patches.replace(linalg.MatMul, "backward", staticmethod(backward))


def _save_matmul(ctx: Any, inputs: tuple, output: Any) -> None:
    a, b = inputs
    ctx.shapes = (a.shape, b.shape)
    ctx.save_for_backward(a, b)


@piece("02.5", "Sum.backward", site="the gradient of every sum()")
def _sum(mine: Any, sum_backward: Any) -> None:
    learner = mine.wrap("02.5", "Sum.backward", sum_backward)

    def backward(ctx: Any, grad: Any) -> tuple:
        ndim = len(ctx.shape)
        dims = tuple(range(ndim)) if ctx.dim is None else tuple(sorted(d % ndim for d in ctx.dim))
        theirs = types.SimpleNamespace(input_shape=ctx.shape, dims=dims, keepdim=ctx.keepdim)
        grads = learner(theirs, grad)
        first = grads[0] if isinstance(grads, tuple) else grads
        return first, None, None, None

    mine.patches.replace(reduce.Sum, "backward", staticmethod(backward))


class _Root:
    """What ``topological_order`` is given: a tensor, as far as it looks (its ``grad_fn``)."""

    def __init__(self, node: Any) -> None:
        self.grad_fn = node


@piece("02.6", "topological_order", site="the order the backward engine runs the graph's nodes in")
def _order(mine: Any, topological_order: Any) -> None:
    learner = mine.wrap("02.6", "topological_order", topological_order)
    package = engine._run

    def run(
        root_edges: list,
        root_grads: list,
        retain_graph: bool,
        create_graph: bool,
        capture: Any = None,
    ) -> None:
        roots = list(dict.fromkeys(fn for fn, _ in root_edges))
        if len(roots) != 1:
            mine.package_ran("02.6", "several outputs at once")
            return package(root_edges, root_grads, retain_graph, create_graph, capture)
        order = list(learner(_Root(roots[0])))
        _check_order(order, engine._dependencies(roots))
        _run_in_order(order, root_edges, root_grads, retain_graph, create_graph, capture)

    mine.patches.replace(engine, "_run", run)


def _check_order(order: list, deps: dict) -> None:
    missing = [fn.name() for fn in deps if fn not in order]
    extra = [repr(fn) for fn in order if fn not in deps]
    if missing or extra or len(order) != len(deps):
        said = f" it left out {', '.join(missing[:3])}" if missing else ""
        said += f" it listed {', '.join(extra[:3])}, not in the graph" if extra else ""
        said += " it listed a node twice" if not (missing or extra) else ""
        raise RuntimeError(
            f"topological_order (exercise 02.6) must list each node of the graph once:{said}"
        )


def _run_in_order(
    order: list,
    root_edges: list,
    root_grads: list,
    retain_graph: bool,
    create_graph: bool,
    capture: Any,
) -> None:
    """The engine's walk, in the learner's order: each node runs once, with the sum of its
    gradients; a gradient sent to a node that already ran means the order was wrong."""
    pending: dict = {}
    for (fn, nr), g in zip(root_edges, root_grads, strict=True):
        engine._add_to(pending, fn, nr, g)
    run = engine._Pass(retain_graph, create_graph, capture, {id(g._storage) for g in root_grads})
    done: set = set()
    engine._callbacks.stack.append([])
    try:
        with set_grad_enabled(create_graph), np.errstate(all="ignore"):
            for fn in order:
                results = run.node(fn, pending.pop(fn, None))
                done.add(fn)
                for (child, nr), g in zip(fn.next_functions, results or (), strict=False):
                    if child is None or g is None:
                        continue
                    if child in done:
                        raise RuntimeError(
                            f"topological_order (exercise 02.6) put {child.name()} before "
                            f"{fn.name()}, which sends it a gradient: a node must come after "
                            "every node that feeds it"
                        )
                    engine._add_to(pending, child, nr, g)
            for callback in engine._callbacks.stack[-1]:
                callback()
    finally:
        engine._callbacks.stack.pop()


def _beyond_the_exercise(deps: dict) -> str | None:
    """Why a graph needs the package's engine: what exercise 02.7's walk leaves out."""
    for fn in deps:
        if type(fn) is AccumulateGrad:
            leaf = fn.variable
            if leaf._hooks or leaf._post_acc_hooks:
                return "hooks on a leaf"
        elif fn._pre_hooks or fn._retained:
            return "tensor hooks or retain_grad"
        elif len(fn._output_meta) > 1:
            return "a node with several outputs"
    return None


@piece("02.7", "backward", site="loss.backward(): the backward pass", uses=("02.6",))
def _backward(mine: Any, backward: Any) -> None:
    learner = mine.wrap("02.7", "backward", backward)
    package = engine.backward

    def run(
        tensors: Any,
        grad_tensors: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        outputs = engine._as_tuple(tensors)
        why = None
        if len(outputs) != 1:
            why = "several outputs at once"
        elif inputs is not None:
            why = "backward(inputs=...)"
        elif create_graph:
            why = "create_graph=True"
        else:
            fn, _ = engine._root_edge(outputs[0], 0)  # (the package's errors for bad roots)
            deps = engine._dependencies([fn])
            why = (
                "a leaf's own backward"
                if type(fn) is AccumulateGrad
                else _beyond_the_exercise(deps)
            )
        if why is not None:
            mine.package_ran("02.7", why)
            return package(tensors, grad_tensors, retain_graph, create_graph, inputs)
        (grad,) = engine._make_grads(outputs, engine._as_tuple(grad_tensors, 1), False)
        leaves = [f.variable for f in deps if type(f) is AccumulateGrad]
        before = {id(leaf): leaf.grad for leaf in leaves}
        with no_grad(), np.errstate(all="ignore"):
            learner(outputs[0], grad)
        _own_grads(leaves, before)
        if not retain_graph:
            for f in deps:
                if type(f) is not AccumulateGrad:
                    f._release()

    mine.patches.replace(engine, "backward", run)


def _own_grads(leaves: list, before: dict) -> None:
    """A new ``.grad`` must not be a broadcast view or share memory with another (the
    package's engine guarantees it; the exercise's walk may hand out ``grad`` itself)."""
    seen: set = set()
    for leaf in leaves:
        g = leaf._grad
        if g is None or g is before[id(leaf)]:
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"backward (exercise 02.7) set a .grad to a {type(g).__name__}; it must be a Tensor"
            )
        if g._requires_grad:
            g = g.detach()
        if id(g._storage) in seen or not g.is_contiguous():
            g = g.clone()
        seen.add(id(g._storage))
        leaf._grad = g


@piece("02.9", "gradcheck", site="minitorch.autograd.gradcheck")
def _gradcheck(mine: Any, gradcheck: Any) -> None:
    learner = mine.wrap("02.9", "gradcheck", gradcheck)
    module = importlib.import_module("minitorch.autograd.gradcheck")
    package = module.gradcheck

    def check(
        fn: Any,
        inputs: Any,
        *,
        eps: float = 1e-6,
        atol: float = 1e-5,
        rtol: float = 1e-3,
        raise_exception: bool = True,
    ) -> bool:
        args = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
        if not all(
            isinstance(a, Tensor) and a.is_floating_point() and a.requires_grad for a in args
        ):
            mine.package_ran("02.9", "inputs that are not all float tensors requiring grad")
            return package(
                fn, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
            )
        ok = bool(learner(fn, args, eps, atol, rtol))
        if not ok and raise_exception:
            raise module.GradcheckError(
                "gradcheck (your exercise 02.9): the analytic gradients differ from central "
                "differences"
            )
        return ok

    mine.patches.replace(module, "gradcheck", check)
