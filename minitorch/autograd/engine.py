"""The backward engine: walk the graph from the outputs to the leaves, once, in order.

It is chapter 02's exercise 02.7 grown up. ``_run`` has the same shape as that walk:

1. ``_dependencies``: count, for every node reachable from the roots, the edges into it.
2. Start from the roots with their gradients. A node runs when every node that feeds it a
   gradient has run (its count dropped to zero), so it sees the *sum* of its gradients.
3. ``_run_node`` calls the node's Function ``backward`` and adds the results into the
   buffers of the nodes on its ``next_functions`` edges; an ``AccumulateGrad`` node adds
   into its leaf's ``.grad`` instead.

What the exercise leaves out sits around that loop: hooks (tensor hooks, retain_grad,
post-accumulate-grad hooks and end-of-backward callbacks, where DDP hooks in), catching
the gradients ``grad()`` returns, checking what ``backward`` returns, and anomaly mode.
Everything is a loop over an explicit list: no recursion, so a 10,000-op chain is fine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backend import array_module
from ..dtypes import from_numpy_dtype, is_floating
from ..function import Function
from ..ops import add, clone, unbroadcast
from ..ops.factory import full
from ..shape import broadcast_shapes
from ..state import anomaly as _anomaly
from ..tensor import Tensor
from .grad_mode import set_grad_enabled
from .graph import AccumulateGrad, Node, leaf_accumulator


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Add the gradient of ``tensors`` (weighted by ``grad_tensors``) into the leaves' ``.grad``.

    ``retain_graph`` (default: ``create_graph``) keeps the saved tensors for another backward;
    ``create_graph`` records the backward itself so the gradients can be differentiated;
    ``inputs`` limits accumulation to those tensors.
    """
    outputs = _as_tuple(tensors)
    create_graph = bool(create_graph)  # (grad mode takes a bool only)
    grads = _make_grads(outputs, _as_tuple(grad_tensors, len(outputs)), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    if inputs is None:
        _run(roots, grads, retain_graph, create_graph)
        return
    targets = _as_tuple(inputs)
    if not targets:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    capture = _Capture(roots, targets)
    _run(roots, grads, retain_graph, create_graph, capture)
    with set_grad_enabled(create_graph):
        for t, g in zip(targets, capture.caught, strict=True):
            if g is not None:
                _accumulate_into(t, g, create_graph, set())


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of ``outputs`` with respect to each of ``inputs``, returned (not
    accumulated into ``.grad``). With ``create_graph=True`` they are differentiable."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    create_graph = bool(create_graph)  # (grad mode takes a bool only)
    grads = _make_grads(outs, _as_tuple(grad_outputs, len(outs)), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outs)]
    capture = _Capture(roots, ins)
    _run(roots, grads, retain_graph, create_graph, capture)
    result = []
    for t, g in zip(ins, capture.caught, strict=True):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"grad: one of the differentiated Tensors (input {len(result)}, shape "
                    f"{t.shape}) appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = full(t.shape, 0.0, t.dtype, t.device, False, "grad")
        result.append(g)
    return tuple(result)


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` once the current backward pass has finished (PyTorch's
    ``Variable._execution_engine.queue_callback``; DDP waits for its last bucket here)."""
    stack = _callbacks.stack
    if not stack:
        raise RuntimeError("queue_callback: can only be called during the backward pass")
    stack[-1].append(callback)


class _Callbacks(threading.local):
    stack: list = []

    def __init__(self) -> None:
        self.stack = []  # one list of callbacks per backward pass in progress (they nest)


_callbacks = _Callbacks()


# --- preparing the roots ----------------------------------------------------------------------
def _as_tuple(value: Any, n: int | None = None) -> tuple:
    if value is None:
        return (None,) * (n or 0) if n is not None else ()
    if isinstance(value, Tensor) or not isinstance(value, (tuple, list)):
        return (value,)
    return tuple(value)


def _root_edge(t: Any, i: int) -> tuple:
    if not isinstance(t, Tensor):
        raise TypeError(f"backward: outputs must be Tensors, got {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError(
            f"element {i} of tensors does not require grad and does not have a grad_fn"
        )
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (leaf_accumulator(t), 0)


def _make_grads(outputs: tuple, grads: tuple, create_graph: bool) -> list:
    """The gradient each output starts with: given, or 1 for a scalar output."""
    for g in grads:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(
                f"backward: gradients must be Tensors or None, but got {type(g).__name__} {g!r:.40}"
            )
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs; got {len(outputs)} "
            f"outputs but {len(grads)} gradients"
        )
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=True)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs (this output has "
                    f"shape {out.shape}; pass a gradient of that shape: "
                    "y.backward(gradient) or autograd.grad(y, x, grad_outputs=...))"
                )
            xp = array_module(out.device)
            g = Tensor._from_array(xp.ones(out.shape, dtype=out._data.dtype))
        elif not isinstance(g, Tensor):
            xp = array_module(out.device)
            g = Tensor._from_array(xp.full(out.shape, g, dtype=out._data.dtype))
        elif g.shape != out.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                f"output[{i}] has a shape of {out.shape}."
            )
        elif g.device != out.device:
            raise RuntimeError(
                f"grad_output[{i}] is on {g.device} but output[{i}] is on {out.device}"
            )
        if not create_graph and g.grad_fn is not None:
            g = g.detach()
        result.append(g)
    return result


class _Capture:
    """For ``grad()`` and ``backward(inputs=...)``: where to catch each input's gradient
    (the edge it flows into), and which nodes are worth running to get there."""

    def __init__(self, root_edges: list, targets: tuple) -> None:
        self.where: dict = {}  # (node, output_nr) -> indices of the targets caught there
        for k, t in enumerate(targets):
            if t.grad_fn is not None:
                self.where.setdefault((t.grad_fn, t._output_nr), []).append(k)
            elif t._requires_grad:
                self.where.setdefault((leaf_accumulator(t), 0), []).append(k)
        self.caught: list = [None] * len(targets)
        roots = [fn for fn, _ in root_edges]
        self.needed = _needed(roots, _dependencies(roots), {fn for fn, _ in self.where})

    def catch(self, fn: Node, grads: list) -> None:
        for nr, g in enumerate(grads):
            for k in self.where.get((fn, nr), ()):
                old = self.caught[k]
                self.caught[k] = g if old is None else add(old, g)


# --- the engine ----------------------------------------------------------------------------------
def _dependencies(roots: Sequence[Any]) -> dict:
    """For every node reachable from the roots: how many edges point into it."""
    deps: dict = {}
    stack = []
    for fn in roots:
        if fn not in deps:
            deps[fn] = 0
            stack.append(fn)
    while stack:
        fn = stack.pop()
        for child, _ in fn.next_functions:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def _needed(roots: list, deps: dict, capture_nodes: set) -> set:
    """The nodes worth running when only ``capture_nodes`` are wanted: those with a path
    down to one of them. (A topological order from Kahn's algorithm, walked backwards.)"""
    remaining = dict(deps)
    ready = [fn for fn in dict.fromkeys(roots) if remaining[fn] == 0]
    order = []
    while ready:
        fn = ready.pop()
        order.append(fn)
        for child, _ in fn.next_functions:
            if child is not None:
                remaining[child] -= 1
                if remaining[child] == 0:
                    ready.append(child)
    needed: set = set()
    for fn in reversed(order):
        for child, _ in fn.next_functions:
            if child is not None and (child in needed or child in capture_nodes):
                needed.add(fn)
                break
    return needed


def _run(
    root_edges: list,
    root_grads: list,
    retain_graph: bool,
    create_graph: bool,
    capture: _Capture | None = None,
) -> None:
    """Run backward from ``root_edges``: the walk of exercise 02.7, with buffers per node."""
    roots = [fn for fn, _ in root_edges]
    deps = _dependencies(roots)
    pending: dict = {}  # node -> one gradient slot per output of the node
    for (fn, nr), g in zip(root_edges, root_grads, strict=True):
        _add_to(pending, fn, nr, g)
    ready = [fn for fn in dict.fromkeys(roots) if deps[fn] == 0]
    run = _Pass(retain_graph, create_graph, capture, {id(g._storage) for g in root_grads})
    # inf and nan are ordinary in backward (the slope of sqrt at 0): anomaly mode, not
    # numpy warnings, is the tool for finding them.
    _callbacks.stack.append([])
    try:
        with set_grad_enabled(create_graph), np.errstate(all="ignore"):
            while ready:
                fn = ready.pop()
                results = run.node(fn, pending.pop(fn, None))
                leaves = []
                for j, (child, nr) in enumerate(fn.next_functions):
                    if child is None:
                        continue
                    if results is not None and results[j] is not None:
                        slots = pending.get(child)
                        if slots is None:
                            slots = pending[child] = [None] * len(child._output_meta)
                        old = slots[nr]
                        slots[nr] = results[j] if old is None else add(old, results[j])
                    deps[child] -= 1
                    if deps[child] == 0:  # every contribution has arrived
                        (leaves if type(child) is AccumulateGrad else ready).append(child)
                # a leaf's gradient is accumulated as soon as it is complete (PyTorch runs
                # AccumulateGrad first), whatever its place among the node's edges
                ready.extend(leaves)
            for callback in _callbacks.stack[-1]:
                callback()
    finally:
        _callbacks.stack.pop()


def _add_to(pending: dict, fn: Any, nr: int, g: Any) -> None:
    """Add ``g`` to the gradient waiting for output ``nr`` of node ``fn``."""
    slots = pending.get(fn)
    if slots is None:
        slots = pending[fn] = [None] * len(fn._output_meta)
    old = slots[nr]
    slots[nr] = g if old is None else add(old, g)


class _Pass:
    """What one backward pass needs at every node: its options, and the storages of
    gradients handed out so far (a new ``.grad`` must not share memory with another)."""

    def __init__(
        self, retain_graph: bool, create_graph: bool, capture: _Capture | None, claimed: set
    ) -> None:
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.capture = capture
        self.claimed = claimed
        self.anomaly = _anomaly.enabled

    def node(self, fn: Any, grads: list | None) -> list | None:
        """Run one node (``_run_node``): hooks, then its backward or the leaf's accumulation.
        Returns the gradients for its ``next_functions`` (None: nothing to pass on)."""
        if grads is None:
            return None
        is_leaf = type(fn) is AccumulateGrad
        if fn._pre_hooks or fn._retained or (is_leaf and fn.variable._hooks):
            grads = _call_pre_hooks(fn, grads, self)
        if self.capture is not None:
            self.capture.catch(fn, grads)
            if is_leaf or fn not in self.capture.needed:
                return None
        if is_leaf:
            if grads[0] is not None:
                _accumulate_into(fn.variable, grads[0], self.create_graph, self.claimed)
            return None
        return _call_backward(fn, grads, self.retain_graph, self.anomaly)


def _call_pre_hooks(fn: Any, grads: list, run: _Pass) -> list:
    """Run the hooks of the tensors this node made (or of the leaf), and retain_grad."""
    if type(fn) is AccumulateGrad:
        hooks = fn.variable._hooks
        if hooks and grads[0] is not None:
            grads = [_run_hooks(hooks, grads[0], fn.variable)]
        return grads
    if fn._pre_hooks:
        grads = list(grads)
        for nr, hooks in fn._pre_hooks.items():
            if hooks and grads[nr] is not None:
                grads[nr] = _run_hooks(hooks, grads[nr], None)
    if fn._retained:
        for nr, ref in fn._retained.items():
            t = ref()
            if t is not None and grads[nr] is not None and t.grad_fn is fn:
                _accumulate_into(t, grads[nr], run.create_graph, run.claimed)
    return grads


def _run_hooks(hooks: dict, g: Any, leaf: Any) -> Any:
    for hook in list(hooks.values()):
        result = hook(g)
        if result is None:
            continue
        if not isinstance(result, Tensor):
            raise TypeError(
                f"backward hook {_hook_name(hook)} returned a {type(result).__name__}; a tensor "
                "hook must return None or a Tensor (the new gradient)"
            )
        if result.shape != g.shape or result.dtype != g.dtype or result.device != g.device:
            raise RuntimeError(
                f"backward hook {_hook_name(hook)} returned a gradient of shape "
                f"{result.shape}, dtype {result.dtype.name}, device {result.device}, but the "
                f"gradient it replaces has shape {g.shape}, dtype {g.dtype.name}, device "
                f"{g.device}"
            )
        g = result
    return g


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__qualname__", type(hook).__name__)


def _call_backward(fn: Any, grads: list, retain_graph: bool, anomaly: bool) -> list:
    """Call the node's Function.backward and check what it returns."""
    if len(grads) > 1:
        grads = _materialize(fn, grads)
    function = type(fn)._function
    if function.backward is Function.backward:
        raise RuntimeError(
            f"{function.__name__} has no backward: define a static method "
            "backward(ctx, grad) that returns one gradient per argument of forward"
        )
    try:
        results = function.backward(fn, *grads)
    except Exception as err:
        if anomaly and fn._trace and hasattr(err, "add_note"):
            err.add_note(_anomaly_note(fn))
        raise
    if not retain_graph:
        fn._release()
    returned_list = isinstance(results, list)
    if not isinstance(results, tuple):
        results = (results,)
    n_args = len(fn.needs_input_grad)
    if len(results) != n_args:
        why = " (it returned a list, which counts as one value: return a tuple)"
        raise RuntimeError(
            f"function {fn.name()} returned an incorrect number of gradients (expected "
            f"{n_args}, got {len(results)}){why if returned_list else ''}: backward returns "
            "one gradient (or None) per argument of forward, as a tuple"
        )
    checked = []
    for pos, meta in zip(fn._input_pos, fn._input_meta, strict=True):
        g = results[pos]
        if g is not None:
            data = getattr(g, "_data", None)
            if data is None or data.shape != meta[0] or data.dtype != meta[1]:
                g = _validate(fn, pos, g, meta)
            if anomaly:
                _check_finite(fn, pos, g)
        checked.append(g)
    return checked


def _materialize(fn: Any, grads: list) -> list:
    """Zeros for differentiable outputs that got no gradient (multi-output nodes)."""
    device = next(g.device for g in grads if g is not None)
    out = []
    for g, (shape, dtype) in zip(grads, fn._output_meta, strict=True):
        if g is None and is_floating(dtype):
            g = full(shape, 0.0, from_numpy_dtype(dtype), device, False, "backward")
        out.append(g)
    return out


def _validate(fn: Any, pos: int, g: Any, meta: tuple) -> Any:
    """A returned gradient must be a Tensor of its input's shape and dtype (a gradient
    that merely broadcasts to that shape is summed back, as PyTorch does)."""
    shape, dtype = meta
    if not isinstance(g, Tensor):
        tuple_please = " as a tuple, not a list" if isinstance(g, list) else ""
        raise TypeError(
            f"function {fn.name()} returned a {type(g).__name__} as gradient {pos}; backward "
            f"must return Tensors (or None){tuple_please}"
        )
    data = g._data
    if data.shape != shape:
        try:
            ok = broadcast_shapes(shape, data.shape) == data.shape
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"Function {fn.name()} returned an invalid gradient at index {pos} - got "
                f"{data.shape} but expected shape compatible with {shape}: a gradient has its "
                "input's shape (a larger one that the input's broadcasts to is summed back; "
                "a smaller one is never grown)"
            )
        g = unbroadcast(g, shape)
    if g._data.dtype != dtype:
        g = g.to(dtype=from_numpy_dtype(dtype))
    return g


def _check_finite(fn: Any, pos: int, g: Any) -> None:
    data = g._data
    xp = array_module(g.device)
    if bool(xp.isfinite(data).all()):
        return
    what = "nan" if bool(xp.isnan(data).any()) else "inf"
    raise RuntimeError(
        f"Function '{fn.name()}' returned {what} values in its {pos}th output.\n"
        + _anomaly_note(fn)
    )


def _anomaly_note(fn: Any) -> str:
    op = type(fn)._function.name
    trace = "".join(fn._trace or ["  (no forward trace: the node was made outside anomaly mode)"])
    return f"The forward op '{op}' that created {fn.name()} was called at:\n{trace}"


def _accumulate_into(t: Any, g: Any, create_graph: bool, claimed: set) -> None:
    """``t.grad += g``, then the tensor's post-accumulate-grad hooks.

    A new .grad never shares memory with another one, the caller's gradient or a broadcast
    view (so in-place updates of one .grad can't leak). An existing .grad is added to in
    place when no graph is being built, so a .grad that is a view into a flat buffer (DDP's
    gradient buckets) stays one.
    """
    old = t.grad
    if old is None:
        if not create_graph:
            if g._requires_grad:
                g = g.detach()
            if id(g._storage) in claimed or not g.is_contiguous():
                g = clone(g)
            claimed.add(id(g._storage))
        t._grad = g
    elif create_graph or old._requires_grad:
        t._grad = add(old, g)
    else:
        old.add_(g)
    if t._post_acc_hooks:
        for hook in list(t._post_acc_hooks.values()):
            hook(t)
