"""Graded tests for chapter 02 (autograd).

The learner's pieces run inside the real engine, in *probes*: their Functions are
applied in bigger graphs next to minitorch's own ops and ``.backward()`` runs; a probe
returns the gradients it saw, as arrays. The *judges* (``@exercise``) build the same graph
from minitorch's own ops, here in the grader, and compare, or compare with finite
differences of the reference. Each failure says in one line what was expected and what
came out. Leaves are described by plain specs ``(seed, shape, low, high, dtype)``, so
that the probe and the judge build the same values.
"""

import contextlib
import importlib
import sys

import numpy as np

import minitorch
from minitorch import Function, Tensor
from minitorch.autograd import Node, engine
from minitorch.course import viz_graph as _figure
from minitorch.course.grading import Forbidden, exercise, forbid, forbidding, probe, tensor_data
from minitorch.ops import elementwise, linalg, reduce, views

F64 = minitorch.float64
_checks = importlib.import_module("minitorch.autograd.gradcheck")

# What each exercise may not hand its piece to (see minitorch.course.grading.delegation).
_NO_RECURSION = Forbidden(
    sys.setrecursionlimit, "sys.setrecursionlimit (walk the graph with a loop, not recursion)"
)
_ENGINE = (engine.backward, engine.grad, engine._run, engine._dependencies, engine._needed)
# catches: a gradient summed back by a backward of minitorch's that calls its unbroadcast
# (Expand.backward(ctx, grad) with a made-up ctx, Add.backward, ...) or by the engine's check
_SUM_BACK = (
    views.Expand,
    elementwise.Add,
    elementwise.Sub,
    elementwise.Mul,
    elementwise.Div,
    elementwise.Where,
    engine._validate,
)
# catches: a backward that hands its derivative to minitorch's engine (autograd.grad or
# .backward() on a copy of the inputs, inside backward)
_IN_BACKWARD = forbid(*_ENGINE, Tensor.backward)
FORBIDDEN = {
    "02.1": forbid(elementwise.Mul, elementwise.Div),
    "02.2": forbid(elementwise.Exp, elementwise.Log),
    "02.3": forbid(elementwise.unbroadcast, *_SUM_BACK),
    "02.4": forbid(linalg.MatMul, linalg.matmul_arrays, elementwise.unbroadcast, *_SUM_BACK),
    "02.5": forbid(reduce.Sum, reduce._expand_back),
    "02.6": forbid(*_ENGINE, Tensor.backward, _figure.graph_layout, _NO_RECURSION),
    "02.7": forbid(
        *_ENGINE,
        engine._Pass,
        engine._accumulate_into,
        engine._add_to,
        Tensor.backward,
        _NO_RECURSION,
    ),
    "02.8": forbid(),
    # catches: the central difference handed to numpy (np.gradient of f(x-eps), f(x), f(x+eps))
    "02.9": forbid(_checks.gradcheck, _checks.gradgradcheck, _checks._compare, np.gradient),
}


_TUPLE_RULE = (
    "return a tuple with one gradient (or None) per argument of forward, in forward's order "
    "(a list is not a tuple)"
)


def _answer(nb):
    """The notebook's definitions as the delegation watch scans them (a class imported and
    left unused costs nothing: the watch scans the names the probes look up)."""
    return nb


# --- helpers, on both sides ---------------------------------------------------------------
def _spec(seed, *shape, low=None, high=None, dtype="float64"):
    return (int(seed), tuple(shape), low, high, dtype)


def _leaf(spec):
    """A leaf that requires grad, with reproducible values, from a spec."""
    seed, shape, low, high, dtype = spec
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) if low is None else rng.uniform(low, high, size=shape)
    dtype = getattr(minitorch, dtype)
    return minitorch.tensor(np.asarray(values), dtype=dtype, requires_grad=True)


def _grad(t):
    return None if t.grad is None else np.array(t.grad.detach().numpy(), dtype=np.float64)


def _weights(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _array(t):
    return np.asarray(t.detach().numpy() if isinstance(t, minitorch.Tensor) else t)


def _close(got, expected, what, atol=1e-6, rtol=1e-5):
    """Assert ``got`` (an array from a probe, or None) matches ``expected`` elementwise."""
    assert got is not None, f"{what} is None: no gradient reached it"
    got = got if isinstance(got, np.ndarray) else np.asarray(got)
    assert got.dtype.kind in "fiub", f"{what} is {got!r}, not numbers"
    expected = _array(expected)
    assert got.shape == expected.shape, f"{what} has shape {got.shape}, expected {expected.shape}"
    bad = ~np.isclose(got, expected, atol=atol, rtol=rtol)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{what} is {got[index]:.6g} at index {index}, expected {expected[index]:.6g}"
        )


# The graphs built with the learner's pieces (probe side) and with minitorch's ops (judge
# side): f(nb, leaves, constants, params) and g(leaves, constants, params).
MINE = {
    "mul": lambda nb, L, C, P: (nb.Mul.apply(L[0], L[1]).exp() + nb.Mul.apply(L[0], 3.0)).sum(),
    "div": lambda nb, L, C, P: (
        nb.Div.apply(L[0], L[1]).tanh() + nb.Div.apply(2.0, L[1]) + nb.Div.apply(L[0], 4.0)
    ).sum(),
    "mul_self": lambda nb, L, C, P: nb.Mul.apply(L[0], L[0]).sum(),
    "exp_log": lambda nb, L, C, P: (
        nb.Log.apply(nb.Exp.apply(L[0]) + 1.0).sum()
        + (nb.Log.apply(nb.Exp.apply(L[0]).sum(1)) * 2.0).sum()
    ),
    "add": lambda nb, L, C, P: (nb.Add.apply(L[0] * 2.0, L[1].tanh()) * C[0]).sum(),
    "matmul": lambda nb, L, C, P: (nb.MatMul.apply(L[0], L[1]) * C[0]).sum(),
    "two_layers": lambda nb, L, C, P: (
        nb.MatMul.apply(nb.MatMul.apply(L[0], L[1]).relu(), L[2]).tanh().mean()
    ),
    "sum": lambda nb, L, C, P: (nb.Sum.apply(L[0], P[0], P[1]) * C[0]).sum(),
    "softmax_sum": lambda nb, L, C, P: (
        (L[0].exp() / nb.Sum.apply(L[0].exp(), 1, True) * L[1]).sum()
        + nb.Sum.apply(nb.Sum.apply(L[0] * L[0], 0, False), None, False)
    ),
    "sum_squared": lambda nb, L, C, P: (
        (nb.Sum.apply(L[0] * L[0], 1, False) ** 2).sum()
        + nb.Sum.apply(L[0], (0,), True).tanh().sum()
    ),
}

REFERENCE = {
    "mul": lambda L, C, P: ((L[0] * L[1]).exp() + L[0] * 3.0).sum(),
    "div": lambda L, C, P: ((L[0] / L[1]).tanh() + 2.0 / L[1] + L[0] / 4.0).sum(),
    "mul_self": lambda L, C, P: (L[0] * L[0]).sum(),
    "exp_log": lambda L, C, P: (
        (L[0].exp() + 1.0).log().sum() + (L[0].exp().sum(1).log() * 2.0).sum()
    ),
    "add": lambda L, C, P: ((L[0] * 2.0 + L[1].tanh()) * C[0]).sum(),
    "matmul": lambda L, C, P: ((L[0] @ L[1]) * C[0]).sum(),
    "two_layers": lambda L, C, P: ((L[0] @ L[1]).relu() @ L[2]).tanh().mean(),
    "sum": lambda L, C, P: (L[0].sum(P[0], keepdim=P[1]) * C[0]).sum(),
    "softmax_sum": lambda L, C, P: (
        (L[0].exp() / L[0].exp().sum(1, keepdim=True) * L[1]).sum() + (L[0] * L[0]).sum(0).sum()
    ),
    "sum_squared": lambda L, C, P: (
        ((L[0] * L[0]).sum(1) ** 2).sum() + L[0].sum(0, keepdim=True).tanh().sum()
    ),
}


GRAPH_EXERCISE = {
    "mul": "02.1",
    "div": "02.1",
    "mul_self": "02.1",
    "exp_log": "02.2",
    "add": "02.3",
    "matmul": "02.4",
    "two_layers": "02.4",
    "sum": "02.5",
    "softmax_sum": "02.5",
    "sum_squared": "02.5",
}


@probe
def graph_grads(nb, graph, specs, constants, params):
    leaves = [_leaf(s) for s in specs]
    consts = [minitorch.tensor(c) for c in constants]
    with forbidding(FORBIDDEN[GRAPH_EXERCISE[graph]], _answer(nb)):
        MINE[graph](nb, leaves, consts, params).backward()
    return [_grad(t) for t in leaves]


def _hessian_vector(loss, leaves, seed):
    """d/dleaves of sum_i (dloss/dleaf_i . v_i) for fixed random v: second derivatives."""
    grads = minitorch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    total = None
    for k, (g, leaf) in enumerate(zip(grads, leaves, strict=True)):
        if g is not None and g.requires_grad:
            v = minitorch.tensor(_weights(seed + k, tuple(leaf.shape)), dtype=leaf.dtype)
            term = (g * v).sum()
            total = term if total is None else total + term
    if total is None:
        return [None for _ in leaves]
    second = minitorch.autograd.grad(total, leaves, allow_unused=True)
    return [None if h is None else np.array(h.numpy(), dtype=np.float64) for h in second]


@probe
def graph_second_derivatives(nb, graph, specs, constants, params):
    leaves = [_leaf(s) for s in specs]
    consts = [minitorch.tensor(c) for c in constants]
    with forbidding(FORBIDDEN[GRAPH_EXERCISE[graph]], _answer(nb)):
        return _hessian_vector(MINE[graph](nb, leaves, consts, params), leaves, 500)


def _same_second_derivatives(run, graph, specs, what, constants=(), params=()):
    """Second derivatives through the learner's backward (create_graph=True) against
    minitorch's: a backward that detaches or goes through numpy loses them."""
    got = run(graph_second_derivatives, graph, specs, list(constants), list(params))
    leaves = [_leaf(s) for s in specs]
    loss = REFERENCE[graph](leaves, [minitorch.tensor(c) for c in constants], list(params))
    expected = _hessian_vector(loss, leaves, 500)
    hint = (
        "(write backward with Tensor ops on ctx.saved_tensors, never .detach(), .numpy() "
        "or minitorch.tensor(...) of arrays, so that create_graph=True can differentiate it)"
    )
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        shape = tuple(leaves[k].shape)
        g = np.zeros(shape) if g is None else g
        e = np.zeros(shape) if e is None else e
        _close(g, e, f"{what}: a second derivative (create_graph=True) for input {k} {hint}")


def _same_grads(run, graph, specs, what, constants=(), params=()):
    """The learner's graph and minitorch's: their leaves' gradients must agree."""
    got = run(graph_grads, graph, specs, list(constants), list(params))
    leaves = [_leaf(s) for s in specs]
    REFERENCE[graph](leaves, [minitorch.tensor(c) for c in constants], list(params)).backward()
    for k, (g, leaf) in enumerate(zip(got, leaves, strict=True)):
        _close(g, leaf.grad, f"{what}: the gradient of input {k}")


# The learner's Functions whose Jacobians are compared with finite differences.
FUNCTION_EXERCISE = {"Mul": "02.1", "Div": "02.1", "Exp": "02.2", "Log": "02.2", "MatMul": "02.4"}
FUNCTIONS = {
    "Mul": lambda nb: nb.Mul.apply,
    "Div": lambda nb: nb.Div.apply,
    "Exp": lambda nb: nb.Exp.apply,
    "Log": lambda nb: nb.Log.apply,
    "MatMul": lambda nb: nb.MatMul.apply,
    "Sum(x, 1, False) * 2": lambda nb: lambda t: nb.Sum.apply(t, 1, False) * 2.0,
    "Sum(x, (0, 1), True)": lambda nb: lambda t: nb.Sum.apply(t, (0, 1), True),
}
REFERENCE_FUNCTIONS = {
    "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b,
    "Exp": lambda a: a.exp(),
    "Log": lambda a: a.log(),
    "MatMul": lambda a, b: a @ b,
    "Sum(x, 1, False) * 2": lambda t: t.sum(1) * 2.0,
    "Sum(x, (0, 1), True)": lambda t: t.sum((0, 1), keepdim=True),
}


@probe
def jacobian(nb, name, specs):
    """The Jacobian of the learner's function from its backward: one row per output."""
    leaves = [_leaf(s) for s in specs]
    with forbidding(FORBIDDEN[FUNCTION_EXERCISE.get(name, "02.5")], _answer(nb)):
        out = FUNCTIONS[name](nb)(*leaves)
        rows = _jacobian_rows(out, leaves)
    return rows


def _jacobian_rows(out, leaves):
    rows = []
    for j in range(out.numel()):
        seed = np.zeros(out.numel())
        seed[j] = 1.0
        go = minitorch.tensor(seed.reshape(tuple(out.shape)), dtype=out.dtype)
        grads = minitorch.autograd.grad(out, leaves, go, retain_graph=True, allow_unused=True)
        rows.append([None if g is None else np.array(g.numpy(), dtype=np.float64) for g in grads])
    return rows


def _finite_differences(run, name, specs, what, eps=1e-6):
    """The learner's Jacobian (from backward) against central differences of minitorch's."""
    rows = run(jacobian, name, specs)
    values = [np.array(_leaf(s).detach().numpy(), dtype=np.float64) for s in specs]
    fn = REFERENCE_FUNCTIONS[name]

    def forward(arrays):
        return np.array(fn(*[minitorch.tensor(a) for a in arrays]).numpy(), dtype=np.float64)

    out = forward(values)
    assert len(rows) == out.size, (
        f"{what}: the output has {len(rows)} elements, expected {out.size}"
    )
    for n, x in enumerate(values):
        for p in np.ndindex(*x.shape):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[n][p] += eps
            minus[n][p] -= eps
            numeric = ((forward(plus) - forward(minus)) / (2 * eps)).ravel()
            for j in range(out.size):
                g = rows[j][n]
                analytic = 0.0 if g is None else np.asarray(g, dtype=np.float64)[p]
                if not np.isclose(analytic, numeric[j], atol=1e-5, rtol=1e-3):
                    raise AssertionError(
                        f"{what} disagrees with finite differences: d out[{j}] / d input{n}"
                        f"{list(p)} is {analytic:.6g} by your backward, {numeric[j]:.6g} by "
                        "finite differences"
                    )


# Second derivatives through the learner's backward (create_graph=True).
SECOND = {
    "cube": lambda nb, x: nb.Mul.apply(x, nb.Mul.apply(x, x)).sum(),
    "reciprocal": lambda nb, x: nb.Div.apply(1.0, x).sum(),
    "exp": lambda nb, x: nb.Exp.apply(x).sum(),
    "log": lambda nb, x: nb.Log.apply(x).sum(),
}


@probe
def second_derivative(nb, name, spec):
    x = _leaf(spec)
    exercise_id = "02.1" if name in ("cube", "reciprocal") else "02.2"
    with forbidding(FORBIDDEN[exercise_id], _answer(nb)):
        (g,) = minitorch.autograd.grad(SECOND[name](nb, x), x, create_graph=True)
        # catches: a backward made of constants (a saved value kept on the class, or read
        # through numpy): the gradient has no graph, so the judge's hint is shown, not the
        # engine's error about a tensor that does not require grad
        if not g.requires_grad:
            return None
        (gg,) = minitorch.autograd.grad(g.sum(), x, allow_unused=True)
    return None if gg is None else np.array(gg.detach().numpy(), dtype=np.float64)


# --- 02.1 Mul and Div ---------------------------------------------------------------------
# catches: a wrong local derivative for either input; a constant second input
@exercise("02.1")
def test_mul_in_a_graph_matches_minitorch(run):
    s = int(run.rng.integers(1000))
    specs = [_spec(1 + s, 3, 4), _spec(2 + s, 3, 4)]
    _same_grads(run, "mul", specs, "(Mul(x, y).exp() + Mul(x, 3)).sum()")


# catches: the quotient rule's sign or square; a constant numerator
@exercise("02.1")
def test_div_in_a_graph_matches_minitorch(run):
    s = int(run.rng.integers(1000))
    specs = [_spec(3 + s, 2, 5), _spec(4 + s, 2, 5, low=0.5, high=2.0)]
    _same_grads(run, "div", specs, "(Div(x, y).tanh() + Div(2, y) + Div(x, 4)).sum()")


# catches: gradients overwritten instead of added when both inputs are one tensor
@exercise("02.1")
def test_mul_of_a_tensor_with_itself(run):
    _same_grads(run, "mul_self", [_spec(5, 4)], "Mul.apply(x, x).sum(): x.grad (both inputs: 2x)")


# catches: swapped gradients between the two inputs
@exercise("02.1")
def test_mul_and_div_agree_with_finite_differences(run):
    specs = [_spec(6, 2, 3), _spec(7, 2, 3, low=0.5, high=2.0)]
    _finite_differences(run, "Mul", specs, "Mul.apply(x, y)")
    _finite_differences(run, "Div", specs, "Div.apply(x, y)")


# catches: a backward that detaches or goes through numpy (no second derivatives)
@exercise("02.1")
def test_mul_and_div_backward_are_differentiable(run):
    hint = (
        "(build backward from Tensor ops on ctx.saved_tensors: .detach(), .numpy() or no_grad() "
        "cut the graph create_graph=True needs)"
    )
    spec = _spec(8, 3, low=0.5, high=2.0)
    x = _array(_leaf(spec))
    got = run(second_derivative, "cube", spec)
    _close(got, 6 * x, f"the second derivative of x*x*x through your Mul {hint}")
    spec = _spec(9, 3, low=0.5, high=2.0)
    x = _array(_leaf(spec))
    got = run(second_derivative, "reciprocal", spec)
    _close(got, 2 / x**3, f"the second derivative of 1/x through your Div {hint}")


# --- 02.2 Exp and Log ---------------------------------------------------------------------
# catches: exp's backward not reusing the output; log's 1/x missing
@exercise("02.2")
def test_softplus_and_logsumexp_match_minitorch(run):
    s = int(run.rng.integers(1000))
    _same_grads(run, "exp_log", [_spec(10 + s, 3, 4)], "softplus + logsumexp with your Exp and Log")


# catches: a derivative of the wrong function (log's for exp, ...)
@exercise("02.2")
def test_exp_and_log_agree_with_finite_differences(run):
    _finite_differences(run, "Exp", [_spec(11, 2, 3)], "Exp.apply(x)")
    _finite_differences(run, "Log", [_spec(12, 2, 3, low=0.2, high=3.0)], "Log.apply(x)")


# catches: saved outputs used through .numpy() (no second derivatives)
@exercise("02.2")
def test_exp_and_log_backward_are_differentiable(run):
    hint = (
        "(build backward from Tensor ops on the saved tensor: reading it through .numpy(), "
        ".detach()ing it or running under no_grad() cuts the graph create_graph=True needs)"
    )
    spec = _spec(13, 4, low=0.3, high=2.0)
    x = _array(_leaf(spec))
    got = run(second_derivative, "exp", spec)
    _close(got, np.exp(x), f"the second derivative of exp(x) through your Exp {hint}")
    spec = _spec(14, 4, low=0.3, high=2.0)
    x = _array(_leaf(spec))
    got = run(second_derivative, "log", spec)
    _close(got, -1 / x**2, f"the second derivative of log(x) through your Log {hint}")


# catches: a backward that hands the derivative to minitorch's engine (autograd.grad or
# .backward() on copies of a and b inside backward); gradients returned in the wrong order
@exercise("02.1")
def test_mul_and_div_backward_called_directly(run):
    s = int(run.rng.integers(1000))
    specs = [_spec(5 + s, 3, 2), _spec(6 + s, 3, 2, low=0.5, high=2.0)]
    _direct_backward(run, "Mul", specs, (), "Mul.backward called with a random gradient")
    _direct_backward(run, "Div", specs, (), "Div.backward called with a random gradient")


# catches: a backward that hands the derivative to minitorch's engine (autograd.grad or
# .backward() on a copy of the input inside backward)
@exercise("02.2")
def test_exp_and_log_backward_called_directly(run):
    s = int(run.rng.integers(1000))
    _direct_backward(run, "Exp", [_spec(7 + s, 2, 3)], (), "Exp.backward called directly")
    spec = _spec(8 + s, 2, 3, low=0.5, high=2.0)
    _direct_backward(run, "Log", [spec], (), "Log.backward called directly")


# --- 02.3 unbroadcast ---------------------------------------------------------------------
UNBROADCAST_CASES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 3), (1, 3)),
    ((2, 3), (2, 1)),
    ((2, 3), ()),
    ((2, 3), (1, 1)),
    ((5, 4, 3), (4, 1)),
    ((5, 4, 3), (5, 1, 3)),
    ((2, 3, 4), (1,)),
    ((3, 1, 4), (1, 4)),
    ((1, 4, 3), (1, 3)),
    # catches: a size-1 dim left unsummed when the gradient has size 0 there (a (1,) input
    # broadcast against (0,) gets a gradient of zeros, not an error)
    ((2, 0), (2, 1)),
    ((0, 3), (3,)),
    ((0,), (1,)),
]


@probe
def unbroadcast_results(nb, cases):
    with forbidding(FORBIDDEN["02.3"] + _IN_BACKWARD, _answer(nb)):
        results = [nb.unbroadcast(minitorch.tensor(values), shape) for values, shape in cases]
    return [tensor_data(r) for r in results]


# catches: leading dims not summed; size-1 dims not kept; the wrong dims summed; the sum
# handed to minitorch's engine (autograd.grad of an expand, whose backward sums back)
@exercise("02.3")
def test_unbroadcast_sums_back_to_the_shape(run):
    cases = [(run.rng.standard_normal(g), shape) for g, shape in UNBROADCAST_CASES]
    for (values, shape), got in zip(cases, run(unbroadcast_results, cases), strict=True):
        call = f"unbroadcast(grad of shape {values.shape}, {shape})"
        assert got["type"] == "Tensor", f"{call} returned a {got['type']}"
        assert got["shape"] == shape, f"{call} has shape {got['shape']}, expected {shape}"
        lead = values.ndim - len(shape)
        expected = values.sum(axis=tuple(range(lead)))
        summed = tuple(i for i, n in enumerate(shape) if n == 1 and expected.shape[i] != 1)
        expected = expected.sum(axis=summed, keepdims=True).reshape(shape)
        _close(got["values"], expected, call)


@probe
def unbroadcast_in_a_graph(nb, spec):
    grad = _leaf(spec)  # a gradient that is itself in a graph (create_graph=True)
    with forbidding(FORBIDDEN["02.3"] + _IN_BACKWARD, _answer(nb)):
        summed = nb.unbroadcast(grad * 2.0, (2, 1))
    data = tensor_data(summed)
    if data["type"] == "Tensor" and summed.requires_grad:
        (summed * minitorch.tensor([[1.0], [-3.0]], dtype=F64)).sum().backward()
        data["leaf_grad"] = _grad(grad)
    return data


# catches: an unbroadcast through numpy (gradients of gradients stop there)
@exercise("02.3")
def test_unbroadcast_is_built_from_tensor_ops(run):
    got = run(unbroadcast_in_a_graph, _spec(16, 4, 2, 3))
    assert got["type"] == "Tensor" and got.get("requires_grad"), (
        "unbroadcast(grad, shape) of a grad that requires grad gave a result that does not: "
        "use Tensor ops (grad.sum, .reshape), not numpy, so gradients of gradients flow"
    )
    expected = np.broadcast_to(np.array([[2.0], [-6.0]]), (4, 2, 3))
    _close(
        got["leaf_grad"], expected, "the gradient flowing back through unbroadcast(grad, (2, 1))"
    )


# catches: Add's backward that forgets to unbroadcast either input
@exercise("02.3")
def test_add_with_broadcast_inputs_in_a_graph(run):
    cases = [((4, 3), (3,)), ((2, 1, 3), (4, 1)), ((), (2, 3)), ((2, 3), (1, 1)), ((3, 1), (1, 5))]
    for k, (sa, sb) in enumerate(cases):
        weights = _weights(k, np.broadcast_shapes(sa, sb))
        specs = [_spec(20 + k, *sa), _spec(30 + k, *sb)]
        _same_grads(run, "add", specs, f"Add of shapes {sa} and {sb}", [weights])


# --- 02.4 MatMul --------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((4, 1, 3, 2), (2, 2, 5)),
    ((1, 3, 4), (2, 4, 1)),
]


# catches: untransposed factors; batch dims not summed back for a broadcast input
@exercise("02.4")
def test_matmul_grads_match_minitorch(run):
    s = int(run.rng.integers(1000))
    for k, (sa, sb) in enumerate(MATMUL_SHAPES):
        out_shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        specs = [_spec(40 + k + s, *sa), _spec(50 + k + s, *sb)]
        weights = _weights(k + s, out_shape)
        _same_grads(run, "matmul", specs, f"MatMul of shapes {sa} @ {sb}", [weights])


# catches: gradients of broadcast batch dims left unsummed
@exercise("02.4")
def test_batched_matmul_agrees_with_finite_differences(run):
    specs = [_spec(60, 2, 1, 2, 3), _spec(61, 3, 3, 2)]
    _finite_differences(run, "MatMul", specs, "MatMul.apply of shapes (2, 1, 2, 3) @ (3, 3, 2)")


# catches: a MatMul that only works on its own, not inside a bigger graph
@exercise("02.4")
def test_a_two_layer_network_with_your_matmul(run):
    specs = [_spec(62, 5, 4), _spec(63, 4, 6), _spec(64, 6, 2)]
    _same_grads(run, "two_layers", specs, "a two-layer network built with MatMul")


@probe
def direct_backward(nb, name, specs, params, seed):
    """The learner's backward called directly (not through the engine, which sums a
    gradient of a broadcast shape back to its input's shape): what it returns."""
    leaves = [_leaf(s) for s in specs]
    exercise_id = FUNCTION_EXERCISE.get(name, "02.5")
    with forbidding(FORBIDDEN[exercise_id] + _IN_BACKWARD, _answer(nb)):
        cls = getattr(nb, name)
        out = cls.apply(*leaves, *params)
        grad = minitorch.tensor(_weights(seed, tuple(out.shape)), dtype=out.dtype)
        with minitorch.no_grad():
            returned = cls.backward(out.grad_fn, grad)
    if isinstance(returned, list):
        return "a list"
    returned = returned if isinstance(returned, tuple) else (returned,)
    return [tensor_data(g) if isinstance(g, Tensor) else {"type": repr(g)} for g in returned]


def _direct_backward(run, name, specs, params, what):
    """Each gradient the learner's backward returns must have exactly its input's shape and
    the values of minitorch's."""
    leaves = [_leaf(s) for s in specs]
    got = run(direct_backward, name, specs, list(params), 7)
    expected_count = len(specs) + len(params)
    # catches: gradients returned in a list (the rule of every exercise here: a tuple, or
    # the gradient alone when forward has one argument)
    assert got != "a list", f"{what}: backward returned a list; {_TUPLE_RULE}"
    assert len(got) == expected_count, (
        f"{what}: backward returned {len(got)} value(s) where forward takes {expected_count} "
        f"arguments; {_TUPLE_RULE}"
    )
    if name in REFERENCE_FUNCTIONS:
        out = REFERENCE_FUNCTIONS[name](*leaves)
    else:
        out = leaves[0].sum(params[0], params[1])
    grad = minitorch.tensor(_weights(7, tuple(out.shape)), dtype=out.dtype)
    expected = minitorch.autograd.grad(out, leaves, grad)
    for k, (g, e, leaf) in enumerate(zip(got, expected, leaves, strict=False)):
        shape = tuple(leaf.shape)
        assert g["type"] == "Tensor", f"{what}: gradient {k} is {g['type']}, not a Tensor"
        assert g["shape"] == shape, (
            f"{what}: backward returned a gradient of shape {g['shape']} for input {k} of shape "
            f"{shape}; a gradient has its input's shape (sum the broadcast dims back)"
        )
        _close(g["values"], e, f"{what}: gradient {k} returned by backward")
    for k in range(len(specs), expected_count):
        assert got[k]["type"] == "None", (
            f"{what}: backward returned {got[k]['type']} for argument {k}, which is not a "
            "tensor; return None there"
        )


# catches: batch dims of a broadcast input left in its gradient (the engine would sum them
# back, hiding the mistake); gradients returned in the wrong order
@exercise("02.4")
def test_matmul_backward_returns_each_inputs_shape(run):
    cases = [((4, 1, 3, 2), (2, 2, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5))]
    for k, (sa, sb) in enumerate(cases):
        specs = [_spec(65 + k, *sa), _spec(68 + k, *sb)]
        _direct_backward(run, "MatMul", specs, (), f"MatMul.backward for {sa} @ {sb}")


# catches: a backward that goes through numpy or detaches (no second derivatives)
@exercise("02.4")
def test_matmul_backward_is_differentiable(run):
    specs = [_spec(71, 2, 3, 4), _spec(72, 4, 2)]
    weights = _weights(73, (2, 3, 2))
    _same_second_derivatives(run, "matmul", specs, "(MatMul(a, b) * w).sum()", [weights])
    specs = [_spec(74, 3, 4), _spec(75, 4, 5), _spec(76, 5, 2)]
    _same_second_derivatives(run, "two_layers", specs, "a two-layer network with MatMul")


# --- 02.5 Sum -----------------------------------------------------------------------------
SUM_CASES = [
    (None, False),
    (None, True),
    (0, False),
    (1, True),
    (-1, False),
    ((0, 2), False),
    ((0, 2), True),
    ((2, 0), False),
]


# catches: the summed dims not restored before expanding; negative or tuple dims
@exercise("02.5")
def test_sum_grads_match_minitorch(run):
    s = int(run.rng.integers(1000))
    for k, (dim, keepdim) in enumerate(SUM_CASES):
        out_shape = np.zeros((2, 3, 4)).sum(axis=dim, keepdims=keepdim).shape
        specs = [_spec(70 + k + s, 2, 3, 4)]
        what = f"Sum.apply(x of shape (2, 3, 4), {dim}, {keepdim})"
        _same_grads(run, "sum", specs, what, [_weights(k + s, out_shape)], [dim, keepdim])


# catches: a keepdim=True sum whose gradient has the wrong shape downstream
@exercise("02.5")
def test_sum_normalising_with_broadcast(run):
    specs = [_spec(80, 3, 5), _spec(81, 3, 5)]
    _same_grads(run, "softmax_sum", specs, "a softmax normalised with Sum(e, 1, True)")


# catches: a gradient that is not all ones over the summed dims
@exercise("02.5")
def test_sum_agrees_with_finite_differences(run):
    specs = [_spec(82, 2, 3)]
    _finite_differences(run, "Sum(x, 1, False) * 2", specs, "Sum.apply(x, 1, False)")
    _finite_differences(run, "Sum(x, (0, 1), True)", specs, "Sum.apply(x, (0, 1), True)")


# catches: a gradient that broadcasts to the input instead of being expanded to it; the
# Nones for dim and keepdim missing
@exercise("02.5")
def test_sum_backward_returns_the_input_shape(run):
    for k, (dim, keepdim) in enumerate([((0, 2), False), (1, True), (None, False), (-1, True)]):
        what = f"Sum.backward of Sum.apply(x of shape (2, 3, 4), {dim}, {keepdim})"
        _direct_backward(run, "Sum", [_spec(83 + k, 2, 3, 4)], (dim, keepdim), what)


# catches: a backward that goes through numpy or detaches (no second derivatives)
@exercise("02.5")
def test_sum_backward_is_differentiable(run):
    specs = [_spec(88, 3, 4)]
    _same_second_derivatives(run, "sum_squared", specs, "(Sum(x * x, 1) ** 2).sum() + ...")
    specs = [_spec(89, 3, 5), _spec(90, 3, 5)]
    _same_second_derivatives(run, "softmax_sum", specs, "a softmax normalised with Sum")


# --- 02.6 topological order ---------------------------------------------------------------
def _nodes(root):
    """The graph's nodes in a canonical order (breadth first from the root, children in
    order), with their names and edges as indices into that order."""
    index, order = {root: 0}, [root]
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and child not in index:
                index[child] = len(order)
                order.append(child)
    names = [n.name() for n in order]
    edges = [[index[c] for c, _ in n.next_functions if c is not None] for n in order]
    return index, names, edges


GRAPHS_TO_ORDER = {
    "small": lambda L: (L[0] * L[1]).sum() + L[2],
    "diamond": lambda L: (lambda y: y + y.exp())(L[0] * 2.0),
    "shared": lambda L: (lambda h: (h.exp() + h * h + h / (L[1] * L[1] + 1.0)).sum() * h.sum())(
        L[0] * L[1]
    ),
    "network": lambda L: (((L[0] @ L[1] + L[2]).relu() @ L[3]) ** 2).mean(),
    "doubling": lambda L: _doubled(L[0], 18).sum(),
    "chain": lambda L: _chain(L[0], CHAIN_LENGTH),
    "constant": lambda L: (L[0] * minitorch.tensor([1.0, -2.0, 0.5], dtype=F64)).exp().sum(),
}


def _doubled(h, levels):
    for _ in range(levels):
        h = h + h  # each level doubles the number of paths down to x
    return h


#: Three times Python's default recursion limit: a recursive walk of the chain fails.
CHAIN_LENGTH = 3_000


def _chain(y, length):
    for _ in range(length):
        y = y * 1.0001
    return y


@contextlib.contextmanager
def _pythons_recursion_limit():
    """Python's default recursion limit (1000 frames) above the current depth, whatever the
    notebook set: a recursive walk of a 3,000-op chain fails. (Raising the limit while the
    walk runs is forbidden.)"""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


@probe
def order_of(nb, graph, specs, calls=1):
    """The learner's order as canonical node numbers (-1: not a Node, -2: not in the graph);
    with ``calls`` > 1, that of the last of several calls on the same graph."""
    root = GRAPHS_TO_ORDER[graph]([_leaf(s) for s in specs])
    index, _, _ = _nodes(root.grad_fn)
    try:
        with _pythons_recursion_limit(), forbidding(FORBIDDEN["02.6"], _answer(nb)):
            for _ in range(calls):
                order = nb.topological_order(root)
    except RecursionError:
        raise AssertionError(
            "topological_order hit Python's recursion limit: walk the graph with an explicit "
            "stack or queue instead of recursion"
        ) from None
    if order is None:
        return None
    return [index.get(n, -2) if isinstance(n, Node) else -1 for n in list(order)]


def _check_order(run, graph, specs, what, calls=1):
    order = run(order_of, graph, specs, calls)
    assert order is not None, f"topological_order({what}) returned None: return a list of nodes"
    root = GRAPHS_TO_ORDER[graph]([_leaf(s) for s in specs])
    _, names, edges = _nodes(root.grad_fn)
    position = {}
    for i, node in enumerate(order):
        if node == -1:
            raise AssertionError(
                f"topological_order({what}) contains something that is not a node; list the "
                "graph's nodes (grad_fn objects and the AccumulateGrad nodes of next_functions)"
            )
        if node == -2:
            raise AssertionError(f"topological_order({what}) contains a node not in the graph")
        if node in position:
            count = sum(n == node for n in order)
            raise AssertionError(
                f"topological_order({what}) lists {names[node]} {count} times; "
                "each node must appear once (remember the nodes you have seen)"
            )
        position[node] = i
    missing = sorted(names[n] for n in range(len(names)) if n not in position)
    if missing:
        raise AssertionError(
            f"topological_order({what}) misses {len(missing)} of the graph's {len(names)} "
            f"nodes, among them {missing[0]}; follow next_functions all the way down to the "
            "leaves' AccumulateGrad nodes"
        )
    for node in order:
        for child in edges[node]:
            if position[child] < position[node]:
                raise AssertionError(
                    f"topological_order({what}) puts {names[child]} (position "
                    f"{position[child]}) before {names[node]} (position {position[node]}), "
                    f"but {names[node]} sends it a gradient, so it must come first"
                )
    return order


# catches: leaves' AccumulateGrad nodes left out; a node reached twice listed twice
@exercise("02.6")
def test_order_of_small_graphs(run):
    order = _check_order(run, "small", [_spec(90, 3), _spec(91, 3), _spec(92)], "(x * w).sum() + b")
    assert len(order) == 6, (
        f"topological_order((x * w).sum() + b) has {len(order)} nodes, expected 6"
    )
    _check_order(run, "diamond", [_spec(90, 3)], "y + y.exp()")


# catches: the (None, 0) edge of an input that needs no gradient followed as if it were a
# node; state kept between calls (a seen-set in a default argument or a global)
@exercise("02.6")
def test_order_with_a_constant_and_when_called_twice(run):
    _check_order(run, "constant", [_spec(93, 3)], "(x * c).exp().sum() with a constant c")
    what = "(x * w).sum() + b, the second time it is asked for"
    _check_order(run, "small", [_spec(94, 3), _spec(95, 3), _spec(96)], what, calls=2)


# catches: a node placed before all of the nodes that feed it a gradient
@exercise("02.6")
def test_order_with_shared_subexpressions(run):
    _check_order(run, "shared", [_spec(93, 4), _spec(94, 4)], "a graph that reuses h = x * y")
    specs = [_spec(95, 5, 3), _spec(96, 3, 4), _spec(97, 4), _spec(98, 4, 1)]
    _check_order(run, "network", specs, "a two-layer network's loss")


# catches: a walk without a seen-set, exponential in the number of paths
@exercise("02.6")
def test_order_when_paths_multiply(run):
    order = _check_order(run, "doubling", [_spec(99, 2)], "h.sum() after 18 levels of h = h + h")
    assert len(order) == 20, f"topological_order has {len(order)} nodes, expected 20"


# catches: a recursive walk (Python's recursion limit)
@exercise("02.6")
def test_order_of_a_3000_op_chain(run):
    _check_order(run, "chain", [_spec(100, 1)], "a chain of 3,000 multiplications")


# --- 02.7 the backward pass ---------------------------------------------------------------
def _mlp(x, w1, b1, w2):
    return ((x @ w1 + b1).relu() @ w2).tanh().mean()


def _shared(x, y):
    h = x * y
    return (h.exp() + h * h + h / (y * y + 1.0)).sum()


def _softmax_loss(x, t):
    e = (x - x.max()).exp()
    return -((e / e.sum(1, keepdim=True)).log() * t).sum()


class _FirstOnly(Function):
    """a + b whose backward sends b no gradient (None): the node below b may get none."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _none_after_a_gradient(a, b):
    z = b.exp()  # z's node gets a gradient from the Add, then None from _FirstOnly
    return (_FirstOnly.apply(a * 2.0, z) + z).sum()


def _none_only(a, b):
    return _FirstOnly.apply(a * 2.0, b.exp()).sum()  # b.exp()'s node gets only None


GRAPHS = [
    (_mlp, [(5, 3), (3, 4), (4,), (4, 2)], "a two-layer network"),
    (_shared, [(4,), (4,)], "a graph reusing h = x * y"),
    (_softmax_loss, [(3, 4), (3, 4)], "a softmax cross-entropy"),
    (lambda x: (x * x * x).sum(), [(3,)], "(x * x * x).sum()"),
    # catches: a None gradient added to one that arrived before it; a node that received no
    # gradient at all looked up as if it had one (pending[node] raises KeyError)
    (_none_after_a_gradient, [(3,), (3,)], "a graph where a backward returns None for b"),
    (_none_only, [(3,), (3,)], "a graph where b's only path gets None"),
]


def _run_mine(nb, tensor, gradient=None):
    try:
        with _pythons_recursion_limit(), forbidding(FORBIDDEN["02.7"], _answer(nb)):
            if gradient is None:
                nb.backward(tensor)
            else:
                nb.backward(tensor, gradient)
    except RecursionError:
        raise AssertionError(
            "backward (or the topological_order it uses) hit Python's recursion limit: "
            "walk the graph with loops and an explicit stack"
        ) from None


def _leaf_state(t):
    return {"grad": _grad(t), "requires_grad": t.grad is not None and bool(t.grad.requires_grad)}


@probe
def backward_grads(nb, k, specs):
    leaves = [_leaf(s) for s in specs]
    _run_mine(nb, GRAPHS[k][0](*leaves))
    return [_leaf_state(t) for t in leaves]


# catches: gradients not summed over every path; nodes run before all inputs arrived
@exercise("02.7")
def test_backward_matches_tensor_backward(run):
    s = int(run.rng.integers(1000))
    for k, (build, shapes, what) in enumerate(GRAPHS):
        specs = [_spec(110 + 10 * k + i + s, *shape) for i, shape in enumerate(shapes)]
        got = run(backward_grads, k, specs)
        ref = [_leaf(spec) for spec in specs]
        build(*ref).backward()
        for i, (a, b) in enumerate(zip(got, ref, strict=True)):
            if b.grad is None:
                assert a["grad"] is None, (
                    f"backward({what}): leaf {i} got a .grad, but no gradient reaches it"
                )
                continue
            _close(a["grad"], b.grad, f"backward({what}): the .grad of leaf {i}")
            assert not a["requires_grad"], (
                f"backward({what}): the .grad of leaf {i} requires grad; keep the "
                "accumulation out of the graph (add tensors call_backward returned)"
            )


@probe
def backward_with_gradient(nb, specs, gradient):
    x, w = (_leaf(s) for s in specs)
    _run_mine(nb, (x * w).exp(), minitorch.tensor(gradient, dtype=F64))
    return [_grad(x), _grad(w)]


# catches: the given gradient ignored (ones used instead)
@exercise("02.7")
def test_backward_with_a_given_gradient(run):
    specs = [_spec(150, 3), _spec(151, 3)]
    gradient = np.array([1.0, -2.0, 0.5])
    gx, gw = run(backward_with_gradient, specs, gradient)
    x, w = (_array(_leaf(s)) for s in specs)
    expected = gradient * np.exp(x * w)
    _close(gx, expected * w, "backward(y, gradient) with y = (x * w).exp(): x.grad")
    _close(gw, expected * x, "backward(y, gradient) with y = (x * w).exp(): w.grad")


@probe
def accumulation(nb, specs):
    x, y = (_leaf(s) for s in specs)
    loss = _shared(x, y)
    _run_mine(nb, loss)
    _run_mine(nb, loss)  # the same graph again: call_backward keeps the saved tensors
    twice = _grad(x)
    x.grad = minitorch.ones(4, dtype=F64)
    y.grad = None
    _run_mine(nb, _shared(x, y))
    return [twice, _grad(x), _grad(y)]


# catches: .grad overwritten instead of accumulated; None grads not started
@exercise("02.7")
def test_backward_accumulates_into_existing_grads(run):
    specs = [_spec(152, 4), _spec(153, 4)]
    twice, x_grad, y_grad = run(accumulation, specs)
    ref_x, ref_y = (_leaf(s) for s in specs)
    _shared(ref_x, ref_y).backward()
    what = "after calling backward(loss) twice, x.grad (gradients must add up)"
    _close(twice, 2 * _array(ref_x.grad), what)
    _close(x_grad, 1 + _array(ref_x.grad), "x.grad that held ones before backward")
    _close(y_grad, ref_y.grad, "y.grad that was None before backward")


@probe
def shared_gradient(nb, specs, weights):
    a, b = (_leaf(s) for s in specs)
    loss = ((a + b) * minitorch.tensor(weights, dtype=F64)).sum()  # Add gives a and b one grad
    _run_mine(nb, loss)
    _run_mine(nb, loss)
    return [_grad(a), _grad(b)]


# catches: in-place accumulation into a gradient tensor another leaf also holds
@exercise("02.7")
def test_accumulating_never_writes_into_a_shared_gradient(run):
    weights = np.array([1.0, -2.0, 0.5])
    got = run(shared_gradient, [_spec(156, 3), _spec(157, 3)], weights)
    for name, g in zip("ab", got, strict=True):
        _close(
            g,
            2 * weights,
            f"{name}.grad after backward(((a + b) * w).sum()) twice (store leaf.grad + grad, "
            "a new tensor, instead of adding in place)",
        )


PENDING = {
    "x_reused_last": lambda x, y, w, c: ((x + y) * w).sum() + (x * c).sum(),
    "x_reused_first": lambda x, y, w, c: (x * c).sum() + ((x + y) * w).sum(),
    "y_reused_last": lambda x, y, w, c: ((x + y) * w).sum() + (y * c).sum(),
    "both_reused": lambda x, y, w, c: (x * c).sum() + ((x + y) * w).sum() + (y * c).sum(),
    "intermediate": lambda x, y, w, c: (lambda h: ((h + y) * w).sum() + (h * c).sum())(x * 2.0),
}


@probe
def pending_aliases(nb, specs, weights, scale):
    out = []
    for build in PENDING.values():
        x, y = (_leaf(s) for s in specs)
        w = minitorch.tensor(weights, dtype=F64)
        c = minitorch.tensor(scale, dtype=F64)
        _run_mine(nb, build(x, y, w, c))
        out.append([_grad(x), _grad(y)])
    return out


# catches: a pending gradient added to in place (add_, +=) while another node holds the
# same tensor (Add hands one gradient to both of its inputs)
@exercise("02.7")
def test_pending_gradients_never_alias(run):
    specs = [_spec(158, 3), _spec(159, 3)]
    weights, scale = np.array([1.0, -2.0, 0.5]), np.array([3.0, 0.25, -1.0])
    got = run(pending_aliases, specs, weights, scale)
    for (name, build), grads in zip(PENDING.items(), got, strict=True):
        x, y = (_leaf(s) for s in specs)
        loss = build(x, y, minitorch.tensor(weights, dtype=F64), minitorch.tensor(scale, dtype=F64))
        loss.backward()
        for leaf, g, which in ((x, grads[0], "x"), (y, grads[1], "y")):
            _close(
                g,
                leaf.grad,
                f"backward of a graph where Add hands one gradient to x and y ({name}): "
                f"{which}.grad (add pending gradients out of place: waiting + grad)",
            )


@probe
def only_leaves(nb, spec):
    x = _leaf(spec)
    c = minitorch.tensor([1.0, 2.0, 3.0], dtype=F64)  # a constant: requires no grad
    h = x * c
    _run_mine(nb, (h * h).sum())
    return {"c": c.grad is None, "h": h.grad is None, "x": _grad(x)}


# catches: gradients stored on constants or on intermediate tensors
@exercise("02.7")
def test_backward_touches_only_leaves_that_require_grad(run):
    got = run(only_leaves, _spec(154, 3))
    assert got["c"] is True, "a tensor that does not require grad got a .grad"
    assert got["h"] is True, "an intermediate (non-leaf) tensor got a .grad; only leaves do"
    x = _array(_leaf(_spec(154, 3)))
    _close(got["x"], 2 * x * np.array([1.0, 2.0, 3.0]) ** 2, "x.grad of ((x * c) ** 2).sum()")


@probe
def leaf_root(nb, spec, gradient):
    x = _leaf(spec)
    _run_mine(nb, x, minitorch.tensor(gradient, dtype=F64))  # .grad None: it is set
    first = _leaf_state(x)
    wanting = minitorch.tensor(gradient, dtype=F64, requires_grad=True)
    _run_mine(nb, x, wanting)  # .grad held: it is added to
    second = _leaf_state(x)
    y = _leaf(spec)
    _run_mine(nb, y, wanting)  # a gradient that requires grad, into a None .grad
    third = _leaf_state(y)
    z = _leaf(_spec(0, 1))
    _run_mine(nb, z)  # no gradient: ones, as for a scalar loss
    return [first, second, third, _leaf_state(z)]


# catches: a leaf as the root left without a .grad (it has no grad_fn, so the walk from
# its grad_fn finds nothing); its .grad overwritten; a .grad that keeps the graph of a
# gradient that requires grad (PyTorch's .grad never requires grad)
@exercise("02.7")
def test_backward_from_a_leaf_root(run):
    gradient = np.array([1.0, -2.0, 0.5])
    first, second, third, ones = run(leaf_root, _spec(160, 3), gradient)
    what = "backward(x, gradient) where x is a leaf that requires grad (the root has no grad_fn)"
    for state, expected, when in (
        (first, gradient, "with x.grad None before"),
        (second, 2 * gradient, "a second time (the gradients add up)"),
        (third, gradient, "with a gradient that requires grad"),
        (ones, np.ones(1), "with no gradient, for a one-element x"),
    ):
        _close(state["grad"], expected, f"{what}, {when}: x.grad")
        assert not state["requires_grad"], (
            f"{what}, {when}: x.grad requires grad; a .grad holds numbers, not a graph"
        )


@probe
def long_chain(nb, spec):
    x = _leaf(spec)
    _run_mine(nb, _chain(x, CHAIN_LENGTH).sum())
    return _grad(x)


# catches: a recursive walk (Python's recursion limit)
@exercise("02.7")
def test_backward_through_a_3000_op_chain(run):
    got = run(long_chain, _spec(155, 2))
    _close(got, np.full(2, 1.0001**CHAIN_LENGTH), "x.grad after a chain of 3,000 multiplications")


# --- 02.8 a custom Function: clipped gradient ---------------------------------------------
@probe
def clip_forward(nb, spec):
    x = _leaf(spec)
    with forbidding(FORBIDDEN["02.8"], _answer(nb)):
        y = nb.ClipGrad.apply(x)
    data = tensor_data(y)
    if data["type"] == "Tensor":
        data["grad_fn"] = None if y.grad_fn is None else y.grad_fn.name()
        data["shares_memory"] = y.data_ptr() == x.data_ptr()
    return data


# catches: a forward that changes values; a forward that returns its input itself
@exercise("02.8")
def test_clip_forward_is_the_identity(run):
    spec = _spec(160, 2, 3)
    got = run(clip_forward, spec)
    assert got["type"] == "Tensor", f"ClipGrad.apply(x) returned a {got['type']}"
    _close(got["values"], _leaf(spec), "ClipGrad.apply(x)")
    # catches: a copy made in another dtype (a.astype(np.float32)) instead of a.copy()
    assert got["dtype"] == str(F64), (
        f"ClipGrad.apply(x) of a float64 x is {got['dtype']}: the values pass unchanged, "
        "dtype included (return a.copy())"
    )
    assert got["grad_fn"] == "ClipGradBackward", (
        "ClipGrad.apply(x) of a tensor that requires grad should have grad_fn ClipGradBackward"
    )
    assert not got["shares_memory"], (
        "ClipGrad.apply(x) shares memory with x: return a copy of the array from forward"
    )


SCALE = [3.0, -0.5, -4.0, 0.9, 1.0]
CLIPPED = {
    "scaled": lambda nb, x: (nb.ClipGrad.apply(x) * minitorch.tensor(SCALE, dtype=F64)).sum(),
    "before": lambda nb, x: nb.ClipGrad.apply(x * 10.0).sum(),
    "after": lambda nb, x: (nb.ClipGrad.apply(x) * 10.0).sum(),
}


@probe
def clip_grad(nb, graph, spec):
    x = _leaf(spec)
    with forbidding(FORBIDDEN["02.8"], _answer(nb)):
        CLIPPED[graph](nb, x).backward()
    return _grad(x)


# catches: clipping the input values instead of the gradient; one-sided clipping
@exercise("02.8")
def test_clip_bounds_the_incoming_gradient(run):
    got = run(clip_grad, "scaled", _spec(161, 5))
    what = "x.grad of (ClipGrad(x) * [3, -0.5, -4, 0.9, 1]).sum()"
    _close(got, [1.0, -0.5, -1.0, 0.9, 1.0], what)


# catches: a clip applied to the leaf's gradient rather than at the node
@exercise("02.8")
def test_clip_acts_where_it_sits_in_the_graph(run):
    got = run(clip_grad, "before", _spec(162, 3))
    _close(got, np.full(3, 10.0), "x.grad of ClipGrad(x * 10).sum() (the clip sees 1, x gets 10)")
    got = run(clip_grad, "after", _spec(163, 3))
    _close(got, np.ones(3), "x.grad of (ClipGrad(x) * 10).sum() (the clip sees 10)")


@probe
def clipped_training(nb, inputs, targets, lr, steps):
    w = minitorch.tensor([0.0], dtype=F64, requires_grad=True)
    x, t = minitorch.tensor(inputs), minitorch.tensor(targets)
    history = []
    for _ in range(steps):
        with forbidding(FORBIDDEN["02.8"], _answer(nb)):
            loss = ((nb.ClipGrad.apply(w * x) - t) ** 2).sum()
            w.grad = None
            loss.backward()
        with minitorch.no_grad():
            w -= lr * w.grad
        history.append(np.array(w.detach().numpy(), dtype=np.float64))
    return history


# catches: a ClipGrad that works once but not step after step
@exercise("02.8")
def test_training_with_a_clipped_gradient(run):
    inputs = run.rng.uniform(-2.0, 2.0, size=8)
    targets = 3.0 * inputs + run.rng.normal(0.0, 4.0, size=8)
    lr, steps = 0.05, 5
    history = run(clipped_training, inputs, targets, lr, steps)
    w_ref = 0.0
    for step, w in enumerate(history):
        clipped = np.clip(2.0 * (w_ref * inputs - targets), -1.0, 1.0)
        w_ref -= lr * float((clipped * inputs).sum())
        _close(w, [w_ref], f"w after {step + 1} SGD steps with ClipGrad(w * x) in the loss")
    assert len(history) == steps


@probe
def clip_second_derivative(nb, specs, v):
    x, w = (_leaf(s) for s in specs)
    with forbidding(FORBIDDEN["02.8"], _answer(nb)):
        loss = (nb.ClipGrad.apply(x) * w).sum()
        (gx,) = minitorch.autograd.grad(loss, x, create_graph=True)
    if not gx.requires_grad:
        return None
    (gw,) = minitorch.autograd.grad((gx * minitorch.tensor(v, dtype=F64)).sum(), w)
    return np.array(gw.numpy(), dtype=np.float64)


# catches: a backward that clips through numpy (np.clip) or detaches: the clipped
# gradient must stay a function of the incoming one (create_graph=True)
@exercise("02.8")
def test_clip_backward_is_differentiable(run):
    specs = [_spec(164, 5), _spec(165, 5, low=-2.0, high=2.0)]
    v = np.array([1.0, -2.0, 0.5, 3.0, -1.0])
    got = run(clip_second_derivative, specs, v)
    assert got is not None, (
        "with create_graph=True the gradient through ClipGrad does not require grad: clip "
        "with Tensor ops (minitorch.maximum/minimum), not numpy"
    )
    w = _array(_leaf(specs[1]))
    _close(got, v * (np.abs(w) < 1.0), "d/dw of (dL/dx . v) with L = (ClipGrad(x) * w).sum()")


# --- 02.9 gradcheck -----------------------------------------------------------------------
class _Cube(Function):
    """A correct custom Function: a ** 3."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a**3

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 3.0 * a * a


class _BadSquare(Function):
    """a * a with a wrong backward: the factor 2 is missing."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a


class _MulWrongForB(Function):
    """a * b whose backward is right for a and wrong for b."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * b


class _ExpOffByOnePercent(Function):
    """exp with a backward that is 1% too large."""

    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * 1.01


class _FlippedGrad(Function):
    """x * s whose backward reverses the incoming gradient: right only when every output
    gets the same gradient (weighting the outputs by ones hides it)."""

    @staticmethod
    def forward(ctx, a):
        return a * np.array([2.0, -1.0, 2.0, -1.0])

    @staticmethod
    def backward(ctx, grad):
        flipped = minitorch.stack([grad[3], grad[2], grad[1], grad[0]])
        return flipped * minitorch.tensor([2.0, -1.0, 2.0, -1.0], dtype=grad.dtype)


class _SquareOnePercent(Function):
    """a * a with a backward 1% too large, on small inputs: its error is tiny in absolute
    terms, so only the relative tolerance (rtol) sees it."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2.02 * a


class _MatMulTransposedGradA(Function):
    """a @ b for square matrices whose gradient for a comes out transposed: the right
    numbers in the wrong places (their sum is right)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad @ b.mT).mT, a.mT @ grad


NUMERICAL = {
    "sum_cubed": lambda t: t.sum() ** 3,
    "cube": lambda t: (t**3).sum(),
    "exp_x": lambda t: (t.exp() * t).sum(),
    "square": lambda t: t * t,
}


@probe
def numerical_grads(nb, cases):
    out = []
    for name, spec, eps in cases:
        x = _leaf(spec).detach()
        before = np.array(x.numpy(), copy=True)
        with forbidding(FORBIDDEN["02.9"], _answer(nb)):
            if eps is None:
                got = nb.numerical_grad(NUMERICAL[name], x)
            else:
                got = nb.numerical_grad(NUMERICAL[name], x, eps=eps)
        if isinstance(got, minitorch.Tensor):
            data = tensor_data(got)
        else:
            data = {"type": "array", "values": np.asarray(got, dtype=np.float64)}
            data["ndarray_dtype"] = str(got.dtype) if isinstance(got, np.ndarray) else None
        data["unchanged"] = bool(np.array_equal(np.asarray(x.numpy()), before))
        out.append(data)
    return out


# catches: one-sided differences; eps ignored
@exercise("02.9")
def test_numerical_grad_of_a_cubic(run):
    spec = _spec(170, 2, 3)
    x = _array(_leaf(spec))
    got = run(numerical_grads, [("cube", spec, None), ("cube", spec, 0.5)])
    # catches: a Tensor, a list or a float32 array where the text asks for a float64 array
    assert got[0].get("ndarray_dtype") == "float64", (
        f"numerical_grad returned a {got[0]['type']} ({got[0].get('ndarray_dtype')}); return "
        "a float64 numpy array of x's shape"
    )
    _close(got[0]["values"], 3 * x**2, "numerical_grad of (x**3).sum()", atol=1e-6, rtol=1e-6)
    expected = 3 * x**2 + 0.25
    what = "numerical_grad of (x**3).sum() with eps=0.5 (central: 3x^2 + eps^2)"
    _close(got[1]["values"], expected, what)


# catches: perturbing a float32 tensor in place (precision lost, input changed)
@exercise("02.9")
def test_numerical_grad_works_in_float64(run):
    spec = _spec(171, 5, dtype="float32")
    got = run(numerical_grads, [("exp_x", spec, None)])
    values = _array(_leaf(spec)).astype(np.float64)
    expected = (1 + values) * np.exp(values)
    _close(
        got[0]["values"],
        expected,
        "numerical_grad of (x.exp() * x).sum() for a float32 x (perturb a float64 copy)",
        atol=1e-6,
        rtol=1e-6,
    )
    assert got[0]["unchanged"], "numerical_grad changed the values of x"
    got = run(numerical_grad_of_a_scalar, 1.5)
    _close(got["values"], 3.0, "numerical_grad of x * x at x = 1.5 (a 0-dim tensor)")


# catches: a perturbed element not put back before the next one is perturbed
@exercise("02.9")
def test_numerical_grad_restores_each_element(run):
    spec = _spec(184, 4, low=0.5, high=1.5)
    x = _array(_leaf(spec))
    got = run(numerical_grads, [("sum_cubed", spec, 0.5)])
    expected = np.full(4, 3 * x.sum() ** 2 + 0.25)
    what = "numerical_grad of x.sum() ** 3 with eps=0.5 (central: 3 S^2 + eps^2 everywhere)"
    _close(got[0]["values"], expected, what, atol=1e-6, rtol=1e-6)


@probe
def numerical_grad_of_a_scalar(nb, value):
    with forbidding(FORBIDDEN["02.9"], _answer(nb)):
        got = nb.numerical_grad(NUMERICAL["square"], minitorch.tensor(value, dtype=F64))
    return {
        "values": np.asarray(
            got.numpy() if isinstance(got, minitorch.Tensor) else got, dtype=np.float64
        )
    }


GRADCHECK_CASES = {
    "tanh_matmul": (lambda a, b: (a @ b).tanh(), [_spec(172, 3, 4), _spec(173, 4, 2)]),
    "mul_exp": (lambda a, b: a * b + a.exp(), [_spec(174, 2, 3), _spec(175, 3)]),
    "cube": (_Cube.apply, [_spec(176, 4)]),
    "sigmoid32": (
        lambda a, b: (a @ b).sigmoid(),
        [_spec(177, 3, 4, dtype="float32"), _spec(178, 4, 2, dtype="float32")],
    ),
    "scalar": (lambda a: (a * a).sum(), [_spec(179, 2, 2)]),
    "bad_square": (_BadSquare.apply, [_spec(180, 3)]),
    "mul_wrong_b": (_MulWrongForB.apply, [_spec(181, 2, 3), _spec(182, 2, 3)]),
    "exp_1pc": (_ExpOffByOnePercent.apply, [_spec(183, 4)]),
    "flipped": (_FlippedGrad.apply, [_spec(185, 4)]),
    "unused": (lambda a, b: a.exp(), [_spec(188, 3), _spec(189, 2)]),
    "big_cube": (lambda a: a * a * a, [_spec(190, 4, low=50.0, high=100.0)]),
    "exp32_overflow": (lambda a: a.exp(), [_spec(191, 3, low=89.0, high=92.0, dtype="float32")]),
    "small_1pc": (_SquareOnePercent.apply, [_spec(192, 4, low=0.01, high=0.02)]),
    "transposed": (_MatMulTransposedGradA.apply, [_spec(193, 3, 3), _spec(194, 3, 3)]),
}


@probe
def gradcheck_results(nb, names):
    results = []
    for name in names:
        f, specs = GRADCHECK_CASES[name]
        with forbidding(FORBIDDEN["02.9"], _answer(nb)):
            result = nb.gradcheck(f, [_leaf(s) for s in specs])
        results.append(None if result is None else bool(result))
    return results


# catches: a gradcheck that compares at float32 precision; scalar outputs mishandled
@exercise("02.9")
def test_gradcheck_passes_correct_functions(run):
    cases = {
        "tanh_matmul": "(a @ b).tanh()",
        "mul_exp": "a * b + a.exp()",
        "cube": "a correct Cube Function",
        "sigmoid32": "(a @ b).sigmoid() with float32 inputs (check in float64)",
        "scalar": "(a * a).sum(), a scalar output",
        # catches: an input the output does not use (its .grad stays None)
        "unused": "f(a, b) = a.exp(), which does not use b",
        # catches: an absolute tolerance alone (large gradients carry rounding error)
        "big_cube": "a * a * a for a in [50, 100] (large gradients: use rtol too)",
        # catches: inputs kept in float32 (exp(90) overflows float32, not float64)
        "exp32_overflow": "a.exp() of float32 inputs near 90 (check in float64)",
    }
    for what, result in zip(cases.values(), run(gradcheck_results, list(cases)), strict=True):
        assert result is not None, f"gradcheck({what}) returned None: return True or False"
        assert result is True, f"gradcheck({what}) returned {result!r} for a correct function"


# catches: outputs weighted by ones (errors cancel); one input's gradient never checked
@exercise("02.9")
def test_gradcheck_catches_wrong_backwards(run):
    cases = {
        "bad_square": "a Square whose backward forgets the factor 2",
        "mul_wrong_b": "a Mul whose backward is wrong only for its second input",
        "exp_1pc": "an Exp whose backward is 1% too large",
        "flipped": "a Function whose backward reverses the gradient (right for ones only)",
        # catches: atol and rtol swapped (a 1% error on small gradients passes atol=1e-3)
        "small_1pc": "a Square whose backward is 1% too large, on inputs near 0.015",
        # catches: sums of the gradients compared instead of every element
        "transposed": "a MatMul whose gradient for a comes out transposed",
    }
    for what, result in zip(cases.values(), run(gradcheck_results, list(cases)), strict=True):
        assert result is not None, f"gradcheck({what}) returned None: return True or False"
        assert result is False, f"gradcheck({what}) returned {result!r}; it should return False"


@probe
def gradcheck_on_callers_tensors(nb, specs):
    a, b = (_leaf(s) for s in specs)
    b.grad = minitorch.ones(*b.shape, dtype=F64)  # the caller's own gradient, kept
    before = [np.array(t.detach().numpy(), copy=True) for t in (a, b)]
    inputs = [a, b]
    with forbidding(FORBIDDEN["02.9"], _answer(nb)):
        result = nb.gradcheck(lambda p, q: (p * q).tanh(), inputs)
    return {
        "result": None if result is None else bool(result),
        "list_kept": len(inputs) == 2 and inputs[0] is a and inputs[1] is b,
        "a_grad": _grad(a),
        "b_grad": _grad(b),
        "unchanged": all(
            np.array_equal(np.asarray(t.detach().numpy()), v)
            for t, v in zip((a, b), before, strict=True)
        ),
        "requires_grad": [bool(a.requires_grad), bool(b.requires_grad)],
    }


# catches: backward run on the caller's tensors (their .grad changed, or an existing
# .grad added into the analytic gradient); inputs perturbed in place; the caller's list of
# inputs overwritten with the float64 copies
@exercise("02.9")
def test_gradcheck_leaves_the_callers_tensors_alone(run):
    got = run(gradcheck_on_callers_tensors, [_spec(186, 2, 3), _spec(187, 2, 3)])
    assert got["result"] is True, (
        f"gradcheck((a * b).tanh()) returned {got['result']!r} for a correct function whose "
        "input b already had a .grad: work on detached float64 copies of the inputs"
    )
    assert got["a_grad"] is None, "gradcheck left a .grad on the caller's tensor a"
    _close(got["b_grad"], np.ones((2, 3)), "the caller's b.grad after gradcheck (unchanged)")
    assert got["unchanged"], "gradcheck changed the values of the caller's tensors"
    assert got["requires_grad"] == [True, True], "gradcheck changed requires_grad of the inputs"
    assert got["list_kept"], (
        "gradcheck(f, inputs) replaced the tensors in the caller's list inputs; make a new "
        "list of copies (xs = [x.detach().double().requires_grad_() for x in inputs])"
    )
