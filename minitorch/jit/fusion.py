"""Elementwise fusion: a chain of elementwise ops becomes one ``fused`` node.

Eager mode runs ``0.5 * x * (1 + tanh(c * (x + 0.044715 * x**3)))`` as nine ops: nine trips
through ``Function.apply`` and nine freshly allocated arrays, each written to memory and
read back by the next op. A fused node runs the whole chain as one generated function
that writes into a few preallocated buffers.

**The fused node's representation** (what chapter 07's GPU code generator reads): the
node's ``target`` is a ``FusedKernel``:

- ``inputs``: one ``(dtype, shape)`` per tensor input, in the node's argument order; each
  input's shape broadcasts to ``shape``;
- ``ops``: the elementwise ops in order, each an ``ElementwiseOp(op, args)``: ``op`` is a
  Function op name from ``ops.ELEMENTWISE`` (``"mul"``, ``"tanh"``, ...) and each arg is
  ``("input", i)`` (kernel input ``i``), ``("op", j)`` (the result of op ``j``) or a Python
  number;
- ``outputs``: which ops' results leave the kernel (the node's outputs, in order);
- ``shape`` and ``dtype``: every op's result has this shape and floating dtype;
- ``op_shapes``: None, or (in a row-local kernel, see ``rows.py``) each op's own shape:
  a ``mean``/``sum`` over trailing dims (its args: the ref, the dims, ``True``) and the ops
  on its result have the rows of ``shape`` and 1 in the reduced dims.

So a kernel computes, for every output element, ``ops`` in order on scalars and stores
the ``outputs``: on the CPU that is ``numpy_source()`` (whole-array ufuncs with ``out=``,
a row-local kernel's reductions per chunk of rows), on the GPU one thread per element.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..autograd import enable_grad, is_grad_enabled
from ..autograd import grad as autograd_grad
from ..function import Context, Function, kernel_for
from ..ops.registry import register
from ..ops.scalar import array_call, erf_array
from ..tensor import Tensor
from .buffers import Reuse
from .fused_backward import backward_source, gradient_flows, spread, sum_to, worth_keeping
from .interpreter import _reads
from .ir import Graph, Node, Value, as_graph, mutated_values
from .ops import ELEMENTWISE, function_for, is_pure, is_ref
from .rows import REDUCTIONS, row_regions


def _reducers() -> dict:
    """``_reduce_mean`` etc. for the generated code: each reduction's own forward."""
    return {f"_reduce_{name}": _array_forward(function_for(name)) for name in REDUCTIONS}


@dataclass(frozen=True)
class ElementwiseOp:
    """One op of a fused kernel: ``op`` applied to ``args`` (refs or Python numbers)."""

    op: str
    args: tuple

    def __str__(self) -> str:
        def show(a: Any) -> str:
            if not is_ref(a):
                return repr(a)
            return f"in{a[1]}" if a[0] == "input" else f"t{a[1]}"

        return f"{self.op}({', '.join(show(a) for a in self.args)})"


@dataclass(eq=False)
class FusedKernel:
    """A fused chain of elementwise ops (see the module docstring)."""

    name: str
    inputs: tuple  # ((dtype name, shape), ...)
    ops: tuple  # (ElementwiseOp, ...)
    outputs: tuple  # (op index, ...)
    shape: tuple
    dtype: str
    op_shapes: tuple | None = None
    # what running it builds up (its code, buffers, variants): never copied by replace()
    _compiled: Any = field(default=None, init=False, repr=False)
    _scratch: Any = field(default_factory=threading.local, init=False, repr=False)
    _buffers: Any = field(default=None, init=False, repr=False)
    _backwards: dict = field(default_factory=dict, init=False, repr=False)
    _arrays: Reuse = field(default_factory=Reuse, init=False, repr=False)  # outputs to hand out
    _keeps: dict = field(default_factory=dict, init=False, repr=False)
    _variants: dict = field(default_factory=dict, init=False, repr=False)

    def __call__(self, *args: Any) -> Any:
        """Run as a graph node (the interpreter calls a ``fused`` node's target): the fused
        code; in training on the CPU it also keeps the few results that backward would
        recompute at a cost, and backward is generated code too (:meth:`run_backward`)."""
        if is_grad_enabled() and _trains_here(args):
            needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
            return FusedElementwiseKept.apply(*args, kernel=self, keep=self._keep(needs))
        return FusedElementwise.apply(*args, kernel=self)

    def _keep(self, needs: tuple) -> frozenset:
        if needs not in self._keeps:
            self._keeps[needs] = worth_keeping(self, needs)
        return self._keeps[needs]

    def keeping(self, keep: frozenset) -> FusedKernel:
        """This kernel with the results of the ops in ``keep`` as outputs too (after its
        own outputs, those not among them already, in op order)."""
        extra = tuple(j for j in sorted(keep) if j not in self.outputs)
        if not extra:
            return self
        if extra not in self._variants:
            self._variants[extra] = replace(
                self, name=f"{self.name}_keep", outputs=self.outputs + extra
            )
        return self._variants[extra]

    def summary(self) -> str:
        return ", ".join(op.op for op in self.ops)

    def op_shape(self, j: int) -> tuple:
        """The shape of op ``j``'s result."""
        return tuple(self.shape if self.op_shapes is None else self.op_shapes[j])

    @property
    def row_local(self) -> bool:
        """Does the kernel reduce (so that it runs by whole rows, never flat slices)?"""
        return self.op_shapes is not None and any(
            tuple(s) != tuple(self.shape) for s in self.op_shapes
        )

    def run_by_ops(self, arrays: tuple) -> tuple:
        """The outputs by each op's own forward, one after another, on arrays of any
        backend (what a GPU runs for a row-local kernel, which it has no generator for)."""
        values = _forward_values(self, list(arrays))[0]
        return tuple(values[j] for j in self.outputs)

    def numpy_source(self) -> str:
        """The generated numpy function: ufuncs writing into preallocated buffers."""
        return _numpy_source(self)

    def run(self, arrays: tuple) -> tuple:
        """Compute the outputs (fresh arrays) from the input arrays, in cache-sized chunks
        where the arrays are too big for the cache (see :func:`chunk_plan`), the chunks
        shared out among the cores (see :func:`run_chunks`)."""
        if self._compiled is None:
            namespace = {"np": np, "_erf": erf_array, **_reducers()}
            exec(compile(self.numpy_source(), f"<fused kernel {self.name}>", "exec"), namespace)
            self._compiled = namespace[f"fused_{self.name}"]
        shape, dtype = tuple(self.shape), np.dtype(self.dtype)
        outs = tuple(self._arrays.empty(self.op_shape(j), dtype) for j in self.outputs)
        plan = chunk_plan(self, arrays)
        if plan is None:
            self._compiled(self._buffers_here(), outs, shape, *arrays)
            return outs
        run_chunks(self._run_chunk, list(_chunks(plan, shape, arrays, outs)))
        return outs

    def _buffers_here(self) -> dict:
        """This thread's scratch buffers (kept from call to call, by shape)."""
        scratch = getattr(self._scratch, "buffers", None)
        if scratch is None:
            scratch = self._scratch.buffers = {}
        return scratch

    def _run_chunk(self, step: tuple) -> None:
        outs, shape, inputs = step
        self._compiled(self._buffers_here(), outs, shape, *inputs)

    def backward_source(self, needs: tuple, graded: tuple) -> str | None:
        """The generated backward (``fused_backward.py``) for the inputs ``needs`` marks,
        given gradients of the outputs ``graded`` marks; None where an op has no gradient
        formula."""
        found = self._backward(needs, graded)
        return None if found is None else found[0].source

    def _backward(self, needs: tuple, graded: tuple, kept: frozenset = frozenset()) -> Any:
        """``(Backward, its function)``, made once per kind of call; None where an op has
        no gradient formula."""
        key = (tuple(needs), tuple(graded), kept)
        if key not in self._backwards:
            made = backward_source(self, key[0], key[1], kept)
            if made is not None:
                namespace = {"np": np, "_erf": erf_array, "_sum_to": sum_to, "_spread": spread}
                namespace.update(_reducers())
                namespace.update(inf=float("inf"), nan=float("nan"))
                exec(compile(made.source, f"<fused backward {self.name}>", "exec"), namespace)
                made = (made, namespace[f"fused_backward_{self.name}"])
            self._backwards[key] = made
        return self._backwards[key]

    def run_backward(
        self, arrays: tuple, grads: tuple, needs: tuple, kept: dict | None = None
    ) -> tuple | None:
        """The gradients of the inputs ``needs`` marks (None for the others) from those of
        the outputs (``grads``, None where an output has none), by the generated backward,
        in chunks like forward; ``kept`` maps ops to their results where forward kept
        them. None where it can't run (an op without a gradient formula, arrays that are
        not numpy's, a gradient of another dtype or shape)."""
        dtype = np.dtype(self.dtype)
        kept = kept or {}
        given = tuple(g for g in grads if g is not None)
        if not all(type(a) is np.ndarray for a in (*arrays, *given)) or not given:
            return None
        for j, g in zip(self.outputs, grads, strict=True):
            if g is not None and (g.dtype != dtype or g.shape != self.op_shape(j)):
                return None
        found = self._backward(needs, tuple(g is not None for g in grads), frozenset(kept))
        if found is None:
            return None
        count, fn = found[0].scratch, found[1]
        given += tuple(kept[j] for j in sorted(kept))
        shape = tuple(self.shape)
        wanted = [i for i, n in enumerate(needs) if n]
        result = {i: self._arrays.empty(arrays[i].shape, dtype) for i in wanted}
        ins = (*arrays, *given)
        live = len(wanted) + count + sum(_is_full(a, shape) for a in ins)
        plan = chunk_plan(self, ins, live)
        scratch = self._backward_buffers_here
        if plan is None:
            fn(scratch(), [result.get(i) for i in range(len(arrays))], shape, *ins)
            return tuple(result.get(i) for i in range(len(arrays)))
        steps, partials = [], {i: [] for i in wanted if not _sliced(plan, arrays[i], shape)}
        for (start, stop), (_, chunk_shape, chunk_in) in zip(
            _bounds(plan, shape), _chunks(plan, shape, ins, ()), strict=True
        ):
            targets: list[Any] = [None] * len(arrays)
            for i in wanted:
                if i in partials:  # (broadcast along the chunks: one partial sum each)
                    targets[i] = np.empty(arrays[i].shape if plan[0] == "rows" else (), dtype)
                    partials[i].append(targets[i])
                elif plan[0] == "flat":
                    targets[i] = result[i].reshape(-1)[start:stop]
                else:
                    targets[i] = result[i][start:stop]
            steps.append((targets, chunk_shape, chunk_in))
        run_chunks(lambda step: fn(scratch(), step[0], step[1], *step[2]), steps)
        for i, parts in partials.items():  # in chunk order, whichever thread ran which
            total = parts[0].copy()
            for p in parts[1:]:
                total += p
            result[i][...] = total.reshape(result[i].shape)
        return tuple(result.get(i) for i in range(len(arrays)))

    def _backward_buffers_here(self) -> dict:
        scratch = getattr(self._scratch, "backward", None)
        if scratch is None:
            scratch = self._scratch.backward = {}
        return scratch

    def reference(self, inputs: list[Tensor]) -> list[Tensor]:
        """The same computation with minitorch ops, one ``Function.apply`` each (used for
        the backward pass, and to test the generated code against)."""
        results: list[Tensor] = []
        for op in self.ops:
            args = [
                (inputs[a[1]] if a[0] == "input" else results[a[1]]) if is_ref(a) else a
                for a in op.args
            ]
            results.append(function_for(op.op).apply(*args))
        return [results[j] for j in self.outputs]


# --- the generated code -------------------------------------------------------------------


def _numpy_source(k: FusedKernel) -> str:
    """The kernel as a numpy function ``fused_<name>(scratch, outs, shape, *inputs)`` that
    writes its outputs into ``outs`` (arrays of ``shape``: the whole output, or a chunk of
    it) with ufuncs' ``out=``. Linear-scan buffer allocation: an op writes into a scratch
    buffer (kept in ``scratch`` per shape, from call to call) freed by an earlier op's last
    use (possibly its own input's: ufuncs may write over what they read), or into its
    output when its result leaves the kernel."""
    last_use = {}
    for j, op in enumerate(k.ops):
        for a in op.args:
            if is_ref(a) and a[0] == "op":
                last_use[a[1]] = j
    outputs = {j: i for i, j in reversed(list(enumerate(k.outputs)))}
    free: list[str] = []
    where: dict[int, str] = {}
    inputs = ", ".join(f"in{i}" for i in range(len(k.inputs)))
    lines = [f"def fused_{k.name}(scratch, outs, shape{', ' if inputs else ''}{inputs}):"]
    dtype = k.dtype
    scratch_count = 0
    for j, op in enumerate(k.ops):
        args = [
            (f"in{a[1]}" if a[0] == "input" else where[a[1]]) if is_ref(a) else repr(a)
            for a in op.args
        ]
        for a in op.args:  # inputs read for the last time free their buffer for this op
            if is_ref(a) and a[0] == "op" and last_use[a[1]] == j:
                name = where[a[1]]
                if name.startswith("s") and name not in free:
                    free.append(name)
        if op.op in REDUCTIONS or k.op_shape(j) != tuple(k.shape):
            # a row-local kernel's reduction, or an op on the reduced (small) results: a
            # fresh small array per chunk (the op's own forward for a reduction)
            where[j] = f"r{j}"
            if op.op in REDUCTIONS:
                lines.append(f"    r{j} = _reduce_{op.op}({', '.join(args)})")
            else:
                lines.append(f"    r{j} = {array_call(function_for(op.op).scalar, args, 'np')}")
            continue
        if j in outputs:
            buf = f"o{j}"
            lines.append(f"    {buf} = outs[{outputs[j]}]")
        elif free:
            buf = free.pop()
        else:
            buf = f"s{scratch_count}"
            scratch_count += 1
            key = f"({buf!r}, shape)"
            lines.append(f"    {buf} = scratch.get({key})")
            lines.append(f"    if {buf} is None:")
            lines.append(f"        {buf} = scratch[{key}] = np.empty(shape, np.{dtype})")
        lines.append(f"    {array_call(function_for(op.op).scalar, args, 'np', buf)}")
        where[j] = buf
    for i, j in enumerate(k.outputs):  # an output that is also an earlier output's copy
        if where[j] != f"o{j}" or outputs[j] != i:
            lines.append(f"    np.copyto(outs[{i}], {where[j]})")
    lines.append("    return outs")
    return "\n".join(lines) + "\n"


# --- chunks: what keeps the intermediates in the cache -----------------------------------

#: Bytes of all the arrays one chunk step streams through (inputs, scratch buffers,
#: outputs): a core's share of the caches (measured on this project's 2-core machines, L2
#: 1 MiB per core and a shared L3: 1-2 MiB per step ran a 10-op chain fastest, 2-3x faster
#: than whole arrays; 64-256 KiB steps pay numpy's per-call cost too often).
CHUNK_BYTES = 2 * 1024 * 1024
#: The fewest elements in a chunk: each ufunc call costs about a microsecond, which a chunk
#: this big (about 30 us of work per op) pays back.
MIN_CHUNK = 32 * 1024
#: Kernels whose arrays all together fit in this many bytes run whole (one call).
WHOLE_BYTES = 2 * CHUNK_BYTES


def _is_full(a: Any, shape: tuple) -> bool:
    return isinstance(a, np.ndarray) and a.shape == shape


def _single(a: Any) -> bool:
    return not isinstance(a, np.ndarray) or a.size == 1


def _as_single(a: Any) -> Any:
    """A one-element array as a 0-d one, which broadcasts against a flat chunk."""
    return a.reshape(()) if isinstance(a, np.ndarray) else a


def _rows(a: Any, ndim: int, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of an input that broadcasts to the kernel's shape: sliced where
    it has the kernel's leading dim, whole where it broadcasts along it."""
    if not isinstance(a, np.ndarray) or a.ndim < ndim or a.shape[0] == 1:
        return a
    return a[start:stop]


def chunk_plan(k: FusedKernel, arrays: tuple, live: int | None = None) -> tuple[str, int] | None:
    """How to run ``k`` on ``arrays``: None (whole arrays, one call: small kernels),
    ``("flat", n)`` (``n`` elements at a time, when every input is the output's shape or a
    single value) or ``("rows", n)`` (``n`` rows of the leading dim at a time).

    A chunk is sized so that every array it touches (its inputs' slices, the scratch
    buffers and its outputs: ``live`` arrays of the kernel's shape, the forward's count
    unless given) fits in :data:`CHUNK_BYTES` together; chosen from the kernel alone, never
    by timing."""
    shape = tuple(k.shape)
    size = int(np.prod(shape)) if shape else 1
    itemsize = np.dtype(k.dtype).itemsize
    # the arrays a chunk step streams through: outputs, scratch buffers, and the inputs of
    # the output's size (a broadcast row or column is small and stays in the cache)
    if live is None:
        live = len(k.outputs) + _scratch_buffers(k) + sum(_is_full(a, shape) for a in arrays)
    if size * itemsize * live <= WHOLE_BYTES or not shape:
        return None
    elements = max(CHUNK_BYTES // (live * itemsize), MIN_CHUNK)
    flat = all(_is_full(a, shape) and a.flags.c_contiguous or _single(a) for a in arrays)
    if flat and not k.row_local:  # (a reduction needs its whole rows)
        return "flat", elements
    row = size // shape[0] if shape[0] else 0
    if shape[0] < 2 or row == 0 or row * 2 > elements * 4:
        return None  # rows too big to chunk by (a few huge rows): whole arrays
    return "rows", max(elements // row, 1)


def _bounds(plan: tuple[str, int], shape: tuple):
    """Each chunk's ``(start, stop)``: flat elements or leading rows, as ``_chunks``."""
    how, step = plan
    size = int(np.prod(shape)) if how == "flat" else shape[0]
    for start in range(0, size, step):
        yield start, min(start + step, size)


def _sliced(plan: tuple[str, int], a: Any, shape: tuple) -> bool:
    """Is ``a`` cut into the chunks (else every chunk reads all of it)?"""
    if plan[0] == "flat":
        return _is_full(a, shape)
    return isinstance(a, np.ndarray) and a.ndim == len(shape) and a.shape[0] != 1


def _chunks(plan: tuple[str, int], shape: tuple, arrays: tuple, outs: tuple):
    """The steps of a chunk plan: ``(output slices, chunk shape, input slices)`` each."""
    how, step = plan
    if how == "flat":  # every input is the whole shape (contiguous) or a single value
        full = [_is_full(a, shape) for a in arrays]
        flat_in = [a.reshape(-1) if f else _as_single(a) for a, f in zip(arrays, full, strict=True)]
        flat_out = [o.reshape(-1) for o in outs]
        size = int(np.prod(shape))
        for start in range(0, size, step):
            stop = min(start + step, size)
            chunk = tuple(a[start:stop] if f else a for a, f in zip(flat_in, full, strict=True))
            yield tuple(o[start:stop] for o in flat_out), (stop - start,), chunk
        return
    for start in range(0, shape[0], step):
        stop = min(start + step, shape[0])
        chunk = tuple(_rows(a, len(shape), start, stop) for a in arrays)
        yield tuple(o[start:stop] for o in outs), (stop - start, *shape[1:]), chunk


# --- the cores: chunks are independent, so they run at once ------------------------------

_pool: Any = None
_pool_key: tuple = ()


def _threads() -> int:
    """How many threads a fused kernel's chunks may use: ``set_num_threads``'s count, else
    the CPUs this process may run on."""
    from .. import threads

    if threads._threads is not None:
        return threads._threads
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def run_chunks(run: Any, steps: list) -> None:
    """``run(step)`` for every step, the steps split into contiguous runs, one per thread
    (numpy releases the GIL inside a ufunc, so the threads compute at once; each thread
    has its own scratch buffers). Fewer than four chunks, or one thread: in this thread."""
    workers = min(_threads(), len(steps) // 2)  # (two steps a thread at least: handing
    if workers < 2:  # one chunk to another thread costs about what it saves)
        for step in steps:
            run(step)
        return
    global _pool, _pool_key
    key = (os.getpid(), workers)
    if _pool_key != key:  # (a forked child, or another thread count: a new pool)
        if _pool is not None and _pool_key[0] == os.getpid():
            _pool.shutdown(wait=False)
        _pool = ThreadPoolExecutor(max_workers=workers - 1, thread_name_prefix="fused")
        _pool_key = key
    share = -(-len(steps) // workers)
    parts = [steps[i : i + share] for i in range(0, len(steps), share)]

    def run_all(part: list) -> None:
        for step in part:
            run(step)

    futures = [_pool.submit(run_all, part) for part in parts[1:]]
    try:
        run_all(parts[0])
    finally:
        wait(futures)  # (every chunk is done or failed before the outputs are handed on)
    for f in futures:
        f.result()


def _scratch_buffers(k: FusedKernel) -> int:
    """How many scratch buffers the generated code uses."""
    if k._buffers is None:
        k._buffers = k.numpy_source().count("= scratch.get(")
    return k._buffers


# --- running it, differentiably -----------------------------------------------------------


class FusedElementwise(Function):
    """Runs a FusedKernel. Backward is the kernel's generated backward on numpy arrays
    (``FusedKernel.run_backward``: the chain's intermediates recomputed chunk by chunk and
    the gradient formulas run on them in the same pass); elsewhere (another backend's
    arrays, an op without a gradient formula) it recomputes the intermediates by each
    op's own pure forward and runs each op's own backward in reverse on them. With
    ``create_graph`` it differentiates the chain rebuilt from minitorch ops instead, so
    that its gradient is differentiable too. It keeps nothing but the inputs between
    forward and backward (rematerialization); in training on the CPU the kernel runs as
    :class:`FusedElementwiseKept` instead, which also keeps the few results costly to
    recompute."""

    name = "fused_elementwise"

    @staticmethod
    def forward(*arrays: Any, kernel: FusedKernel) -> Any:
        outs = kernel.run(arrays)
        return outs[0] if len(outs) == 1 else outs

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any, kernel: FusedKernel) -> None:
        ctx.kernel = kernel
        ctx.save_for_backward(*inputs)
        _mark_grad_free(ctx, kernel, output)

    @staticmethod
    def backward(ctx: Context, *grads: Any) -> tuple:
        return _fused_backward(ctx, ctx.saved_tensors, grads)


def _fused_backward(ctx: Context, inputs: tuple, grads: tuple, kept: dict | None = None) -> tuple:
    """A fused node's backward (see :class:`FusedElementwise`); ``kept``: the results
    forward kept, by op (training's :class:`FusedElementwiseKept`)."""
    needs = ctx.needs_input_grad
    if not is_grad_enabled():
        found = ctx.kernel.run_backward(
            tuple(t._data for t in inputs),
            tuple(None if g is None else g._data for g in grads),
            needs,
            kept,
        )
        if found is not None:
            return tuple(None if f is None else Tensor._from_array(f) for f in found)
        return _backward_by_ops(ctx.kernel, inputs, needs, grads)
    # create_graph: the chain rebuilt on the saved inputs themselves, so that the
    # gradient is connected to them and can be differentiated again
    with enable_grad():
        outs = ctx.kernel.reference(list(inputs))
    pairs = [(o, g) for o, g in zip(outs, grads, strict=True) if g is not None]
    wanted = [t for t, n in zip(inputs, needs, strict=True) if n]
    found = autograd_grad(
        [o for o, _ in pairs],
        wanted,
        [g for _, g in pairs],
        allow_unused=True,
        create_graph=True,
    )
    it = iter(found)
    return tuple(next(it) if n else None for n in needs)


def _trains_here(args: tuple) -> bool:
    """Some input needs a gradient, and no backend has its own kernel for the fused node
    (chapter 07's one-launch GPU kernel, which must run as it is): numpy's arrays."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not any(t.requires_grad for t in tensors):
        return False
    return kernel_for(FusedElementwise, [t._data for t in tensors]) is FusedElementwise.forward


class FusedElementwiseKept(Function):
    """A FusedKernel in training on the CPU: forward runs the fused code and also writes
    out the results of the ops in ``keep`` (what backward would recompute at a cost:
    transcendental ops, reductions, per-row values; see ``fused_backward.worth_keeping``),
    and backward is the generated backward on them, recomputing the rest chunk by chunk.
    With ``create_graph``, backward is ``FusedElementwise``'s."""

    name = "fused_elementwise_kept"

    @staticmethod
    def forward(ctx: Context, *arrays: Any, kernel: FusedKernel, keep: frozenset) -> Any:
        variant = kernel.keeping(keep)
        outs = variant.run(arrays)
        n = len(kernel.outputs)
        # (saved as autograd saves: an output written in place since refuses backward)
        ctx.kernel, ctx.kept_ops, ctx.inputs_count = kernel, variant.outputs, len(arrays)
        ctx.save_for_backward(*arrays, *outs)
        _mark_grad_free(ctx, kernel, outs[:n])
        return outs[0] if n == 1 else outs[:n]

    @staticmethod
    def backward(ctx: Context, *grads: Any) -> tuple:
        saved = ctx.saved_tensors
        inputs, kept = saved[: ctx.inputs_count], saved[ctx.inputs_count :]
        by_op = dict(zip(ctx.kept_ops, (t._data for t in kept), strict=True))
        return _fused_backward(ctx, inputs, grads, by_op if not is_grad_enabled() else None)


def _mark_grad_free(ctx: Context, kernel: FusedKernel, outs: Any) -> None:
    """Outputs that depend on no input wanting a gradient do not require grad, as in eager
    (``y = x * 2`` of an ``x`` without grad), though other outputs of the node do."""
    if not isinstance(outs, tuple) or not any(ctx.needs_input_grad):
        return
    flows = gradient_flows(kernel, ctx.needs_input_grad)
    free = [o for o, j in zip(outs, kernel.outputs, strict=True) if not flows[j]]
    if free:
        ctx.mark_non_differentiable(*free)


def _array_forward(cls: type[Function]) -> Any:
    """An op's forward on arrays: its pure forward, or forward with a fresh Context."""
    if cls.setup_context is not None:
        return cls.forward
    return lambda *args: cls.forward(Context(), *args)


def _forward_values(kernel: FusedKernel, arrays: list) -> tuple[list, list]:
    """Every op's result on arrays, by its own forward (no ``apply``, no graph), and the
    Context a forward that takes one filled (None for pure ones)."""
    values: list[Any] = []
    contexts: list[Any] = []
    for op in kernel.ops:
        cls = function_for(op.op)
        args = [
            (arrays[a[1]] if a[0] == "input" else values[a[1]]) if is_ref(a) else a for a in op.args
        ]
        if cls.setup_context is not None:
            values.append(cls.forward(*args))
            contexts.append(None)
        else:
            ctx = Context()
            values.append(cls.forward(ctx, *args))
            contexts.append(ctx)
    return values, contexts


def _backward_by_ops(kernel: FusedKernel, inputs: tuple, needs: tuple, grads: tuple) -> tuple:
    """The gradients of the kernel's inputs: its chain recomputed on arrays, then each op's
    ``setup_context`` and ``backward`` (the very code eager autograd runs) in reverse."""
    arrays = [t._data for t in inputs]
    values, contexts = _forward_values(kernel, arrays)

    def operands(op: ElementwiseOp) -> list:
        return [
            (arrays[a[1]] if a[0] == "input" else values[a[1]]) if is_ref(a) else a for a in op.args
        ]

    flows = gradient_flows(kernel, needs)
    grad_of: dict[int, Any] = {}
    for j, g in zip(kernel.outputs, grads, strict=True):
        if g is not None:
            grad_of[j] = g if j not in grad_of else grad_of[j] + g
    found: list[Any] = [None] * len(inputs)
    for j in reversed(range(len(kernel.ops))):
        g = grad_of.pop(j, None)
        if g is None or not flows[j]:
            continue
        op, cls = kernel.ops[j], function_for(kernel.ops[j].op)
        args = operands(op)
        wants = tuple(
            is_ref(a) and (needs[a[1]] if a[0] == "input" else flows[a[1]]) for a in op.args
        )
        ctx = contexts[j]
        if ctx is None:
            ctx = Context(wants)
            ctx.inputs, ctx.raw = args, values[j]
            cls.setup_context(ctx, tuple(args), values[j])
        else:
            ctx.needs_input_grad = wants
        ctx.saved = tuple(
            Tensor._from_array(v)
            if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, Tensor)
            else v
            for v in ctx.saved
        )
        result = cls.backward(ctx, g)
        result = result if isinstance(result, tuple) else (result,)
        for a, r, want in zip(op.args, result, wants, strict=False):
            if r is None or not want:
                continue
            if a[0] == "op":
                grad_of[a[1]] = r if a[1] not in grad_of else grad_of[a[1]] + r
            else:
                found[a[1]] = r if found[a[1]] is None else found[a[1]] + r
    return tuple(f if n else None for f, n in zip(found, needs, strict=True))


# --- the pass -----------------------------------------------------------------------------


def fusible(node: Node, mutated: set[Value] = frozenset()) -> bool:
    """An elementwise Function op on floating tensors of one dtype, shapes known."""
    if node.op not in ELEMENTWISE or len(node.outputs) != 1 or node.kwargs:
        return False
    out = node.outputs[0]
    if (
        out.type != "Tensor"
        or out.shape is None
        or out.dtype not in ("float16", "float32", "float64")
    ):
        return False
    for a in node.args:
        if isinstance(a, Value):
            if a.type != "Tensor" or a.dtype != out.dtype or a in mutated:
                return False
        elif not isinstance(a, (int, float)) or isinstance(a, bool):
            return False
    return True


def group_elementwise(graph: Graph) -> list[list[Node]]:
    """Groups of top-level nodes to fuse: chains of fusible ops with one output shape.

    Walking the nodes in order, a fusible node joins the group that made one of its
    inputs (same shape), and groups it connects are merged, unless that would make a
    group read, through some other node, what it computes itself (a cycle). Groups of
    one node are not worth fusing.
    """
    mutated = mutated_values(graph)
    parent: list[int] = []  # union-find over group numbers

    def find(g: int) -> int:
        while parent[g] != g:
            g = parent[g]
        return g

    members: dict[int, list[Node]] = {}
    needs: dict[int, set[int]] = {}  # group -> groups its outside inputs depend on
    group_of: dict[Value, int] = {}
    depends: dict[Value, set[int]] = {}  # value -> groups it depends on

    def deps_of(v: Value) -> set[int]:
        return {find(g) for g in depends.get(v, ())}

    for node in graph.nodes:
        if not fusible(node, mutated):
            deps: set[int] = set()
            for v in node.inputs:
                deps |= deps_of(v)
            for v in node.outputs:
                depends[v] = deps
            continue
        shape = node.outputs[0].shape
        candidates = []
        for v in node.inputs:
            g = find(group_of[v]) if v in group_of else None
            if g is not None and g not in candidates and members[g][0].outputs[0].shape == shape:
                candidates.append(g)
        outside = [
            v for v in node.inputs if v not in group_of or find(group_of[v]) not in candidates
        ]
        outside_deps: set[int] = set()
        for v in outside:
            outside_deps |= deps_of(v)

        def needed_by(h: int) -> set[int]:
            return {find(x) for x in needs[h]}

        # The node may join a candidate group that no other input depends on (else that
        # input would be computed from the group and fed back into it: a cycle); all such
        # groups are independent of each other, so they merge into one.
        usable = [
            g
            for g in candidates
            if g not in outside_deps and not any(g in needed_by(h) for h in candidates if h != g)
        ]
        chosen = usable[0] if usable else None
        for g in usable[1:]:
            parent[g] = chosen  # merge g into chosen
            members[chosen] = members[chosen] + members.pop(g)
            needs[chosen] |= needs.pop(g)
        for h in candidates:  # the others feed the node from outside: chosen waits for them
            if find(h) != chosen:
                outside_deps |= {find(h)} | needed_by(find(h))
        if chosen is None:
            chosen = len(parent)
            parent.append(chosen)
            members[chosen], needs[chosen] = [], set()
        members[chosen].append(node)
        needs[chosen] |= outside_deps
        for v in node.outputs:
            group_of[v] = chosen
            depends[v] = needs[chosen] | {chosen}
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    groups = [sorted(m, key=lambda n: order[id(n)]) for m in members.values()]
    return [g for g in groups if len(g) > 1]


#: Join groups across reductions over trailing dims (``rows.py``); False fuses elementwise
#: ops only (for comparison: what row-local fusion adds).
ROW_LOCAL = True


def fuse_elementwise(graph: Graph) -> Graph:
    """Replace each group from ``group_elementwise`` by one ``fused`` node."""
    g = as_graph(graph, "fuse_elementwise").copy()
    groups = group_elementwise(g)
    if ROW_LOCAL:
        groups = row_regions(g, groups, fusible)
    if not groups:
        return g
    users = g.users()
    graph_outputs = set(g.outputs)
    replace: dict[int, Node] = {}  # id(last node of a group) -> the fused node
    drop: set[int] = set()
    for number, members in enumerate(groups):
        node = _fused_node(g, members, number, users, graph_outputs)
        if not node.outputs:
            continue  # nothing it computes is used: dead code, left for DCE
        replace[id(members[-1])] = node
        drop.update(id(n) for n in members)
    new_nodes = []
    for n in g.nodes:
        if id(n) in replace:
            new_nodes.append(replace[id(n)])
        elif id(n) not in drop:
            new_nodes.append(n)
    g.nodes = _stable_topological_order(new_nodes, set(g.inputs))
    return g


def _stable_topological_order(nodes: list[Node], available: set[Value]) -> list[Node]:
    """Keep the order, but let a node wait until its inputs exist (a user of an early
    group member now comes after the fused node)."""
    available = set(available)
    done: list[Node] = []
    waiting: list[Node] = []
    for node in nodes:
        waiting.append(node)
        progress = True
        while progress:
            progress = False
            for w in list(waiting):
                if all(v in available for v in _reads(w)):
                    waiting.remove(w)
                    done.append(w)
                    available.update(w.outputs)
                    progress = True
                    break
                if not is_pure(w):
                    break  # side effects keep their order
    if waiting:
        raise RuntimeError("fuse_elementwise: could not order the fused graph (a cycle)")
    return done


def _fused_node(g: Graph, members: list[Node], number: int, users: dict, graph_outputs: set):
    member_ids = {id(n) for n in members}
    index = {n.outputs[0]: j for j, n in enumerate(members)}
    inputs: list[Value] = []
    ops = []
    for n in members:
        args = []
        for a in n.args:
            if isinstance(a, Value):
                if a in index:
                    args.append(("op", index[a]))
                else:
                    if a not in inputs:
                        inputs.append(a)
                    args.append(("input", inputs.index(a)))
            else:
                args.append(a)
        ops.append(ElementwiseOp(n.op, tuple(args)))
    escaping = [
        j
        for j, n in enumerate(members)
        if n.outputs[0] in graph_outputs
        or any(id(u) not in member_ids for u in users.get(n.outputs[0], []))
    ]
    out = members[-1].outputs[0]
    shapes = tuple(tuple(n.outputs[0].shape) for n in members)
    shape = tuple(np.broadcast_shapes(*shapes))  # (a row-local region's ops differ)
    kernel = FusedKernel(
        name=str(number),
        inputs=tuple((v.dtype, v.shape) for v in inputs),
        ops=tuple(ops),
        outputs=tuple(escaping),
        shape=shape,
        dtype=out.dtype,
        op_shapes=None if all(s == shape for s in shapes) else shapes,
    )
    outputs = [members[j].outputs[0] for j in escaping]
    return Node("fused", tuple(inputs), outputs=outputs, target=kernel, line=members[0].line)


register(
    FusedElementwise,
    FusedElementwiseKept,
)
