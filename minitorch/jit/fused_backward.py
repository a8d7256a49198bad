"""A fused kernel's backward pass as one generated numpy function.

Eager autograd runs the backward of ``0.5 * h * (1 + tanh(...))`` as one op's backward
after another, each reading the values forward kept and writing a fresh gradient array:
a dozen trips through memory for a chain that forward ran in one. The gradient of the
whole chain is itself a chain of elementwise ops, though, known when the kernel is made:
every elementwise op declares its gradient as a formula (``scalar_grad``, see
``minitorch.ops.scalar``), and reverse-mode differentiation strings them together. So the
backward of a fused kernel is generated once, like its forward, and runs chunk by chunk
over cache-sized pieces of the arrays: in one pass it recomputes what the chain's
gradient formulas read (cheap: the chunk is in the cache) and works back from the
gradients of the kernel's outputs to those of its inputs.

``backward_source(kernel, needs, graded)`` writes the function::

    def fused_backward_<name>(scratch, grads_in, shape, in0, ..., g0, ...):

``in*`` are the kernel's inputs (a chunk of them), ``g*`` the gradients of its graded
outputs, and ``grads_in[i]`` receives input ``i``'s gradient, already summed to the shape
that ``grads_in[i]`` has (an input broadcast along the chunk's rows gets one partial sum
per chunk; the caller adds them up). It is ``FusedKernel.run_backward``'s code.

The plan is the same as eager's, step for step: each op's gradient is its own formula,
the gradient of a value used twice is the sum of its parts, a reduction's gradient (in a
row-local kernel) spreads back over its rows (``mean``: divided by their count), and a
broadcast operand's gradient is summed back to its shape. Only the order of a few sums
differs, so results agree with eager to rounding.
"""

from __future__ import annotations

import ast
import math
import re
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ops.scalar import FRESH_RESULT, fold, formula_call
from .ops import function_for, is_ref
from .rows import REDUCTIONS


def has_gradient_formulas(kernel: Any) -> bool:
    """Can a backward be generated: does every op of ``kernel`` have a gradient formula
    (or is a reduction the generator knows)?"""
    return all(
        op.op in REDUCTIONS or getattr(function_for(op.op), "scalar_grad", None)
        for op in kernel.ops
    )


def gradient_flows(kernel: Any, needs: tuple) -> list[bool]:
    """For each op of ``kernel``: does its result depend on an input that ``needs`` marks
    (so that a gradient flows through it)?"""
    flows: list[bool] = []
    for op in kernel.ops:
        flows.append(
            any(is_ref(a) and (needs[a[1]] if a[0] == "input" else flows[a[1]]) for a in op.args)
        )
    return flows


#: Ops that cost backward one cheap pass to recompute; every other op's result (a
#: transcendental function, a reduction, anything per row) is kept in training.
CHEAP = frozenset({"add", "sub", "mul", "div", "neg", "abs", "relu", "maximum", "minimum"})


def worth_keeping(kernel: Any, needs: tuple) -> frozenset:
    """The ops whose results forward should keep for backward (in training): of those
    backward reads or recomputes them from, the ones not :data:`CHEAP` to recompute, and
    every result smaller than the kernel's shape (per-row values cost next to nothing)."""
    made = backward_source(kernel, needs, (True,) * len(kernel.outputs))
    if made is None:
        return frozenset()
    recomputed, todo = set(made.reads), list(made.reads)
    while todo:
        for a in kernel.ops[todo.pop()].args:
            if is_ref(a) and a[0] == "op" and a[1] not in recomputed:
                recomputed.add(a[1])
                todo.append(a[1])
    shape = tuple(kernel.shape)
    return frozenset(
        j for j in recomputed if kernel.ops[j].op not in CHEAP or tuple(kernel.op_shape(j)) != shape
    )


def sum_to(target: np.ndarray, grad: np.ndarray, add: bool = False) -> None:
    """Write ``grad`` into ``target`` (``add``: add it to what ``target`` holds), summed
    over the dims that ``target`` broadcast along (its missing leading dims and its dims of
    size 1), as ``unbroadcast`` does."""
    if grad.shape != target.shape:
        lead = grad.ndim - target.ndim
        dims = tuple(range(max(lead, 0))) + tuple(
            lead + i
            for i, n in enumerate(target.shape)
            if lead + i >= 0 and n == 1 and grad.shape[lead + i] != 1
        )
        if dims:
            grad = grad.sum(axis=dims, keepdims=True)
            grad = grad.reshape(grad.shape[max(lead, 0) :])
    if add:
        np.add(target, grad, out=target)
    else:
        np.copyto(target, grad)


def spread(part: np.ndarray, shape: tuple, source: tuple, kernel_shape: tuple) -> np.ndarray:
    """A reduction's gradient ``part`` as a (read-only) view of the shape of its source's
    chunk: the source's dims that are the kernel's follow the chunk's ``shape``."""
    lead = len(kernel_shape) - len(source)
    target = tuple(
        shape[lead + d] if n == kernel_shape[lead + d] else n for d, n in enumerate(source)
    )
    return np.broadcast_to(part, target)


@dataclass
class _Step:
    """One line of the generated code: ``name`` gets ``code``, whose ``{out}`` (if
    ``writes_out``) is the buffer it writes into; ``view_of`` names the value whose
    memory the result is a view of (so that memory stays taken while the view is read)."""

    name: str
    shape: tuple
    code: str
    reads: tuple
    writes_out: bool
    view_of: str = ""


class _Program:
    """The straight-line program being generated: its steps and every name's shape."""

    def __init__(self, shapes: dict[str, tuple]):
        self.shapes = dict(shapes)
        self.steps: list[_Step] = []
        self.count = 0

    def line(
        self,
        shape: tuple,
        code: str,
        reads: tuple,
        writes_out: bool,
        name: str = "",
        view_of: str = "",
    ) -> str:
        if not name:
            name, self.count = f"a{self.count}", self.count + 1
        self.shapes[name] = tuple(shape)
        self.steps.append(_Step(name, tuple(shape), code, reads, writes_out, view_of))
        return name

    def formula(self, text: str, name: str = "") -> str:
        """Lines computing a formula (its operands already named), one ufunc each, so
        that every intermediate gets a buffer too; the last one is called ``name``."""
        return self._expand(fold(ast.parse(text, mode="eval").body), name)

    def _expand(self, node: ast.AST, name: str = "") -> str:
        if isinstance(node, ast.Constant):
            return repr(node.value if isinstance(node.value, bool) else float(node.value))
        if isinstance(node, ast.Name):
            if name:  # (a formula that is just an operand)
                return self.line(
                    self.shapes[node.id],
                    f"np.positive({node.id}, out={{out}})",
                    (node.id,),
                    True,
                    name,
                )
            return node.id
        function, operands = formula_call(node)  # (the formula language's one reader)
        if function == "erf":
            return self._call("_erf", operands, True, name, first="np")
        return self._call(f"np.{function}", operands, function not in FRESH_RESULT, name)

    def _call(self, fn: str, args: list, writes_out: bool, name: str, first: str = "") -> str:
        names = [self._expand(a) for a in args]
        reads = tuple(n for n in names if n in self.shapes)
        shape = np.broadcast_shapes(*(self.shapes[r] for r in reads)) if reads else ()
        tail = ", out={out}" if writes_out else ""
        code = f"{fn}({', '.join(([first] if first else []) + names)}{tail})"
        return self.line(shape, code, reads, writes_out, name)


def _placeholders(formula: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(formula) if f is not None}


@dataclass
class Backward:
    """A generated backward: its ``source``, how many scratch buffers of the chunk's shape
    it uses, and which ops' results its gradient formulas read (``reads``)."""

    source: str
    scratch: int
    reads: frozenset


def backward_source(
    kernel: Any, needs: tuple, graded: tuple, kept: frozenset = frozenset()
) -> Backward | None:
    """The generated backward (see the module docstring) for the inputs ``needs`` marks,
    given gradients for the outputs ``graded`` marks; the results of the ops in ``kept``
    come as arguments too (``t<j>``, after the gradients: forward kept them), the others it
    reads are recomputed. None where an op has no gradient formula."""
    if not has_gradient_formulas(kernel):
        return None
    ops, shape = kernel.ops, tuple(kernel.shape)
    op_shape = [tuple(kernel.op_shape(j)) for j in range(len(ops))]
    in_shape = [tuple(s) for _, s in kernel.inputs]

    flows = gradient_flows(kernel, needs)

    def wanted(a: Any) -> bool:  # does this operand's gradient matter
        return is_ref(a) and (needs[a[1]] if a[0] == "input" else flows[a[1]])

    def value(a: Any) -> str:
        if not is_ref(a):
            return repr(float(a))
        return f"in{a[1]}" if a[0] == "input" else f"t{a[1]}"

    shapes = {f"in{i}": s for i, s in enumerate(in_shape)}
    shapes.update((f"t{j}", s) for j, s in enumerate(op_shape))
    back = _Program(shapes)
    # the name holding the gradient so far: of op j at "t{j}", and of input i, one name for
    # each shape its parts come in, at ("input", i, shape) (see _contribute)
    adjoint: dict[Any, str] = {}
    grads = [f"g{n}" for n, g in enumerate(graded) if g]
    for n, (j, g) in enumerate(zip(kernel.outputs, graded, strict=True)):
        if g:
            back.shapes[f"g{n}"] = op_shape[j]
            _accumulate(back, adjoint, f"t{j}", f"g{n}")
    read: set[int] = set()  # the ops whose results the gradient formulas read

    for j in reversed(range(len(ops))):
        g, op = adjoint.get(f"t{j}"), ops[j]
        if g is None or not flows[j]:
            continue
        if op.op in REDUCTIONS:  # its rows' gradient, spread over them (mean: its share)
            a = op.args[0]
            if wanted(a):
                part = g
                source = in_shape[a[1]] if a[0] == "input" else op_shape[a[1]]
                if op.op == "mean":
                    dims = op.args[1]
                    dims = (dims,) if isinstance(dims, int) else tuple(dims)
                    count = math.prod(source[d % len(source)] for d in dims)
                    part = back.formula(f"{g} / {float(max(count, 1))!r}")
                # (as a view of the source's shape: an op of a smaller shape that used
                # the source must sum it back, so its shape has to say what it stands for)
                code = f"_spread({part}, shape, {source!r}, {shape!r})"
                part = back.line(source, code, (part,), False, view_of=part)
                _contribute(back, adjoint, a, part, op_shape)
            continue
        operands = [value(a) for a in op.args]
        for i, a in enumerate(op.args):
            if not wanted(a):
                continue
            formula = function_for(op.op).scalar_grad[i]
            used = _placeholders(formula)
            if formula.strip() == "{g}":
                part = g  # (the gradient passes through as it is: no line at all)
            else:
                read.update(
                    b[1]
                    for k, b in enumerate(op.args)
                    if str(k) in used and is_ref(b) and b[0] == "op"
                )
                if "out" in used:
                    read.add(j)
                part = back.formula(formula.format(*operands, g=g, out=f"t{j}"))
            _contribute(back, adjoint, a, part, op_shape)

    reads = frozenset(read)
    todo = sorted(read - kept)  # ...and what those results are computed from
    while todo:
        for a in ops[todo.pop()].args:
            if is_ref(a) and a[0] == "op" and a[1] not in read:
                read.add(a[1])
                if a[1] not in kept:
                    todo.append(a[1])
    forward = _Program(shapes)
    for j in sorted(read - kept):
        op = ops[j]
        if op.op in REDUCTIONS:
            extra = ", ".join(repr(a) for a in op.args[1:])
            code = f"_reduce_{op.op}({value(op.args[0])}, {extra})"
            forward.line(op_shape[j], code, (value(op.args[0]),), False, f"t{j}")
        else:
            forward.formula(function_for(op.op).scalar.format(*map(value, op.args)), f"t{j}")
    for name in forward.shapes:
        back.shapes.setdefault(name, forward.shapes[name])
    results = {  # each input's parts, the biggest shape first
        i: [adjoint[k] for k in sorted(adjoint, key=_size, reverse=True) if k[:2] == ("input", i)]
        for i in range(len(in_shape))
        if needs[i]
    }
    given = grads + [f"t{j}" for j in sorted(kept)]
    source, count = _emit(kernel, forward.steps + back.steps, results, shape, given)
    return Backward(source, count, reads)


def _size(key: Any) -> int:
    return math.prod(key[2]) if isinstance(key, tuple) else -1


def _accumulate(program: _Program, adjoint: dict, key: Any, part: str) -> None:
    """Add ``part`` to the gradient collected for ``key`` (a line, when there is one)."""
    if key not in adjoint:
        adjoint[key] = part
        return
    adjoint[key] = program.formula(f"{adjoint[key]} + {part}")


def _contribute(program: _Program, adjoint: dict, a: tuple, part: str, op_shape: list) -> None:
    """``part`` of the gradient of the op or input ``a``: an op's is summed to its shape
    here (its dims of size 1 in a row-local kernel); an input's is summed when written,
    with the parts of each shape added up first: a row's part and a full part must each
    be summed to the input's shape, never one broadcast onto the other."""
    if a[0] == "input":
        _accumulate(program, adjoint, ("input", a[1], program.shapes[part]), part)
        return
    target, have = op_shape[a[1]], program.shapes[part]
    dims = tuple(d for d, (n, m) in enumerate(zip(target, have, strict=True)) if n == 1 != m)
    if dims:
        shape = tuple(1 if d in dims else n for d, n in enumerate(have))
        code = f"np.sum({part}, axis={dims!r}, keepdims=True)"
        part = program.line(shape, code, (part,), False)
    _accumulate(program, adjoint, f"t{a[1]}", part)


def _emit(kernel: Any, steps: list[_Step], results: dict, shape: tuple, grads: list):
    """The function's source, buffers given out by linear scan: a value of the chunk's
    full shape lives in a scratch buffer (kept from call to call) that an earlier value's
    last use freed, or, when it is an input's whole gradient, in ``grads_in[i]`` itself;
    smaller values (a row-local kernel's per-row ones) are fresh arrays."""
    views = {s.name: s.view_of for s in steps if s.view_of}

    def memory(name: str) -> list[str]:  # the name, and the names whose memory it views
        found = [name]
        while found[-1] in views:
            found.append(views[found[-1]])
        return found

    last: dict[str, int] = {}
    for n, s in enumerate(steps):
        for r in s.reads:
            last.update((m, n) for m in memory(r))
    for names in results.values():
        for name in names:
            last.update((m, len(steps)) for m in memory(name))
    by_name = {s.name: s for s in steps}
    # an input's gradient computed straight into grads_in[i]: one of a single part, of the
    # chunk's shape (where several inputs share one gradient, the first; the others are
    # summed from it)
    direct: dict[str, int] = {}
    for i, names in results.items():
        step = by_name.get(names[0]) if len(names) == 1 else None
        if step is not None and step.name not in direct and step.writes_out:
            if step.shape == shape and tuple(kernel.inputs[i][1]) == shape:
                direct[step.name] = i
    inputs = [f"in{i}" for i in range(len(kernel.inputs))]
    params = ", ".join(["scratch", "grads_in", "shape", *inputs, *grads])
    lines = [f"def fused_backward_{kernel.name}({params}):"]
    free: list[str] = []
    where: dict[str, str] = {}
    count = 0
    for n, s in enumerate(steps):
        read = dict.fromkeys(m for name in s.reads for m in memory(name))
        for r in read:  # buffers read for the last time here (or through a view) can take
            buf = where.get(r, "")  # this step's result
            if last.get(r) == n and buf.startswith("b") and buf not in free:
                free.append(buf)
        code = s.code
        for r in sorted(set(s.reads), key=len, reverse=True):
            code = re.sub(rf"\b{r}\b", where.get(r, r), code)
        if not s.writes_out or s.shape != shape:  # a fresh array
            where[s.name] = s.name
            lines.append(f"    {s.name} = {code.replace(', out={out}', '')}")
            continue
        if s.name in direct:
            buf = f"grads_in[{direct[s.name]}]"
        elif free:
            buf = free.pop()
        else:
            buf, count = f"b{count}", count + 1
            key = f"({buf!r}, shape)"
            lines.append(f"    {buf} = scratch.get({key})")
            lines.append(f"    if {buf} is None:")
            lines.append(f"        {buf} = scratch[{key}] = np.empty(shape, np.{kernel.dtype})")
        lines.append(f"    {code.replace('{out}', buf)}")
        where[s.name] = buf
    for i, names in results.items():
        for k, name in enumerate(names):
            if direct.get(name) != i:
                add = ", add=True" if k else ""
                lines.append(f"    _sum_to(grads_in[{i}], {where.get(name, name)}{add})")
    lines.append("    return grads_in")
    return "\n".join(lines) + "\n", count
