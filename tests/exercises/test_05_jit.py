"""Graded tests for chapter 05 (jit).

Probes build graphs with the real tracer, run the learner's piece on them, and return the
result as plain data: a graph as a list of ``(op, input names, output names)`` tuples
(plus the constants it holds), tensors as arrays. Judges compare with the package's own
pass (or, for grouping and guards, a reference written here) in the grader's process.
While a probe runs, the package's implementation of the piece under test is switched off,
so an answer that hands the work to ``minitorch.jit`` fails with a message saying so.
"""

import re
import threading
import types
from contextlib import contextmanager

import numpy as np

import minitorch as mt
from minitorch import jit, nn
from minitorch.course.grading import Delegated, Forbidden, exercise, forbid, forbidding, probe
from minitorch.course.grading.delegation import message
from minitorch.course.grading.judging import assert_close, checked_array
from minitorch.function import Function, register_apply_hook
from minitorch.jit import fusion, interpreter, passes
from minitorch.jit.compile import (
    CompiledFunction,
    _Entry,
    grad_mode_guard,
    tensor_guards,
    value_guard,
)
from minitorch.jit.ir import Node, format_arg
from minitorch.jit.lint import problems as lint_problems
from minitorch.jit.module import ScriptModule
from minitorch.jit.ops import is_pure
from minitorch.jit.tracer import Tracer, input_names, record


def refusing(nb, *functions):
    """While the learner's code runs, a call from it to one of minitorch's own
    ``functions`` fails the exercise (see :mod:`minitorch.course.grading.delegation`)."""
    return forbidding(forbid(*functions), nb)


# --- programs the probes trace ------------------------------------------------------------
CAPTURED = mt.tensor([1.0, 2.0, 3.0])
WEIGHT = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)


def chain(x, y):
    return ((x * y + 1.0).tanh() - y).sum(dim=1)


def two_outputs(x, y):
    values, indices = x.max(dim=1)
    return values + y.sum(), indices


def joined(x, y):
    return mt.cat([x, y], dim=0).relu() * CAPTURED


def sliced(x, y):
    return x[0:1, ::2] * y[1:, 1:] + WEIGHT[:2]


def dead_code(x, y):
    unused = (x.exp() * 2).sum()  # noqa: F841 - a dead chain
    keep = x + y
    CAPTURED.add_(0.0)  # an in-place write: never dead (nor folded: its input is a constant)
    also_unused = keep.tanh()  # noqa: F841
    peak = x.max(dim=1)[0]  # two outputs, one of them used: the node stays
    return keep * 3 + peak.unsqueeze(1)


def constants(x, y):
    folded = (CAPTURED + 1.0) * 2.0  # constants only: folds
    grad_path = WEIGHT * 2.0 + CAPTURED * WEIGHT  # requires grad (also as a second input)
    return x * folded + grad_path + CAPTURED.exp().sum()


def repeats(x, y):
    a = x * y
    b = x * y  # the same as a
    c = (a + 1.0).exp()
    d = (b + 1.0).exp()  # the same as c, once b is a
    e = x * 2
    f = x * 2.0  # 2 and 2.0: the same numbers, but kept apart
    rows, cols = mt.cat([x, y], dim=0), mt.cat([x, y], dim=1)  # differ only in a keyword
    top, again = x.max(dim=1), x.max(dim=1)  # two outputs each: both outputs are replaced
    return c + d + e + f + top[0], a - b, b, rows, cols, again[1]


def gelu_block(x, y):
    h = x * y
    inner = 0.7978845608 * (h + 0.044715 * h * h * h)
    return 0.5 * h * (1.0 + inner.tanh())


def cycle_risk(x, y):
    a = (x * 2.0).exp()  # group A
    s = a.sum(dim=1, keepdim=True)  # not elementwise, depends on A
    b = a / s  # reads A and s: joining A would loop
    return (b - 1.0).relu() + y, s.sqrt()  # a lone sqrt: a group of one, not fused


def two_chains(x, y):
    a = (x * 2.0).exp()
    b = (y + 1.0).tanh()
    c = a * b  # joins the first producer's group that works: a's
    return (c.T - 1.0).relu()  # a transpose keeps a square shape, but is not elementwise


class _PairBlend(Function):
    """A custom op that takes its tensors inside a tuple and as a keyword argument."""

    name = "pair_blend"
    differentiable = False

    @staticmethod
    def forward(ctx, pair, *, weight):
        first, second = (t._data for t in pair)  # tuple items arrive as Tensors, not arrays
        w = weight._data
        return first * w + second * (1 - w)


def blended(x, y):
    return _PairBlend.apply((x, y.exp()), weight=x.sigmoid()) * 2.0


def _raw(t):
    return t._data if isinstance(t, mt.Tensor) else t


class _Nested(Function):
    """A custom op that takes its tensors inside a list holding a tuple, and in a keyword
    tuple."""

    name = "nested_sum"
    differentiable = False

    @staticmethod
    def forward(ctx, parts, *, extra):
        (first, (second, third)), (fourth,) = parts, extra
        return _raw(first) + _raw(second) * _raw(third) - _raw(fourth)


def nested(x, y):
    return _Nested.apply([x, (y, x.exp())], extra=(y.sigmoid(),)) * 2.0


class _Mix(Function):
    """A custom op with flat arguments and a tensor as a keyword argument."""

    name = "mix"
    differentiable = False

    @staticmethod
    def forward(ctx, a, b, *, weight):
        w = _raw(weight)
        return _raw(a) * w + _raw(b) * (1 - w)


def mixed(x, y):
    inputs_only = _Mix.apply(x, y.exp(), weight=x.sigmoid())
    constants_only = _Mix.apply(CAPTURED, CAPTURED * 2.0, weight=CAPTURED.sigmoid())  # folds
    return inputs_only + x * y + constants_only


def dead_inputs(x, y):
    unused = (y.exp() * CAPTURED).sum()  # noqa: F841 - y and a constant only feed dead code
    return x.max(dim=1)[1], x * 2.0  # only the second output of max is used


def second_producer(x, y):
    a = (y * 2.0).exp()
    return (x + a).tanh()  # x has no group: the add joins its second input's group


SINK = mt.zeros(2, 3)


def write_after_repeat(x, y):
    a = x * y
    b = x * y  # the same as a
    SINK.mul_(0.0).add_(b)  # in-place writes, one reading the duplicate: after CSE it reads a
    return a + SINK


def layer_norm(x, y):
    mean = x.mean(dim=1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dim=1, keepdim=True)
    return centred / (var + 1e-5).sqrt() * y + 1.0


def repeat_in_containers(x, y):
    a = x * y
    b = x * y  # the same as a; read below inside a tuple and as a keyword argument
    return _PairBlend.apply((b, y), weight=x.sigmoid()) + _Mix.apply(x, y, weight=b) + a


def keyword_weight(x, y):
    blend = _Mix.apply(CAPTURED, CAPTURED * 2.0, weight=WEIGHT)  # requires grad, as a keyword
    return x * blend + y


def masked(x, y):
    a = (x * 2.0).exp()
    b = a * (y > 0)  # elementwise, but not fusible: its inputs differ in dtype (float32, bool)
    return (b + 1.0).tanh()


class _Stateful(nn.Module):
    """A module whose graph has get_attr nodes: a parameter that only dead code reads, a
    buffer written in place, and a parameter (module state, never a constant: not folded)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.gain = nn.Parameter(mt.ones(3))
        self.spare = nn.Parameter(mt.ones(3))
        self.register_buffer("calls", mt.zeros(1))

    def forward(self, x, y):
        h = self.fc(x) * CAPTURED  # the constant is defined before the write
        unused = (self.spare * 2.0).sum()  # noqa: F841 - a get_attr that only dead code reads
        self.calls.add_(1.0)  # an in-place write to a buffer
        scale = (CAPTURED * 0.5).exp()  # constants only, read after the write: folds
        return h * scale * (self.gain * 2.0) + y.sum()


OTHER = mt.tensor([4.0, 5.0, 6.0])  # another captured tensor, of CAPTURED's dtype and shape


def two_constants(x, y):
    return x * CAPTURED + x * OTHER  # two constants that differ in value only: never one


def narrow_first(x, y):
    col = (x.sum(dim=1, keepdim=True) * 2.0).exp()  # a (rows, 1) group
    wide = (y + 1.0).tanh()  # a (rows, cols) group
    return (col + wide) * 0.5  # its first grouped input's shape differs: it joins the second


def cycle_first(x, y):
    a = (x * 2.0).exp()  # group A
    b = (y - 1.0).abs()  # group B
    s = a.sum(dim=1, keepdim=True) + b  # the sum is not elementwise and reads A; the add joins B
    return (a * s + b).relu()  # the mul's first input is A's, but s depends on A: it joins B


_CUSTOM_OPS = {"blended", "nested", "mixed", "repeat_in_containers", "keyword_weight"}
MODULES = {"stateful": _Stateful}  # programs that are modules (their graphs read attributes)

PROGRAMS = {
    f.__name__: f
    for f in (
        chain,
        two_outputs,
        joined,
        sliced,
        dead_code,
        constants,
        repeats,
        gelu_block,
        cycle_risk,
        two_chains,
        blended,
        layer_norm,
        nested,
        mixed,
        dead_inputs,
        second_producer,
        write_after_repeat,
        repeat_in_containers,
        keyword_weight,
        masked,
        two_constants,
        narrow_first,
        cycle_first,
    )  # fmt: skip
}


def _inputs(seed, shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _traced(name, arrays):
    """The graph of program ``name`` traced on ``arrays``, and what its get_attr nodes read."""
    if name == "writes_twice":
        return _writes_twice(arrays), {}
    if name in MODULES:
        mt.manual_seed(0)  # the same weights in the probe and in the judge's reference
        traced = jit.trace(MODULES[name](), tuple(mt.tensor(a) for a in arrays))
        return traced.graph, traced.attr_values()
    fn = PROGRAMS[name]
    return jit.trace(fn, tuple(mt.tensor(a) for a in arrays)).graph, {}


def _trace(name, arrays):
    return _traced(name, arrays)[0]


def _writes_twice(arrays):
    """dead_code's graph with its in-place write made twice (as a scripted graph has it):
    two identical nodes that are not pure, so never one."""
    graph = _trace("dead_code", arrays)
    i, write = next((i, n) for i, n in enumerate(graph.nodes) if not is_pure(n))
    again = Node(
        write.op, write.args, write.kwargs, [graph.new_value(CAPTURED)], target=write.target
    )
    graph.nodes.insert(i + 1, again)
    return graph


def describe(graph):
    """A graph as plain data: (op, args as text, output names and shapes) per node."""
    nodes = []
    for n in graph.nodes:
        args = [format_arg(a) for a in n.args] + [
            f"{k}={format_arg(v)}" for k, v in n.kwargs.items()
        ]
        outs = [(v.name, v.dtype, v.shape) for v in n.outputs]
        nodes.append((n.op, tuple(args), tuple(outs)))
    return {
        "nodes": nodes,
        "outputs": [v.name for v in graph.outputs],
        "inputs": [v.name for v in graph.inputs],
    }


def _node_text(node):
    """One node of :func:`describe` as the graph prints it: ``%2 = add(%0, %1)``."""
    op, args, outs = node
    names = ", ".join(f"%{o[0]}" for o in outs) or "()"
    return f"{names} = {op}({', '.join(args)})"


def _same_graph(got, expected, what):
    assert isinstance(got, dict) and "nodes" in got, f"{what}: returned {got!r}, not a graph"
    g_nodes = [(n[0], tuple(n[1]), tuple(tuple(o) for o in n[2])) for n in got["nodes"]]
    e_nodes = [(n[0], tuple(n[1]), tuple(tuple(o) for o in n[2])) for n in expected["nodes"]]
    # the message names the node that is missing (or extra), not the node that happens
    # to sit where the missing one should be
    missing = [n for n in e_nodes if n not in g_nodes]
    extra = [n for n in g_nodes if n not in e_nodes]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise AssertionError(
            f"{what}: your graph has no node {_node_text(missing[0])}{more}; the expected "
            f"graph has it. Your graph's ops: {[n[0] for n in g_nodes]}"
        )
    if extra:
        more = f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""
        raise AssertionError(
            f"{what}: your graph has the node {_node_text(extra[0])}{more}, which the expected "
            f"graph has not. Expected ops: {[n[0] for n in e_nodes]}"
        )
    for i, (g, e) in enumerate(zip(g_nodes, e_nodes, strict=False)):
        assert g == e, (
            f"{what}: the same nodes in another order: node {i} is {_node_text(g)}, expected "
            f"{_node_text(e)}"
        )
    assert len(g_nodes) == len(e_nodes), (
        f"{what}: {len(g_nodes)} nodes, expected {len(e_nodes)} (a node given twice?)"
    )
    assert list(got["outputs"]) == list(expected["outputs"]), (
        f"{what}: the graph returns {got['outputs']}, expected {expected['outputs']}"
    )
    assert list(got.get("inputs", [])) == list(expected["inputs"]), (
        f"{what}: the graph takes {got.get('inputs')}, expected {expected['inputs']} (a pass "
        "keeps the graph's inputs, used or not: callers pass them all)"
    )


# --- 05.1 record an op ----------------------------------------------------------------------
class _LearnerTracer(Tracer):
    def __init__(self, nb, attrs):
        super().__init__(attrs)
        self.nb = nb

    def on_apply(self, cls, args, kwargs, out):
        if threading.get_ident() == self.thread:
            self.nb.record(self, cls, args, kwargs, out)


@probe
def learner_trace(nb, name, arrays):
    inputs = [mt.tensor(a) for a in arrays]
    tracer = _LearnerTracer(nb, {})
    for t, n in zip(inputs, input_names(PROGRAMS[name], len(inputs)), strict=True):
        tracer.add_input(t, n)
    with refusing(nb, Tracer.on_apply, Tracer.arg, record):
        handle = register_apply_hook(tracer.on_apply)
        try:
            out = PROGRAMS[name](*inputs)
        finally:
            handle.remove()
    tracer.set_outputs(out)
    for n in tracer.graph.nodes:  # the node runs what it recorded
        if n.op not in ("constant", "get_attr"):
            assert n.target is not None, f"node {n.op} has no target"
    return {**describe(tracer.graph), "targets": _targets(tracer.graph)}


def _targets(graph):
    return [
        n.target.__qualname__ if isinstance(n.target, type) else repr(n.target) for n in graph.nodes
    ]


def _reference_trace(name, arrays):
    inputs = [mt.tensor(a) for a in arrays]
    graph, _, _ = record(PROGRAMS[name], inputs, input_names(PROGRAMS[name], len(inputs)), {})
    return {**describe(graph), "targets": _targets(graph)}


def _record_case(run, name, shapes):
    arrays = _inputs(int(run.rng.integers(1 << 30)), shapes)
    got = run(learner_trace, name, arrays)
    expected = _reference_trace(name, arrays)
    _same_graph(got, expected, f"tracing {name}")
    # catches: a target that is not the Function class (the op's name, say): nothing to run
    assert got["targets"] == expected["targets"], (
        f"tracing {name}: the nodes' targets are {got['targets']}, expected the Function "
        f"classes {expected['targets']}"
    )


# catches: op names from the class name ("Mul"), outputs never bound (later ops see
# constants), keyword arguments dropped, one-output ops only
@exercise("05.1")
def test_record_a_chain_of_ops(run):
    _record_case(run, "chain", [(2, 3), (2, 3)])
    _record_case(run, "joined", [(2, 3), (1, 3)])


# catches: ops with two outputs (max(dim)) recorded as one, captured tensors not mapped,
# slices and scalars changed on the way, delegating to the package's tracer
@exercise("05.1")
def test_record_multi_output_and_captured_tensors(run):
    _record_case(run, "two_outputs", [(3, 4), (2,)])
    _record_case(run, "sliced", [(2, 4), (2, 3)])
    # catches: the outputs bound before the arguments are mapped (an in-place write returns
    # the tensor it was given: its node would read its own output), Values remembered
    # between traces (a module global: CAPTURED, traced before, gets no constant node here)
    _record_case(run, "dead_code", [(2, 3), (2, 3)])


# catches: tensors inside a tuple argument left as tensors (no recursion), tensors in keyword
# arguments left as tensors, delegating the mapping to the tracer's own Tracer.arg
@exercise("05.1")
def test_record_maps_tensors_in_tuples_and_keywords(run):
    _record_case(run, "blended", [(2, 3), (2, 3)])
    # catches: lists turned into tuples, only one level of nesting mapped, a tuple given as a
    # keyword argument left with its tensors
    _record_case(run, "nested", [(2, 3), (2, 3)])


# --- 05.2 the interpreter's loop ------------------------------------------------------------
class _Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x, y):
        return (self.fc(x) * CAPTURED[:1]).tanh() + y.sum()


# a ScriptModule built on the graph runs it with run_graph (called from minitorch, so only
# building one shows it)
_INTERPRETER = (
    interpreter.run_graph,
    interpreter.run_block,
    interpreter.run_node,
    Forbidden((ScriptModule, "__init__"), "minitorch's own ScriptModule (it runs the graph)"),
)


@contextmanager
def _interpreter_refused():
    """While the learner's loop runs, minitorch's interpreter running at all is delegation,
    however it is reached: ``run_graph``, a ScriptModule (one made by ``jit.trace`` and
    handed the graph, one made without ``__init__``), the If and Loop runners all run
    ``run_block``, and when minitorch's own code calls it, the watch on the forbidden
    functions lets it through."""
    ran = []
    package = interpreter.run_block

    def run_block(block, env, attrs):
        ran.append(block)
        return package(block, env, attrs)

    interpreter.run_block = run_block
    try:
        yield
    finally:
        interpreter.run_block = package
    if ran:
        raise Delegated(message("minitorch's own interpreter (run_block)"))


def _counting(counter):
    """A program whose in-place write counts its runs in ``counter`` (not used by the
    output: an interpreter that only runs what the outputs need skips it)."""

    def counted(x, y):
        counter.add_(1.0)
        return x * y

    return counted


def _program(name, counter):
    if name == "module":
        return _Tiny()
    return _counting(counter) if name == "counted" else PROGRAMS[name]


def _grads_of(fn):
    params = list(fn.parameters()) if isinstance(fn, nn.Module) else []
    return [None if p.grad is None else p.grad.numpy().copy() for p in params]


@probe
def interpret(nb, name, arrays):
    mt.manual_seed(0)
    counter = mt.zeros(1)
    fn = _program(name, counter)
    inputs = [mt.tensor(a, requires_grad=True) for a in arrays]
    traced = jit.trace(fn, tuple(inputs))
    attrs = traced.attr_values()
    with refusing(nb, *_INTERPRETER), _interpreter_refused():
        outs = nb.run_nodes(traced.graph, inputs, attrs)
    outs = list(outs)
    floats = [o for o in outs if isinstance(o, mt.Tensor) and o.dtype.is_floating_point]
    graphless = [
        i for i, o in enumerate(outs) if any(o is f for f in floats) and not o.requires_grad
    ]
    if not graphless:  # (backward of outputs with no graph raises: the judge says why)
        sum(o.sum() for o in floats).backward()
    return {
        "outputs": [np.array(o.detach().numpy(), copy=True) for o in outs],
        "graphless": graphless,
        "grads": [None if t.grad is None else t.grad.numpy().copy() for t in inputs],
        "param_grads": _grads_of(fn),
        "runs": counter.item(),
    }


def _eager(name, arrays):
    mt.manual_seed(0)
    fn = _program(name, mt.zeros(1))
    inputs = [mt.tensor(a, requires_grad=True) for a in arrays]
    outs = fn(*inputs)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    sum(o.sum() for o in outs if o.dtype.is_floating_point).backward()
    return [o.detach().numpy() for o in outs], [t.grad.numpy() for t in inputs], _grads_of(fn)


def _interpret_case(run, name, shapes):
    arrays = _inputs(int(run.rng.integers(1 << 30)), shapes)
    got = run(interpret, name, arrays)
    outs, grads, param_grads = _eager(name, arrays)
    assert isinstance(got, dict) and len(got["outputs"]) == len(outs), (
        f"run_nodes on {name} returned {len(got['outputs'])} outputs, expected {len(outs)}"
    )
    for i, (g, e) in enumerate(zip(got["outputs"], outs, strict=True)):
        assert_close(g, e, f"{name}: output {i}", rtol=1e-5, atol=1e-6)
    # catches: the loop run under no_grad (or on arrays, or the outputs detached): the
    # outputs carry no autograd graph, and backward would raise a bare RuntimeError
    assert not got["graphless"], (
        f"run_nodes on {name}: output {got['graphless'][0]} does not require grad, although "
        "the inputs do and eager's output does: autograd recorded nothing while your loop "
        "ran, so no gradient can reach the inputs or the parameters (each node's op must be "
        "recorded as eager records it)"
    )
    for i, (g, e) in enumerate(zip(got["grads"], grads, strict=True)):
        assert g is not None, f"{name}: no gradient reached input {i}: run every node with apply"
        assert_close(g, e, f"{name}: the gradient of input {i}", rtol=1e-4, atol=1e-6)
    # catches: get_attr values detached or copied (the module's parameters get no gradient)
    for i, (g, e) in enumerate(zip(got["param_grads"], param_grads, strict=True)):
        assert g is not None and np.allclose(checked_array(g, e, name), e, rtol=1e-4, atol=1e-6), (
            f"{name}: the gradient of the module's parameter {i} is {g}, expected {e}: a "
            "get_attr node holds the attribute itself, so that training reaches it"
        )
    # catches: only the nodes the outputs need run (an in-place write is skipped), or a
    # constant copied (the write goes to the copy)
    assert got["runs"] == (2.0 if name == "counted" else 0.0), (
        f"{name}: the in-place write in the graph ran {got['runs'] - 1:g} times in run_nodes, "
        "expected once: run every node, in order, on the constant itself"
    )


# catches: arguments not looked up in env, constants or get_attr not handled, no gradient
# (running under no_grad or on raw arrays)
@exercise("05.2")
def test_interpreter_runs_a_module_graph(run):
    _interpret_case(run, "module", [(2, 3), (2,)])
    _interpret_case(run, "chain", [(3, 2), (3, 2)])


# catches: several outputs of one node not unpacked, graph outputs in the wrong order,
# delegating to the package's interpreter (directly, or through a ScriptModule on the graph)
@exercise("05.2")
def test_interpreter_unpacks_multi_output_nodes(run):
    _interpret_case(run, "two_outputs", [(3, 4), (2,)])
    _interpret_case(run, "repeats", [(2, 2), (2, 2)])


# catches: Values in keyword arguments not looked up in env; an interpreter that runs only
# what the outputs need (an in-place write is skipped) or copies constants
@exercise("05.2")
def test_interpreter_keywords_and_writes(run):
    _interpret_case(run, "mixed", [(2, 3), (2, 3)])
    _interpret_case(run, "counted", [(2, 3), (2, 3)])


# --- passes: one probe shape for all three ----------------------------------------------------
# passes.optimize runs all three passes (called from minitorch): an answer that calls it
# delegates, whichever pass it stands for
_PASSES = {
    "eliminate_dead_code": (passes.eliminate_dead_code, passes._dce_block, passes.optimize),
    "fold_constants": (passes.fold_constants, passes._fold_block, passes.optimize),
    "eliminate_common_subexpressions": (
        passes.eliminate_common_subexpressions,
        passes._cse_block,
        passes.optimize,
    ),
}


@probe
def run_pass(nb, pass_name, name, arrays):
    graph, attrs = _traced(name, arrays)
    before = describe(graph)
    with refusing(nb, *_PASSES[pass_name]):
        new = getattr(nb, pass_name)(graph)
    assert describe(graph) == before, f"{pass_name} changed the graph it was given: copy it"
    assert isinstance(new, jit.Graph), f"{pass_name} on {name} returned {new!r}, not a Graph"
    # catches: a Value read that no node defines (a removed node's output still read)
    found = lint_problems(new, check_ops=name not in _CUSTOM_OPS)
    assert not found, f"{pass_name} on {name} returned a malformed graph: {'; '.join(found)}"
    result = jit.run_graph(new, [mt.tensor(a) for a in arrays], attrs)
    result = list(result) if isinstance(result, tuple) else [result]
    return {"graph": describe(new), "values": [r.detach().numpy().copy() for r in result]}


def _pass_case(run, pass_name, name, shapes):
    arrays = _inputs(int(run.rng.integers(1 << 30)), shapes)
    got = run(run_pass, pass_name, name, arrays)
    graph, attrs = _traced(name, arrays)
    expected = describe(_PASSES[pass_name][0](graph))
    _same_graph(got["graph"], expected, f"{pass_name} on {name}")
    ref = jit.run_graph(graph, [mt.tensor(a) for a in arrays], attrs)
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    for g, e in zip(got["values"], ref, strict=True):
        assert_close(g, e.detach().numpy(), f"{name}: the result", rtol=1e-5)


# catches: a single forward walk (a dead chain survives), removing in-place writes,
# changing the graph it was given, removing a node when only some of its outputs are used
@exercise("05.3")
def test_dce_removes_dead_chains_and_keeps_writes(run):
    _pass_case(run, "eliminate_dead_code", "dead_code", [(2, 3), (2, 3)])


# catches: removing graph outputs' producers, delegating to the package's pass (or to
# passes.optimize, which runs it)
@exercise("05.3")
def test_dce_keeps_what_outputs_need(run):
    _pass_case(run, "eliminate_dead_code", "two_outputs", [(3, 4), (2,)])
    _pass_case(run, "eliminate_dead_code", "chain", [(2, 2), (2, 2)])


# catches: unused graph inputs dropped (callers still pass them), a node kept only when its
# first output is used, dead constants kept, inputs in tuples or keywords not marked needed
@exercise("05.3")
def test_dce_keeps_inputs_second_outputs_and_nested_arguments(run):
    _pass_case(run, "eliminate_dead_code", "dead_inputs", [(3, 4), (2, 3)])
    _pass_case(run, "eliminate_dead_code", "blended", [(2, 3), (2, 3)])
    # catches: get_attr nodes kept when nobody reads them (they are pure), the write to a
    # buffer removed (a get_attr's in-place write: not pure)
    _pass_case(run, "eliminate_dead_code", "stateful", [(2, 3), (2,)])


# catches: folding through a tensor that requires grad, folding get_attr or inputs,
# folding only one step of a chain
@exercise("05.4")
def test_folding_evaluates_constant_chains(run):
    _pass_case(run, "fold_constants", "constants", [(2, 3), (1,)])
    # catches: constant Values in keyword arguments not substituted before evaluating
    _pass_case(run, "fold_constants", "mixed", [(2, 3), (2, 3)])
    # catches: the requires-grad check made on the positional arguments only (the constant
    # that requires grad is a keyword argument here: the node is not folded)
    _pass_case(run, "fold_constants", "keyword_weight", [(2, 3), (2, 3)])


# catches: folding nodes that read graph inputs, delegating to the package's pass, folding an
# in-place write whose inputs are constants (it is not pure: it must run every call)
@exercise("05.4")
def test_folding_leaves_input_dependent_nodes(run):
    _pass_case(run, "fold_constants", "chain", [(2, 2), (2, 2)])
    _pass_case(run, "fold_constants", "joined", [(2, 3), (1, 3)])
    _pass_case(run, "fold_constants", "dead_code", [(2, 3), (2, 3)])
    # catches: get_attr nodes taken for constants (a parameter is module state: what reads it
    # is never folded), nothing folded after an in-place write (the write is to a buffer; the
    # constant chain after it reads a constant that nothing writes)
    _pass_case(run, "fold_constants", "stateful", [(2, 3), (2,)])


# catches: inputs not rewritten before the lookup (the second-level duplicate survives),
# graph outputs left pointing at removed nodes, only the first output of a two-output
# duplicate (max(dim)) replaced
@exercise("05.5")
def test_cse_merges_duplicates_and_their_users(run):
    _pass_case(run, "eliminate_common_subexpressions", "repeats", [(2, 2), (2, 2)])


# catches: merging nodes whose constants differ in type (2 vs 2.0) or value, merging
# constant nodes, delegating to the package's pass
@exercise("05.5")
def test_cse_keeps_different_nodes_apart(run):
    _pass_case(run, "eliminate_common_subexpressions", "constants", [(2, 3), (1,)])
    _pass_case(run, "eliminate_common_subexpressions", "chain", [(2, 2), (2, 2)])


# catches: constant nodes merged whatever they hold (keyed by op, dtype and shape, or by
# their printed form): two captured tensors that differ only in value become one
@exercise("05.5")
def test_cse_never_merges_constants_that_differ_in_value(run):
    _pass_case(run, "eliminate_common_subexpressions", "two_constants", [(2, 3), (2, 3)])


# catches: merging two identical in-place writes (nodes that are not pure each run)
@exercise("05.5")
def test_cse_never_merges_writes(run):
    _pass_case(run, "eliminate_common_subexpressions", "writes_twice", [(2, 3), (2, 3)])
    # catches: a write's inputs not rewritten (it reads the removed duplicate's output)
    _pass_case(run, "eliminate_common_subexpressions", "write_after_repeat", [(2, 3), (2, 3)])
    # catches: only positional arguments rewritten (a removed duplicate still read inside a
    # tuple argument, or as a keyword argument)
    _pass_case(run, "eliminate_common_subexpressions", "repeat_in_containers", [(2, 3), (2, 3)])


# --- 05.6 grouping for fusion -----------------------------------------------------------------
@probe
def groups(nb, name, arrays):
    graph = passes.eliminate_common_subexpressions(_trace(name, arrays))
    with refusing(nb, fusion.group_elementwise, fusion.fuse_elementwise, passes.optimize):
        found = nb.group_elementwise(graph)
    return [[n.outputs[0].name for n in group] for group in found]


_ELEMENTWISE = {"add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "tanh",
                "sigmoid", "relu", "maximum", "minimum", "abs"}  # fmt: skip


def _reference_groups(graph):
    def fusible(node):
        out = node.outputs[0] if len(node.outputs) == 1 else None
        return (node.op in _ELEMENTWISE and out is not None and out.shape is not None
                and all(v.dtype == out.dtype for v in node.inputs))  # fmt: skip

    group_of, depends, found = {}, {}, []
    for node in graph.nodes:
        deps = set().union(*(depends.get(v, set()) for v in node.inputs))
        chosen = None
        if fusible(node):
            for v in node.inputs:
                g = group_of.get(v)
                if g is None or found[g][0].outputs[0].shape != node.outputs[0].shape:
                    continue
                others = [u for u in node.inputs if group_of.get(u) != g]
                if not any(g in depends.get(u, set()) for u in others):
                    chosen = g
                    break
            if chosen is None:
                chosen = len(found)
                found.append([])
            found[chosen].append(node)
        for v in node.outputs:
            group_of[v] = chosen if chosen is not None else group_of.get(v)
            depends[v] = deps | ({chosen} if chosen is not None else set())
    return [[n.outputs[0].name for n in g] for g in found if len(g) >= 2]


def _group_case(run, name, shapes):
    arrays = _inputs(int(run.rng.integers(1 << 30)), shapes)
    got = run(groups, name, arrays)
    graph = passes.eliminate_common_subexpressions(_trace(name, arrays))
    expected = _reference_groups(graph)
    assert isinstance(got, list), f"group_elementwise returned {got!r}, not a list of groups"
    got = [list(g) for g in got]
    assert got == expected, (
        f"on {name}: groups {got}, expected {expected} (each group as the names of its nodes' "
        f"outputs, in this graph, which common-subexpression elimination has cleaned):\n{graph}"
    )


# catches: one group per node, singleton groups kept, groups out of graph order (by size)
@exercise("05.6")
def test_groups_of_a_gelu_chain(run):
    _group_case(run, "gelu_block", [(2, 3), (2, 3)])
    _group_case(run, "chain", [(2, 3), (2, 3)])


# catches: joining the last producer's group instead of the first that works, a node that is
# not elementwise (a transpose of the same shape) joining a group
@exercise("05.6")
def test_groups_join_the_first_producer_and_only_elementwise_ops(run):
    _group_case(run, "two_chains", [(3, 3), (3, 3)])
    # catches: only the first input's producer tried (here the first input has no group)
    _group_case(run, "second_producer", [(2, 3), (2, 3)])
    # catches: an elementwise op joining although its inputs differ in dtype (float32 times a
    # bool mask: not fusible; the chain after it starts a group of its own)
    _group_case(run, "masked", [(2, 3), (2, 3)])


# catches: giving up after the first input that has a group (the node starts a group of its
# own although a later input's group fits): there by shape, and there by a cycle
@exercise("05.6")
def test_groups_try_every_input_until_one_fits(run):
    _group_case(run, "narrow_first", [(3, 4), (3, 4)])
    _group_case(run, "cycle_first", [(3, 4), (3, 4)])


# catches: ignoring shapes (a (n, 1) chain fused with (n, d) ops), no cycle check through a
# non-elementwise node, delegating to the package's fusion pass (or to fuse_elementwise)
@exercise("05.6")
def test_groups_respect_shapes_and_cycles(run):
    _group_case(run, "layer_norm", [(3, 4), (4,)])
    _group_case(run, "cycle_risk", [(2, 3), (2, 3)])


# --- 05.7 the guard check ---------------------------------------------------------------------
def _make_arg(desc):
    if desc[0] == "tensor":
        _, shape, dtype, grad = desc
        t = mt.zeros(*shape, dtype=getattr(mt, dtype))
        return t.requires_grad_() if grad else t
    if desc[0] == "array":  # has a shape and a dtype, but is not a Tensor
        return np.zeros(desc[1], dtype=np.float32)
    return list(desc[1]) if isinstance(desc[1], list) else desc[1]  # equal, not the same


def _checks_inside(*functions):
    """The functions defined inside ``functions``: the checks of the guards they build."""
    inner = []
    for f in functions:
        for code in f.__code__.co_consts:
            if isinstance(code, types.CodeType):
                cells = tuple(types.CellType() for _ in code.co_freevars)
                inner.append(types.FunctionType(code, f.__globals__, code.co_name, None, cells))
    return inner


# minitorch.compile's guards, however an answer gets hold of them: made by the compiled
# function (its _guards, or a call to it, which checks them and records why one failed), or
# their checks called one by one
_GUARDS = (
    tensor_guards,
    value_guard,
    grad_mode_guard,
    *(
        Forbidden(f, "minitorch.compile's own guards")
        for f in _checks_inside(tensor_guards, value_guard, grad_mode_guard)
    ),
    *(
        Forbidden((owner, name), "minitorch.compile's own guards")
        for owner, name in [
            (CompiledFunction, "__call__"),
            (CompiledFunction, "_guards"),
            (_Entry, "first_failure"),
            (_Entry, "failed_guard"),
        ]
    ),
)


@probe
def guard_results(nb, cases):
    out = []
    with refusing(nb, *_GUARDS):
        for spec, args, grad_enabled in cases:
            out.append(nb.first_failed_guard(spec, [_make_arg(a) for a in args], grad_enabled))
    return out


def _spec(grad=True, value=3):
    return {
        "grad_enabled": grad,
        "args": [
            {
                "name": "x",
                "kind": "tensor",
                "shape": (4, 8),
                "dtype": "float32",
                "requires_grad": False,
            },  # fmt: skip
            {"name": "n", "kind": "value", "value": value},
        ],
    }


_OK = [("tensor", (4, 8), "float32", False), ("value", 3)]


def _guard_cases(run, cases):
    got = run(guard_results, [(spec, args, grad) for spec, args, grad, _ in cases])
    assert isinstance(got, list) and len(got) == len(cases), f"got {got!r}"
    for (_, args, grad, expected), g in zip(cases, got, strict=True):
        call = f"first_failed_guard(spec, {args}, grad_enabled={grad})"
        if expected is None:
            assert g is None, f"{call} returned {g!r}, but every guard holds"
            continue
        assert isinstance(g, str), f"{call} returned {g!r}, expected a message about {expected}"
        words = expected if isinstance(expected, tuple) else (expected,)
        for w in words:
            assert w in g, f"{call} returned {g!r}: it should mention {w!r}"


# catches: a guard that fails on equal inputs, checking only the shape, size mismatches
# without the index (or counted from 1), dtype checked before the sizes
@exercise("05.7")
def test_guards_on_tensors(run):
    k = int(run.rng.integers(5, 9))
    _guard_cases(run, [
        (_spec(), _OK, True, None),
        (_spec(), [("tensor", (k, 8), "float32", False), ("value", 3)], True,
         ("'x'", "size mismatch at index 0")),
        (_spec(), [("tensor", (4, k + 4), "float32", False), ("value", 3)], True,
         ("'x'", "size mismatch at index 1")),
        (_spec(), [("tensor", (4, 8, 1), "float32", False), ("value", 3)], True, ("'x'", "ndim")),
        (_spec(), [("tensor", (4, 8), "float64", False), ("value", 3)], True, ("'x'", "dtype")),
        (_spec(), [("tensor", (4, 8), "float32", True), ("value", 3)], True,
         ("'x'", "requires_grad")),
        (_spec(), [("tensor", (4, k + 4), "float64", True), ("value", 3)], True,
         ("'x'", "size mismatch at index 1")),
        # catches: the last differing size reported, requires_grad checked before dtype
        (_spec(), [("tensor", (k, k + 4), "float32", False), ("value", 3)], True,
         ("'x'", "size mismatch at index 0")),
        (_spec(), [("tensor", (4, 8), "float64", True), ("value", 3)], True, ("'x'", "dtype")),
        # catches: the sizes compared before the number of dims (zip stops at the shorter)
        (_spec(), [("tensor", (k, 8, 1), "float32", False), ("value", 3)], True, ("'x'", "ndim")),
        # catches: anything with a shape taken for a tensor (a numpy array)
        (_spec(), [("array", (4, 8)), ("value", 3)], True, ("'x'", "not a tensor")),
    ])  # fmt: skip


# catches: grad mode not checked first, 3 == 3.0 accepted as the same Python value (or True
# as 1: isinstance instead of the exact type), a number where a tensor was, delegating to
# minitorch.compile's guards
@exercise("05.7")
def test_guards_on_grad_mode_and_values(run):
    k = int(run.rng.integers(5, 9))
    _guard_cases(run, [
        (_spec(), _OK, False, "grad mode"),
        (_spec(False), _OK, False, None),
        (_spec(), [("tensor", (4, 8), "float32", False), ("value", 3.0)], True, ("'n'", "value")),
        (_spec(), [("tensor", (4, 8), "float32", False), ("value", 4)], True, ("'n'", "value")),
        (_spec(), [("value", 1.0), ("value", 3)], True, ("'x'", "not a tensor")),
        (_spec(), [("tensor", (5, 8), "float32", False), ("value", 3)], False, "grad mode"),
        (_spec(value=1), [("tensor", (4, 8), "float32", False), ("value", True)], True,
         ("'n'", "value")),
        # catches: values compared by identity (an equal list is a different object)
        (_spec(value=[k, 3]), [("tensor", (4, 8), "float32", False), ("value", [k, 3])], True,
         None),
    ])  # fmt: skip


def _said(message, word, value):
    """Whether ``message`` has ``value`` right after ``word`` (``expected 4``, ``actual: 8``)."""
    return re.search(rf"\b{word}[\s:=]{{1,3}}{re.escape(value)}(?![\w.])", message) is not None


# catches: expected and actual swapped ("expected 5, actual 4" when the guard holds 4 and the
# call passed 5), a message that names the guard but not the two values, the value written
# with str() where repr() tells 3 from 3.0 (both are fine here) or True from 1
@exercise("05.7")
def test_guard_messages_say_which_value_is_which(run):
    k = int(run.rng.integers(5, 9))
    cases = [
        (_spec(), [("tensor", (k, 8), "float32", False), ("value", 3)], True, ("4", str(k))),
        (_spec(), [("tensor", (4, k + 4), "float32", False), ("value", 3)], True,
         ("8", str(k + 4))),
        (_spec(), [("tensor", (4, 8, 1), "float32", False), ("value", 3)], True, ("2", "3")),
        (_spec(), [("tensor", (4, 8), "float64", False), ("value", 3)], True,
         ("float32", "float64")),
        (_spec(), [("tensor", (4, 8), "float32", True), ("value", 3)], True, ("False", "True")),
        (_spec(), _OK, False, ("True", "False")),
        (_spec(), [("tensor", (4, 8), "float32", False), ("value", k)], True, ("3", str(k))),
        (_spec(), [("tensor", (4, 8), "float32", False), ("value", 3.0)], True, ("3", "3.0")),
        (_spec(value=1), [("tensor", (4, 8), "float32", False), ("value", True)], True,
         ("1", "True")),
    ]  # fmt: skip
    got = run(guard_results, [(spec, args, grad) for spec, args, grad, _ in cases])
    assert isinstance(got, list) and len(got) == len(cases), f"got {got!r}"
    for (_, args, grad, (want, had)), g in zip(cases, got, strict=True):
        call = f"first_failed_guard(spec, {args}, grad_enabled={grad})"
        assert isinstance(g, str), f"{call} returned {g!r}, expected a message"
        assert _said(g, "expected", want) and _said(g, "actual", had), (
            f"{call} returned {g!r}: the guard expected {want} and the call had {had}, so the "
            f"line should say 'expected {want}' and 'actual {had}'"
        )


# --- 05.8 a model with control flow, shipped ------------------------------------------------
# The grader's models: each is written to a file of its own and imported from there (so that
# jit.script can read its source); the file and the module are gone before the shipped file
# is loaded, in the grader's process, which never imported the class.
SHIPPED_MODELS = {
    "gate": """\
import minitorch as mt
from minitorch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if x.sum() > 0:
            y = (h * 0.5).tanh() * 2.0 + 1.0
        else:
            y = h.exp() - 1.0
            if x.mean() < -1.0:
                y = y * 0.25
        return y
""",
    "halve": """\
import minitorch as mt
from minitorch import nn


class Halve(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(mt.ones(3) * 1.5)

    def forward(self, x):
        y = x * self.scale
        while y.abs().max() > 1.0:
            y = y * 0.5
        return y.tanh() + 1.0
""",
}
#: For each model, the inputs (sign, size) that take each path: the first takes the path
#: that a trace of the first input bakes in, the others the paths it would miss.
SHIPPED_PATHS = {
    "gate": [(1.0, 0.5, "x.sum() > 0"), (-1.0, 0.3, "x.sum() <= 0, x.mean() >= -1"),
             (-1.0, 3.0, "x.sum() <= 0, x.mean() < -1: the nested branch")],
    "halve": [(1.0, 0.2, "no trip through the loop"), (1.0, 3.0, "two trips"),
              (-1.0, 40.0, "six trips")],
}  # fmt: skip
_SHAPES = {"gate": (2, 4), "halve": (2, 3)}


def _shipped_inputs(name, seed):
    rng = np.random.default_rng(seed)
    shape = _SHAPES[name]
    return [
        (sign * (size + 0.1 * np.abs(rng.standard_normal(shape)))).astype(np.float32)
        for sign, size, _ in SHIPPED_PATHS[name]
    ]


@contextmanager
def _model_class(name, folder):
    """The grader's model class, imported from a file of its own; gone afterwards."""
    import importlib.util
    import os
    import sys

    path = os.path.join(folder, f"grader_{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SHIPPED_MODELS[name])
    module_name = f"_grader_model_{name}_{os.getpid()}_{id(folder)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        yield next(v for k, v in vars(module).items() if k[0].isupper() and isinstance(v, type))
    finally:
        sys.modules.pop(module_name, None)
        os.remove(path)


@probe
def ship_model(nb, name, arrays):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, f"{name}.mtjit")
        with _model_class(name, folder) as cls:
            mt.manual_seed(0)
            model = cls()
            nb.ship(model, (mt.tensor(arrays[0]),), target)
        if not os.path.exists(target):
            return {"file": None}
        with open(target, "rb") as f:
            raw = f.read()
    return {"file": np.frombuffer(raw, dtype=np.uint8).copy()}


def _eager_outputs(name, arrays):
    import tempfile

    with tempfile.TemporaryDirectory() as folder, _model_class(name, folder) as cls:
        mt.manual_seed(0)
        model = cls()
        with mt.no_grad():
            return [model(mt.tensor(a)).numpy().copy() for a in arrays]


def _ship_case(run, name):
    import os
    import tempfile

    arrays = _shipped_inputs(name, int(run.rng.integers(1 << 30)))
    got = run(ship_model, name, arrays)
    assert isinstance(got, dict) and isinstance(got.get("file"), np.ndarray), (
        f"ship({name} model, ...) wrote no file at the path it was given"
    )
    expected = _eager_outputs(name, arrays)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{name}.mtjit")
        with open(path, "wb") as f:
            f.write(got["file"].astype(np.uint8).tobytes())
        try:
            loaded = jit.load(path)
        except Exception as err:
            raise AssertionError(
                f"the file ship wrote for the {name} model does not load with "
                f"minitorch.jit.load where the model's class is absent: {type(err).__name__}: "
                f"{err}"
            ) from None
    for (sign, size, path_taken), a, e in zip(SHIPPED_PATHS[name], arrays, expected, strict=True):
        with mt.no_grad():
            try:
                out = loaded(mt.tensor(a))
            except Exception as err:
                raise AssertionError(
                    f"the loaded {name} model raised on an input with {path_taken} "
                    f"(x = {sign:+g} * about {size:g}): {type(err).__name__}: {err}"
                ) from None
        assert isinstance(out, mt.Tensor), f"the loaded {name} model returned {out!r}"
        assert_close(
            out.numpy(), e,
            f"after loading without its class, the {name} model on an input with {path_taken} "
            f"(x = {sign:+g} * about {size:g}): the output",
            rtol=1e-5, atol=1e-6,
        )  # fmt: skip


# catches: a traced model (it bakes in the branch its example took, and the nested branch is
# never recorded), a pickled model or a state dict (minitorch.jit.load refuses them, and the
# class they need is gone), no file written
@exercise("05.8")
def test_shipped_model_takes_every_branch_without_its_class(run):
    _ship_case(run, "gate")


# catches: a trace (it bakes in the example's number of trips through a data-dependent loop)
@exercise("05.8")
def test_shipped_model_loops_as_the_data_says(run):
    _ship_case(run, "halve")


@probe
def explain_model(nb, name, arrays):
    import tempfile

    with tempfile.TemporaryDirectory() as folder, _model_class(name, folder) as cls:
        mt.manual_seed(0)
        model = cls()
        return nb.explain_breaks(model, [(mt.tensor(a),) for a in arrays])


def _break_lines(name):
    """The lines of the grader's model file where a tensor becomes a Python bool."""
    return sorted(
        i + 1
        for i, line in enumerate(SHIPPED_MODELS[name].splitlines())
        if line.strip().startswith(("if ", "while "))
    )


def _explain_case(run, name):
    arrays = _shipped_inputs(name, int(run.rng.integers(1 << 30)))
    text = run(explain_model, name, arrays)
    assert isinstance(text, str), f"explain_breaks({name} model, inputs) returned {text!r}"
    named = sorted({int(n) for n in re.findall(rf"grader_{name}\.py:(\d+)", text)})
    expected = _break_lines(name)
    source = SHIPPED_MODELS[name].splitlines()
    assert named == expected, (
        f"explain_breaks on the {name} model (file grader_{name}.py), run on inputs that take "
        f"every path, names the lines {named}; the graph breaks at lines {expected} ("
        + "; ".join(f"{i}: {source[i - 1].strip()}" for i in expected)
        + f"). Your text:\n{text}"
    )


# catches: the explanation taken before the compiled model ran (no break seen yet), the
# compiled model run on the first input only (the nested branch's break is never reached),
# a text that names lines where nothing breaks, a trace's warnings instead of compile's
@exercise("05.8")
def test_explanation_names_every_graph_break(run):
    _explain_case(run, "gate")
    _explain_case(run, "halve")
