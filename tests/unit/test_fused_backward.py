"""A fused kernel's generated backward (issue 20): each op's gradient formula says what
its backward computes, the generated code gives eager's gradients whichever way the
kernel is cut, and the arrays compiled kernels hand out again are never still in use."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as mt
from minitorch import jit
from minitorch.jit import buffers, fusion
from minitorch.jit.fused_backward import backward_source, worth_keeping
from minitorch.jit.ops import ELEMENTWISE, function_for
from minitorch.ops.scalar import arity

from .fuser_programs import grow, programs

OPS = sorted(ELEMENTWISE)


def _kernel_of(graph):
    fused = [n for n in graph.graph.nodes if n.op == "fused"]
    assert fused, "nothing was fused"
    return max(fused, key=lambda n: len(n.target.ops)).target


def _edgy(rng, shape):
    """Values with exact zeros, ties and signs: where piecewise gradients differ."""
    a = rng.standard_normal(shape)
    a.flat[::7] = 0.0
    b = rng.standard_normal(shape)
    b.flat[::5] = a.flat[::5]  # ties for maximum/minimum
    b.flat[::11] = 0.0
    return a, b


def test_every_elementwise_op_has_one_gradient_formula_per_operand():
    # catches: an op added to the fusers without a gradient formula (its fused node would
    # have no generated backward), or a formula for the wrong number of operands
    for name in OPS:
        op = function_for(name)
        assert len(op.scalar_grad) == arity(op.scalar), name


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("operands", ["tensors", "number first", "number second"])
def test_each_ops_gradient_formula_is_its_backward(name, operands):
    # catches: a gradient formula that differs from the op's backward (a sign, a factor,
    # the tie rule of maximum, pow's zero cases, the wrong operand)
    op = function_for(name)
    two = arity(op.scalar) == 2
    if not two and operands != "tensors":
        pytest.skip("one operand")
    rng = np.random.default_rng(0)
    a, b = _edgy(rng, (64, 33))
    if name in ("log", "sqrt"):
        a = np.abs(a) + 0.5
    if name == "div":
        b = np.where(b == 0.0, 1.0, b)  # (no 0 / 0 in the divisor's gradient)
    if name == "pow":
        a = np.abs(a) + 0.1  # (negative bases to fractional powers are nan both ways)
        a.flat[::22] = 0.0  # 0 ** 0 where the exponent is 0 too: its gradients are 0
    number = {"pow": 2.0}.get(name, 0.75)

    def fn(x, y):
        u = x * 1.5
        if not two:
            return op.apply(u) * 2.0
        if operands == "number first":
            return op.apply(number, u) * 2.0
        if operands == "number second":
            return op.apply(u, number) * 2.0
        return op.apply(u, y * 0.5) * 2.0

    xs = [mt.tensor(a.astype(np.float32)), mt.tensor(b.astype(np.float32))]
    graph = jit.optimize(jit.trace(fn, tuple(xs)))
    assert name in _kernel_of(graph).summary()
    got = [t.detach().clone().requires_grad_() for t in xs]
    graph(*got).sum().backward()
    want = [t.detach().clone().requires_grad_() for t in xs]
    fn(*want).sum().backward()
    for g, w in zip(got, want, strict=True):
        if w.grad is None:
            assert g.grad is None or not g.grad.numpy().any()
            continue
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("exponent", [0.0, 1.0, 2.0, 0.5, -1.0])
def test_powers_by_a_number_fold_and_keep_their_zero_rules(exponent):
    # catches: folding x ** 0 into a gradient of 0 * x ** -1 (nan at x = 0 where eager
    # gives 0), or x ** 1 into anything but the gradient itself
    x = mt.tensor(np.array([[0.0, 1.0, 2.0, 3.0], [0.5, 4.0, 1.5, 2.5]], np.float32))

    def fn(t):
        return (t * 1.0 + 1.0) ** exponent * 3.0

    graph = jit.optimize(jit.trace(fn, (x,)))
    got, want = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    graph(got).sum().backward()
    fn(want).sum().backward()
    np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-6)


def test_a_row_local_kernels_backward_spreads_each_rows_gradient_back():
    # catches: a mean's gradient not divided by its count, or a per-row value's gradient
    # not summed over its row
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((300, 257)).astype(np.float32))
    w = mt.tensor(rng.standard_normal(257).astype(np.float32))

    def norm(x, w):
        centred = x - x.mean(dim=-1, keepdim=True)
        var = (centred * centred).mean(dim=-1, keepdim=True)
        return centred / mt.sqrt(var + 1e-5) * w + x.sum(dim=-1, keepdim=True) * 0.01

    graph = jit.optimize(jit.trace(norm, (x, w)))
    assert _kernel_of(graph).row_local
    upstream = mt.tensor(rng.standard_normal((300, 257)).astype(np.float32))
    got = [t.detach().clone().requires_grad_() for t in (x, w)]
    want = [t.detach().clone().requires_grad_() for t in (x, w)]
    (graph(*got) * upstream).sum().backward()
    (norm(*want) * upstream).sum().backward()
    for g, e in zip(got, want, strict=True):
        scale = float(np.abs(e.grad.numpy()).max())
        np.testing.assert_allclose(g.grad.numpy(), e.grad.numpy(), rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("shape", [(4, 3, 5), (3000, 2, 40)], ids=["whole", "chunks"])
def test_a_reductions_gradient_reaches_a_per_row_value_it_was_broadcast_from(shape):
    # catches: a mean's gradient left at its (rows, 1) shape, so that a per-row value the
    # mean's source was broadcast from takes one element's share instead of the row's sum
    def fn(x):
        shifted = x + x.mean(dim=-1, keepdim=True)  # (the per-row mean, broadcast)
        return shifted.mean(dim=-1, keepdim=True) + x * 0.5

    rng = np.random.default_rng(2)
    x = mt.tensor(rng.standard_normal(shape), requires_grad=True)
    graph = jit.optimize(jit.trace(fn, x))
    assert _kernel_of(graph).row_local
    upstream = mt.tensor(rng.standard_normal(shape))
    (got,) = mt.autograd.grad((graph(x) * upstream).sum(), x)
    (want,) = mt.autograd.grad((fn(x) * upstream).sum(), x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)


def _grads_match_eager(fn, inputs, rtol=1e-6):
    """The optimized graph's gradients of ``sum(output * upstream)`` over its outputs,
    against eager's (``inputs``: float64 arrays, all wanting a gradient); the graph."""
    graph = jit.optimize(jit.trace(fn, tuple(mt.tensor(a) for a in inputs)))
    grads = []
    for run in (graph, fn):
        leaves = [mt.tensor(a, requires_grad=True) for a in inputs]
        outs = run(*leaves)
        outs = outs if isinstance(outs, tuple) else (outs,)
        ups = [np.random.default_rng(k).standard_normal(o.shape) for k, o in enumerate(outs)]
        loss = sum((o * mt.tensor(u)).sum() for o, u in zip(outs, ups, strict=True))
        grads.append([g.numpy() for g in mt.autograd.grad(loss, leaves)])
    for got, want in zip(*grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
    return graph


@pytest.mark.parametrize("rows", [3, 3000], ids=["whole", "chunks"])
def test_an_inputs_gradient_of_two_shapes_is_summed_part_by_part(rows):
    # catches: a column input's per-row part (through a per-row op) added to its full part
    # before the sum to the column's shape, so that the per-row part counted once per column
    def fn(x, c):
        per_row = mt.tanh((c + x).mean(dim=-1, keepdim=True))  # (rows, 1)
        return (c + per_row + x) * 2.0

    rng = np.random.default_rng(4)
    inputs = (rng.standard_normal((rows, 5)), rng.standard_normal((rows, 1)))
    assert _kernel_of(_grads_match_eager(fn, inputs)).row_local


def test_a_gradient_read_through_a_view_keeps_its_buffer():
    # catches: a mean's spread gradient (a view of a buffer) read after the buffer was given
    # to another value (the gradient came out doubled)
    def fn(c):
        t = mt.tanh(c)
        return mt.tanh(t) + 1.0, t.mean(dim=-1, keepdim=True) * 1.5

    _grads_match_eager(fn, (np.random.default_rng(5).standard_normal((3, 1)),))


def test_an_output_that_needs_no_input_with_grad_does_not_require_grad():
    # catches: every output of a fused node requiring grad, where eager's does not
    def fn(x, r):
        a = mt.tanh(x)
        return a + x, mt.maximum(r, a) + 1.0

    x, r = mt.randn(3, 5), mt.randn(5, requires_grad=True)
    graph = jit.optimize(jit.trace(fn, (x, r)))
    assert [o.requires_grad for o in graph(x, r)] == [o.requires_grad for o in fn(x, r)]
    assert [o.requires_grad for o in fn(x, r)] == [False, True]


def test_an_output_written_in_place_refuses_backward_as_in_eager():
    # catches: training's kept results held as bare arrays, so that backward silently read
    # an output the program had since changed in place (eager refuses: the value is gone)
    def fn(x):
        return mt.tanh(x * 2.0)  # (tanh's result is kept for backward)

    x = mt.randn(4, 5, requires_grad=True)
    graph = jit.optimize(jit.trace(fn, x))
    for run in (fn, graph):
        y = run(x)
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_threads_give_one_threads_gradients_bit_for_bit(monkeypatch):
    # catches: partial sums of a broadcast input's gradient added in the order threads
    # finish (results that change from run to run), or chunks written twice or never
    rng = np.random.default_rng(2)
    x = mt.tensor(rng.standard_normal((4096, 300)).astype(np.float32))
    b = mt.tensor(rng.standard_normal(300).astype(np.float32))

    def fn(x, b):
        return mt.tanh(x * b + 0.5) * x

    graph = jit.optimize(jit.trace(fn, (x, b)))
    assert fusion.chunk_plan(_kernel_of(graph), (x.numpy(), b.numpy()))[0] == "rows"
    results = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(mt.threads, "_threads", threads)
        leaves = [t.detach().clone().requires_grad_() for t in (x, b)]
        graph(*leaves).sum().backward()
        results.append([t.grad.numpy().copy() for t in leaves])
    for other in results[1:]:
        for a, c in zip(results[0], other, strict=True):
            np.testing.assert_array_equal(a, c)
    eager = [t.detach().clone().requires_grad_() for t in (x, b)]
    fn(*eager).sum().backward()
    np.testing.assert_allclose(results[0][0], eager[0].grad.numpy(), rtol=1e-5, atol=1e-6)
    scale = float(np.abs(eager[1].grad.numpy()).max())
    np.testing.assert_allclose(results[0][1], eager[1].grad.numpy(), rtol=1e-4, atol=1e-5 * scale)


def test_training_keeps_the_costly_results_and_recomputes_the_cheap_ones():
    # catches: keeping every intermediate (the memory eager spends) or none (tanh
    # computed twice), or a kept value that backward then ignores
    x = mt.randn(64, 128)

    def gelu(h):
        return 0.5 * h * (1.0 + mt.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))

    kernel = _kernel_of(jit.optimize(jit.trace(gelu, (x,))))
    keep = worth_keeping(kernel, (True,))
    assert [kernel.ops[j].op for j in sorted(keep)] == ["tanh"]
    made = backward_source(kernel, (True,), (True,), keep)
    assert "np.tanh" not in made.source  # read, not recomputed
    assert "np.tanh" in backward_source(kernel, (True,), (True,)).source
    leaf = x.detach().clone().requires_grad_()
    out = jit.optimize(jit.trace(gelu, (x,)))(leaf)
    assert type(out.grad_fn).__name__.startswith("FusedElementwiseKept")
    out.sum().backward()
    want = x.detach().clone().requires_grad_()
    gelu(want).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_second_derivatives_still_flow_through_a_fused_node():
    # catches: the generated backward (plain arrays, no graph) used under create_graph
    x = mt.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))

    def fn(t):
        return mt.tanh(t * 1.5) * t

    graph = jit.optimize(jit.trace(fn, (x,)))
    got, want = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    (g1,) = mt.autograd.grad(graph(got).sum(), [got], create_graph=True)
    (w1,) = mt.autograd.grad(fn(want).sum(), [want], create_graph=True)
    g1.sum().backward()
    w1.sum().backward()
    np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_broadcast_upstream_gradient_is_read_as_it_is():
    # catches: a zero-stride gradient (from sum or expand) sliced as if contiguous
    x = mt.randn(600, 1000)

    def fn(t):
        return mt.sigmoid(t) * t + 1.0

    graph = jit.optimize(jit.trace(fn, (x,)))
    got, want = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    graph(got).sum().backward()  # the upstream gradient is ones broadcast to (600, 1000)
    fn(want).sum().backward()
    np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-6)


# --- arrays handed out again --------------------------------------------------------------


def test_an_array_is_handed_out_again_only_once_nothing_holds_it():
    # catches: reuse of an array a tensor, a view or a plain name still refers to
    reuse = buffers.Reuse()
    first = reuse.empty((256, 1024), np.float32)
    address = first.__array_interface__["data"][0]
    held = reuse.empty((256, 1024), np.float32)
    assert held is not first
    view = first[3:5]
    del first
    assert reuse.empty((256, 1024), np.float32).__array_interface__["data"][0] != address
    del view
    again = reuse.empty((256, 1024), np.float32)
    assert again.__array_interface__["data"][0] == address
    tensor = mt.Tensor._from_array(again)
    del again
    assert reuse.empty((256, 1024), np.float32).__array_interface__["data"][0] != address
    del tensor
    assert reuse.empty((256, 1024), np.float32).__array_interface__["data"][0] == address
    assert reuse.empty((256, 1023), np.float32).shape == (256, 1023)  # another shape: new
    small = reuse.empty((4, 4), np.float32)
    assert small is not reuse.empty((4, 4), np.float32) or small.nbytes >= buffers.REUSE_BYTES


def test_a_compiled_graphs_results_survive_its_next_calls():
    # catches: an output array handed out again while the caller still holds it (the
    # first result silently overwritten by the second call)
    x1, x2 = mt.randn(512, 1024), mt.randn(512, 1024)

    def fn(t):
        return mt.tanh(t * 2.0) + t

    graph = jit.optimize(jit.trace(fn, (x1,)))
    with mt.no_grad():
        y1 = graph(x1)
        kept = y1.numpy().copy()
        row = graph(x1)[0]  # a view of the second result, its tensor dropped
        row_values = row.numpy().copy()
        for _ in range(3):
            graph(x2)
    np.testing.assert_array_equal(y1.numpy(), kept)
    np.testing.assert_array_equal(row.numpy(), row_values)
    np.testing.assert_allclose(kept, fn(x1).numpy(), rtol=1e-6)


# Random programs of every kind the fuser meets at once: inputs that broadcast (a row, a
# column), reductions over rows, several outputs, only some inputs wanting a gradient and
# only some outputs used, of float32 and float64, whole and in chunks.
_UNARY = [
    mt.tanh,
    mt.sigmoid,
    mt.relu,
    lambda t: -t,
    lambda t: t.abs(),
    lambda t: t * 0.5,
    lambda t: mt.exp(t * 0.3),
    lambda t: mt.log(t.abs() + 0.5),
    lambda t: mt.sqrt(t.abs() + 0.1),
    lambda t: t**2.0,
    lambda t: 2.0 ** (t * 0.2),
    lambda t: 1.0 / (t.abs() + 1.0),
    lambda t: mt.nn.functional.gelu(t),
]
_BINARY = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a - b,
    mt.maximum,
    mt.minimum,
    lambda a, b: a / (b.abs() + 0.5),
    lambda a, b: (a.abs() + 0.5) ** (b * 0.3),
]
_REDUCE = [lambda t: t.mean(dim=-1, keepdim=True), lambda t: t.sum(dim=-1, keepdim=True)]


def _program(choices, n_out):
    def run(x, r, c):
        values = grow([x, r, c], choices, _UNARY, _BINARY, _REDUCE)
        outs = ((values[-1] + x) * 2.0, values[len(values) // 2] + 1.0, values[-2] * 1.5)
        return outs[:n_out]

    return run


@settings(max_examples=400, deadline=None, derandomize=True)  # (the same programs each run)
@given(
    choices=programs(kinds=3, ops=14, max_size=12),
    shape=st.sampled_from([(3, 5), (300, 700), (5000, 3)]),
    dtype=st.sampled_from(["float32", "float64"]),
    wants=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    n_out=st.integers(1, 3),
    used=st.integers(0, 3),
)
def test_random_programs_of_every_kind_match_eager(choices, shape, dtype, wants, n_out, used):
    # catches: any gradient the generated backward gets wrong (or a requires_grad flag that
    # differs from eager's) in combinations no single test above writes out
    fn = _program(choices, n_out)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (shape, shape[1:], (shape[0], 1))]

    def leaves():
        return [mt.tensor(a, requires_grad=w) for a, w in zip(arrays, wants, strict=True)]

    graph = jit.optimize(jit.trace(fn, tuple(leaves())))
    tol = 1e-4 if dtype == "float32" else 1e-10
    results = []
    for run in (graph, fn):
        ins = leaves()
        outs = run(*ins)
        taken = [o for k, o in enumerate(outs) if k == 0 or used >> (k - 1) & 1]
        ups = [np.random.default_rng(k).standard_normal(o.shape) for k, o in enumerate(taken)]
        loss = sum((o * mt.tensor(u.astype(dtype))).sum() for o, u in zip(taken, ups, strict=True))
        wanted = [t for t in ins if t.requires_grad]
        grads = mt.autograd.grad(loss, wanted, allow_unused=True) if loss.requires_grad else ()
        results.append((outs, [o.requires_grad for o in outs], grads))
    (outs, flags, grads), (e_outs, e_flags, e_grads) = results
    for o, e in zip(outs, e_outs, strict=True):
        np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol)
    assert flags == e_flags
    for g, e in zip(grads, e_grads, strict=True):
        if e is None:  # (an input the used outputs do not depend on)
            assert g is None or not g.numpy().any()
            continue
        scale = max(1.0, float(np.abs(e.numpy()).max()))
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=10 * tol, atol=10 * tol * scale)
