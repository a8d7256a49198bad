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
- ``shape`` and ``dtype``: every op's result has this shape and floating dtype.

So a kernel computes, for every output element, ``ops`` in order on scalars and stores
the ``outputs``: on the CPU that is ``numpy_source()`` (whole-array ufuncs with ``out=``),
on the GPU one thread per element.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd import enable_grad, is_grad_enabled
from ..autograd import grad as autograd_grad
from ..function import Context, Function
from ..ops.registry import register
from ..ops.scalar import array_call, erf_array
from ..tensor import Tensor
from .interpreter import _reads
from .ir import Graph, Node, Value, as_graph, mutated_values
from .ops import ELEMENTWISE, function_for, is_pure

Ref = tuple  # ("input", i) or ("op", j)


@dataclass(frozen=True)
class ElementwiseOp:
    """One op of a fused kernel: ``op`` applied to ``args`` (refs or Python numbers)."""

    op: str
    args: tuple

    def __str__(self) -> str:
        def show(a: Any) -> str:
            return (
                f"in{a[1]}"
                if isinstance(a, tuple) and a[0] == "input"
                else (f"t{a[1]}" if isinstance(a, tuple) else repr(a))
            )

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
    _compiled: Any = field(default=None, repr=False)
    _scratch: Any = field(default_factory=threading.local, repr=False)
    _buffers: Any = field(default=None, repr=False)

    def __call__(self, *args: Any) -> Any:
        """Run as a graph node (the interpreter calls a ``fused`` node's target)."""
        return FusedElementwise.apply(*args, kernel=self)

    def summary(self) -> str:
        return ", ".join(op.op for op in self.ops)

    def numpy_source(self) -> str:
        """The generated numpy function: ufuncs writing into preallocated buffers."""
        return _numpy_source(self)

    def run(self, arrays: tuple) -> tuple:
        """Compute the outputs (fresh arrays) from the input arrays, in cache-sized chunks
        where the arrays are too big for the cache (see :func:`chunk_plan`)."""
        if self._compiled is None:
            namespace = {"np": np, "_erf": erf_array}
            exec(compile(self.numpy_source(), f"<fused kernel {self.name}>", "exec"), namespace)
            self._compiled = namespace[f"fused_{self.name}"]
        scratch = getattr(self._scratch, "buffers", None)
        if scratch is None:
            scratch = self._scratch.buffers = {}
        shape, dtype = tuple(self.shape), np.dtype(self.dtype)
        outs = tuple(np.empty(shape, dtype) for _ in self.outputs)
        plan = chunk_plan(self, arrays)
        if plan is None:
            self._compiled(scratch, outs, shape, *arrays)
            return outs
        how, step = plan
        if how == "flat":  # every input is the whole shape (contiguous) or a single value
            full = [_is_full(a, shape) for a in arrays]
            flat_in = [
                a.reshape(-1) if f else _as_single(a) for a, f in zip(arrays, full, strict=True)
            ]
            flat_out = [o.reshape(-1) for o in outs]
            size = int(np.prod(shape))
            for start in range(0, size, step):
                stop = min(start + step, size)
                chunk = [a[start:stop] if f else a for a, f in zip(flat_in, full, strict=True)]
                self._compiled(
                    scratch, tuple(o[start:stop] for o in flat_out), (stop - start,), *chunk
                )
            return outs
        rows = shape[0]
        for start in range(0, rows, step):
            stop = min(start + step, rows)
            chunk = [_rows(a, len(shape), start, stop) for a in arrays]
            chunk_shape = (stop - start, *shape[1:])
            self._compiled(scratch, tuple(o[start:stop] for o in outs), chunk_shape, *chunk)
        return outs

    def reference(self, inputs: list[Tensor]) -> list[Tensor]:
        """The same computation with minitorch ops, one ``Function.apply`` each (used for
        the backward pass, and to test the generated code against)."""
        results: list[Tensor] = []
        for op in self.ops:
            args = [
                (inputs[a[1]] if a[0] == "input" else results[a[1]]) if isinstance(a, tuple) else a
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
            if isinstance(a, tuple) and a[0] == "op":
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
            (f"in{a[1]}" if a[0] == "input" else where[a[1]]) if isinstance(a, tuple) else repr(a)
            for a in op.args
        ]
        for a in op.args:  # inputs read for the last time free their buffer for this op
            if isinstance(a, tuple) and a[0] == "op" and last_use[a[1]] == j:
                name = where[a[1]]
                if name.startswith("s") and name not in free:
                    free.append(name)
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
#: outputs): about a core's L2 cache on today's CPUs (measured on this project's 2-core
#: machine, L2 1 MiB per core: 64-256 KiB per buffer ran a 10-op chain 2x faster than
#: whole arrays).
CHUNK_BYTES = 1024 * 1024
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


def chunk_plan(k: FusedKernel, arrays: tuple) -> tuple[str, int] | None:
    """How to run ``k`` on ``arrays``: None (whole arrays, one call: small kernels),
    ``("flat", n)`` (``n`` elements at a time, when every input is the output's shape or a
    single value) or ``("rows", n)`` (``n`` rows of the leading dim at a time).

    A chunk is sized so that every array it touches (its inputs' slices, the scratch
    buffers and its outputs) fits in :data:`CHUNK_BYTES` together; chosen from the kernel
    alone, never by timing."""
    shape = tuple(k.shape)
    size = int(np.prod(shape)) if shape else 1
    itemsize = np.dtype(k.dtype).itemsize
    # the arrays a chunk step streams through: outputs, scratch buffers, and the inputs of
    # the output's size (a broadcast row or column is small and stays in the cache)
    live = len(k.outputs) + _scratch_buffers(k) + sum(_is_full(a, shape) for a in arrays)
    if size * itemsize * live <= WHOLE_BYTES or not shape:
        return None
    elements = max(CHUNK_BYTES // (live * itemsize), MIN_CHUNK)
    if all(_is_full(a, shape) and a.flags.c_contiguous or _single(a) for a in arrays):
        return "flat", elements
    row = size // shape[0] if shape[0] else 0
    if shape[0] < 2 or row == 0 or row * 2 > elements * 4:
        return None  # rows too big to chunk by (a few huge rows): whole arrays
    return "rows", max(elements // row, 1)


def _scratch_buffers(k: FusedKernel) -> int:
    """How many scratch buffers the generated code uses."""
    if k._buffers is None:
        k._buffers = k.numpy_source().count("= scratch.get(")
    return k._buffers


# --- running it, differentiably -----------------------------------------------------------


class FusedElementwise(Function):
    """Runs a FusedKernel. Backward recomputes the chain's intermediates in one numpy pass
    (each op's own pure forward: no ``apply``, no graph) and runs each op's own backward
    in reverse on them; with ``create_graph`` it differentiates the chain rebuilt from
    minitorch ops instead, so that its gradient is differentiable too. Either way nothing
    but the inputs is kept between forward and backward (rematerialization)."""

    name = "fused_elementwise"

    @staticmethod
    def forward(*arrays: Any, kernel: FusedKernel) -> Any:
        outs = kernel.run(arrays)
        return outs[0] if len(outs) == 1 else outs

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any, kernel: FusedKernel) -> None:
        ctx.kernel = kernel
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx: Context, *grads: Any) -> tuple:
        inputs = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if not is_grad_enabled():
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


def _backward_by_ops(kernel: FusedKernel, inputs: tuple, needs: tuple, grads: tuple) -> tuple:
    """The gradients of the kernel's inputs: its chain recomputed on arrays, then each op's
    ``setup_context`` and ``backward`` (the very code eager autograd runs) in reverse."""
    arrays = [t._data for t in inputs]
    values: list[Any] = []

    def operands(op: ElementwiseOp) -> list:
        return [
            (arrays[a[1]] if a[0] == "input" else values[a[1]]) if isinstance(a, tuple) else a
            for a in op.args
        ]

    for op in kernel.ops:
        values.append(function_for(op.op).forward(*operands(op)))
    flows = [False] * len(kernel.ops)  # which ops' results depend on an input needing a grad
    for j, op in enumerate(kernel.ops):
        flows[j] = any(
            isinstance(a, tuple) and (needs[a[1]] if a[0] == "input" else flows[a[1]])
            for a in op.args
        )
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
            isinstance(a, tuple) and (needs[a[1]] if a[0] == "input" else flows[a[1]])
            for a in op.args
        )
        ctx = Context(wants)
        ctx.inputs, ctx.raw = args, values[j]
        cls.setup_context(ctx, tuple(args), values[j])
        ctx.saved = tuple(
            Tensor._from_array(v) if hasattr(v, "shape") and hasattr(v, "dtype") else v
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


def run_fused(kernel: FusedKernel, args: tuple) -> Any:
    return kernel(*args)


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


def fuse_elementwise(graph: Graph) -> Graph:
    """Replace each group from ``group_elementwise`` by one ``fused`` node."""
    g = as_graph(graph, "fuse_elementwise").copy()
    groups = group_elementwise(g)
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
    kernel = FusedKernel(
        name=str(number),
        inputs=tuple((v.dtype, v.shape) for v in inputs),
        ops=tuple(ops),
        outputs=tuple(escaping),
        shape=out.shape,
        dtype=out.dtype,
    )
    outputs = [members[j].outputs[0] for j in escaping]
    return Node("fused", tuple(inputs), outputs=outputs, target=kernel, line=members[0].line)


register(
    FusedElementwise,
)
