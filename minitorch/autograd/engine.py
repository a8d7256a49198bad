"""The backward engine: walk the graph from the outputs to the leaves, once, in order.

1. Count dependencies: how many edges point into each node reachable from the roots.
2. Start from the roots with their gradients. A node runs when every node that feeds it
   a gradient has run (its count dropped to zero), so it sees the *sum* of its gradients.
3. Running a node calls its Function's ``backward`` and adds the results into the
   buffers of the nodes on its ``next_functions`` edges. ``AccumulateGrad`` nodes add
   into their leaf's ``.grad``.

Everything is a loop over an explicit list: no recursion, so a 10,000-op chain is fine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import anomaly as _anomaly
from . import grad_mode as _grad_mode

# minitorch.function imports this package (for grad mode), so the engine binds the
# classes it needs on first use instead of importing them while they are being defined.
Tensor: Any = None
AccumulateGrad: Any = None
Function: Any = None


def _bind() -> None:
    global Tensor, AccumulateGrad, Function
    from ..function import AccumulateGrad, Function
    from ..tensor import Tensor


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
    _bind()
    outputs = _as_tuple(tensors)
    grads = _make_grads(outputs, _as_tuple(grad_tensors, len(outputs)), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    if inputs is None:
        _run(roots, grads, retain_graph, create_graph, None)
        return
    targets = _as_tuple(inputs)
    if not targets:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    captured = _run(roots, grads, retain_graph, create_graph, _target_edges(targets))
    for t, g in zip(targets, captured, strict=True):
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
    _bind()
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outs, _as_tuple(grad_outputs, len(outs)), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outs)]
    captured = _run(roots, grads, retain_graph, create_graph, _target_edges(ins))
    result = []
    for t, g in zip(ins, captured, strict=True):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                from ..creation import zeros_like

                g = zeros_like(t)
        result.append(g)
    return tuple(result)


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
    return (t._accumulator(), 0)


def _make_grads(outputs: tuple, grads: tuple, create_graph: bool) -> list:
    """The gradient each output starts with: given, or 1 for a scalar output."""
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
            xp = _array_module(out)
            g = Tensor._from_array(xp.ones(out.shape, dtype=out._data.dtype))
        elif not isinstance(g, Tensor):
            xp = _array_module(out)
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


def _array_module(t: Any) -> Any:
    from ..device import array_module

    return array_module(t.device)


def _target_edges(targets: tuple) -> list:
    """Where the gradient of each input tensor can be caught: the (node, output_nr) it
    flows into (for a non-leaf) or its AccumulateGrad (for a leaf)."""
    edges = []
    for t in targets:
        if t.grad_fn is not None:
            edges.append((t.grad_fn, t._output_nr))
        elif t._requires_grad:
            edges.append((t._accumulator(), 0))
        else:
            edges.append((None, 0))
    return edges


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
    targets: list | None,
) -> list:
    """Run backward from ``root_edges``. With ``targets`` (edges), catch the gradient
    arriving at each target and return them instead of accumulating into leaves."""
    roots = [fn for fn, _ in root_edges]
    deps = _dependencies(roots)
    captures: dict = {}
    needed = None
    if targets is not None:
        for k, (fn, nr) in enumerate(targets):
            if fn is not None:
                captures.setdefault((fn, nr), []).append(k)
        needed = _needed(roots, deps, {fn for fn, _ in captures})
    caught: list = [None] * (len(targets) if targets is not None else 0)

    buffers: dict = {}
    for (fn, nr), g in zip(root_edges, root_grads, strict=True):
        _add_grad(buffers, fn, nr, g, create_graph)
    ready = [fn for fn in dict.fromkeys(roots) if deps[fn] == 0]
    claimed: set = {id(g._storage) for g in root_grads}  # storages a leaf .grad may not share
    anomaly = _anomaly._state.enabled

    prev_mode = _grad_mode._state.enabled
    _grad_mode._state.enabled = create_graph
    # inf and nan are ordinary in backward (the slope of sqrt at 0): anomaly mode, not
    # numpy warnings, is the tool for finding them.
    errors = np.errstate(divide="ignore", invalid="ignore", over="ignore")
    errors.__enter__()
    try:
        while ready:
            fn = ready.pop()
            grads = buffers.pop(fn, None)
            is_leaf = type(fn) is AccumulateGrad
            if grads is not None:
                if fn._pre_hooks or fn._retained or (is_leaf and fn.variable._hooks):
                    grads = _call_pre_hooks(fn, grads, claimed, create_graph)
                if captures:
                    for nr, g in enumerate(grads):
                        for k in captures.get((fn, nr), ()):
                            caught[k] = g if caught[k] is None else caught[k] + g
            if is_leaf:
                if grads is not None and grads[0] is not None and targets is None:
                    _accumulate_into(fn.variable, grads[0], create_graph, claimed)
                continue
            results = None
            if grads is not None and (needed is None or fn in needed):
                results = _call_backward(fn, grads, retain_graph, anomaly)
            # Pass each input gradient down its edge; a node is ready once all its
            # gradient contributions have arrived (that is what the counts are for).
            for j, (child, nr) in enumerate(fn.next_functions):
                if child is None:
                    continue
                if results is not None:
                    g = results[j]
                    if g is not None:
                        slots = buffers.get(child)
                        if slots is None:
                            slots = buffers[child] = [None] * len(child._output_meta)
                        old = slots[nr]
                        slots[nr] = g if old is None else _sum(old, g, create_graph)
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    ready.append(child)
    finally:
        errors.__exit__(None, None, None)
        _grad_mode._state.enabled = prev_mode
    return caught


def _add_grad(buffers: dict, fn: Any, nr: int, g: Any, create_graph: bool) -> None:
    """Add ``g`` to the gradient waiting for output ``nr`` of node ``fn``."""
    slots = buffers.get(fn)
    if slots is None:
        slots = buffers[fn] = [None] * len(fn._output_meta)
    old = slots[nr]
    slots[nr] = g if old is None else _sum(old, g, create_graph)


def _sum(old: Any, g: Any, create_graph: bool) -> Any:
    """Two gradient contributions added (recorded only when building a graph of backward)."""
    if create_graph:
        return old + g
    return Tensor._from_array(old._data + g._data)


def _call_pre_hooks(fn: Any, grads: list, claimed: set, create_graph: bool) -> list:
    """Run the hooks of the tensors this node made (or of the leaf), and retain_grad."""
    if type(fn) is AccumulateGrad:
        hooks = fn.variable._hooks
        if hooks and grads[0] is not None:
            grads = [_run_hooks(hooks, grads[0])]
        return grads
    if fn._pre_hooks:
        grads = list(grads)
        for nr, hooks in fn._pre_hooks.items():
            if hooks and grads[nr] is not None:
                grads[nr] = _run_hooks(hooks, grads[nr])
    if fn._retained:
        for nr, ref in fn._retained.items():
            t = ref()
            if t is not None and grads[nr] is not None and t.grad_fn is fn:
                _accumulate_into(t, grads[nr], create_graph, claimed)
    return grads


def _run_hooks(hooks: dict, g: Any) -> Any:
    for hook in list(hooks.values()):
        result = hook(g)
        if result is not None:
            g = result
    return g


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
    if not isinstance(results, tuple):
        results = (results,)
    n_args = len(fn.needs_input_grad)
    if len(results) != n_args:
        raise RuntimeError(
            f"function {fn.name()} returned an incorrect number of gradients (expected "
            f"{n_args}, got {len(results)}): backward returns one gradient (or None) per "
            "argument of forward"
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
        if g is None and dtype.kind == "f":
            from ..creation import zeros

            g = zeros(shape, dtype=dtype, device=device)
        out.append(g)
    return out


def _validate(fn: Any, pos: int, g: Any, meta: tuple) -> Any:
    """A returned gradient must be a Tensor of its input's shape and dtype (a gradient
    that merely broadcasts to that shape is summed back, as PyTorch does)."""
    shape, dtype = meta
    if not isinstance(g, Tensor):
        raise TypeError(
            f"function {fn.name()} returned a {type(g).__name__} as gradient {pos}; backward "
            "must return Tensors (or None)"
        )
    data = g._data
    if data.shape != shape:
        from ..ops import unbroadcast
        from ..shape import broadcast_shapes

        try:
            ok = broadcast_shapes(shape, data.shape) == data.shape
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"Function {fn.name()} returned an invalid gradient at index {pos} - got "
                f"{data.shape} but expected shape compatible with {shape}"
            )
        g = unbroadcast(g, shape)
    if g._data.dtype != dtype:
        from ..dtypes import from_numpy_dtype

        g = g.to(dtype=from_numpy_dtype(dtype))
    return g


def _check_finite(fn: Any, pos: int, g: Any) -> None:
    data = g._data
    xp = _array_module(g)
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
    """``t.grad += g``. A new .grad never shares memory with another one, the caller's
    gradient or a broadcast view (so in-place updates of one .grad can't leak)."""
    old = t.grad
    if old is None:
        if create_graph:
            t.grad = g
            return
        if g._requires_grad:
            g = g.detach()
        if id(g._storage) in claimed or not g.is_contiguous():
            g = Tensor._from_array(g._data.copy())
        claimed.add(id(g._storage))
        t.grad = g
    elif create_graph or old._requires_grad:
        t.grad = old + g
    else:
        old._data += g._data
        old._storage.version += 1
