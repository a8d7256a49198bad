"""Graded tests for chapter 02 (autograd). ``nb`` holds what the notebook defined.

The learner's pieces run inside the real engine: their Functions are applied in bigger
graphs next to minitorch's own ops, ``.backward()`` runs, and the gradients are compared
with the same graph built from minitorch's ops and with finite differences. Each failure
says in one line what was expected and what came out.
"""

import numpy as np

import minitorch
from minitorch import Function
from minitorch.autograd import GradcheckError, Node, gradcheck
from minitorch.grading import exercise

F64 = minitorch.float64


# --- helpers ------------------------------------------------------------------------------
def _leaf(seed, *shape, low=None, high=None, dtype=F64):
    """A float64 leaf that requires grad, with reproducible values."""
    rng = np.random.default_rng(seed)
    if low is None:
        values = rng.standard_normal(shape)
    else:
        values = rng.uniform(low, high, size=shape)
    return minitorch.tensor(np.asarray(values), dtype=dtype, requires_grad=True)


def _fresh(*tensors):
    """Copies of leaves, so one graph can be built twice (yours, then minitorch's)."""
    return [t.detach().clone().requires_grad_() for t in tensors]


def _array(t):
    return np.asarray(t.detach().numpy() if isinstance(t, minitorch.Tensor) else t)


def _close(got, expected, what, atol=1e-6, rtol=1e-5):
    """Assert ``got`` (a tensor, array or None) matches ``expected`` elementwise."""
    assert got is not None, f"{what} is None: no gradient reached it"
    got, expected = _array(got), _array(expected)
    assert got.shape == expected.shape, f"{what} has shape {got.shape}, expected {expected.shape}"
    bad = ~np.isclose(got, expected, atol=atol, rtol=rtol)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{what} is {got[index]:.6g} at index {index}, expected {expected[index]:.6g}"
        )


def _same_grads(build, leaves, what, build_reference=None):
    """Run ``build`` (which uses the notebook's pieces) and minitorch's own version of the
    same graph on copies of ``leaves``; their leaves' gradients must agree."""
    mine, ref = _fresh(*leaves), _fresh(*leaves)
    build(*mine).backward()
    (build_reference or build)(*ref).backward()
    for k, (a, b) in enumerate(zip(mine, ref, strict=True)):
        _close(a.grad, b.grad, f"{what}: the gradient of input {k}")


def _finite_differences(fn, inputs, what):
    """minitorch's gradcheck on ``fn``, turned into a one-line assertion."""
    try:
        gradcheck(fn, inputs)
    except GradcheckError as err:
        worst = str(err).splitlines()[1]
        raise AssertionError(f"{what} disagrees with finite differences: {worst}") from None


# --- 02.1 Mul and Div ---------------------------------------------------------------------
@exercise("02.1")
def test_mul_in_a_graph_matches_minitorch(nb):
    def mine(x, y):
        return (nb.Mul.apply(x, y).exp() + nb.Mul.apply(x, 3.0)).sum()

    def reference(x, y):
        return ((x * y).exp() + x * 3.0).sum()

    _same_grads(
        mine, [_leaf(1, 3, 4), _leaf(2, 3, 4)], "(Mul(x, y).exp() + Mul(x, 3)).sum()", reference
    )


@exercise("02.1")
def test_div_in_a_graph_matches_minitorch(nb):
    def mine(x, y):
        return (nb.Div.apply(x, y).tanh() + nb.Div.apply(2.0, y) + nb.Div.apply(x, 4.0)).sum()

    def reference(x, y):
        return ((x / y).tanh() + 2.0 / y + x / 4.0).sum()

    x, y = _leaf(3, 2, 5), _leaf(4, 2, 5, low=0.5, high=2.0)
    _same_grads(mine, [x, y], "(Div(x, y).tanh() + Div(2, y) + Div(x, 4)).sum()", reference)


@exercise("02.1")
def test_mul_of_a_tensor_with_itself(nb):
    x = _leaf(5, 4)
    nb.Mul.apply(x, x).sum().backward()
    _close(x.grad, 2 * _array(x), "Mul.apply(x, x).sum(): x.grad (both inputs are x: 2x)")


@exercise("02.1")
def test_mul_and_div_agree_with_finite_differences(nb):
    x, y = _leaf(6, 2, 3), _leaf(7, 2, 3, low=0.5, high=2.0)
    _finite_differences(nb.Mul.apply, (x, y), "Mul.apply(x, y)")
    _finite_differences(nb.Div.apply, (x, y), "Div.apply(x, y)")


@exercise("02.1")
def test_mul_and_div_backward_are_differentiable(nb):
    x = _leaf(8, 3, low=0.5, high=2.0)
    cube = nb.Mul.apply(x, nb.Mul.apply(x, x)).sum()
    (g,) = minitorch.autograd.grad(cube, x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    hint = "(compute backward with Tensor ops on ctx.saved_tensors, never .detach() or .numpy())"
    _close(gg, 6 * _array(x), f"the second derivative of x*x*x through your Mul {hint}")
    x = _leaf(9, 3, low=0.5, high=2.0)
    (g,) = minitorch.autograd.grad(nb.Div.apply(1.0, x).sum(), x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    _close(gg, 2 / _array(x) ** 3, f"the second derivative of 1/x through your Div {hint}")


# --- 02.2 Exp and Log ---------------------------------------------------------------------
@exercise("02.2")
def test_softplus_and_logsumexp_match_minitorch(nb):
    def mine(x):
        softplus = nb.Log.apply(nb.Exp.apply(x) + 1.0)
        logsumexp = nb.Log.apply(nb.Exp.apply(x).sum(1))
        return softplus.sum() + (logsumexp * 2.0).sum()

    def reference(x):
        return (x.exp() + 1.0).log().sum() + (x.exp().sum(1).log() * 2.0).sum()

    _same_grads(mine, [_leaf(10, 3, 4)], "softplus + logsumexp with your Exp and Log", reference)


@exercise("02.2")
def test_exp_and_log_agree_with_finite_differences(nb):
    _finite_differences(nb.Exp.apply, (_leaf(11, 2, 3),), "Exp.apply(x)")
    _finite_differences(nb.Log.apply, (_leaf(12, 2, 3, low=0.2, high=3.0),), "Log.apply(x)")


@exercise("02.2")
def test_exp_and_log_backward_are_differentiable(nb):
    x = _leaf(13, 4, low=0.3, high=2.0)
    (g,) = minitorch.autograd.grad(nb.Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    hint = "(use the saved tensor in Tensor ops, not its .numpy())"
    _close(gg, np.exp(_array(x)), f"the second derivative of exp(x) through your Exp {hint}")
    x = _leaf(14, 4, low=0.3, high=2.0)
    (g,) = minitorch.autograd.grad(nb.Log.apply(x).sum(), x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    _close(gg, -1 / _array(x) ** 2, f"the second derivative of log(x) through your Log {hint}")


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
]


@exercise("02.3")
def test_unbroadcast_sums_back_to_the_shape(nb):
    rng = np.random.default_rng(15)
    for grad_shape, shape in UNBROADCAST_CASES:
        values = rng.standard_normal(grad_shape)
        got = nb.unbroadcast(minitorch.tensor(values), shape)
        call = f"unbroadcast(grad of shape {grad_shape}, {shape})"
        assert isinstance(got, minitorch.Tensor), f"{call} returned a {type(got).__name__}"
        assert tuple(got.shape) == shape, f"{call} has shape {tuple(got.shape)}, expected {shape}"
        lead = len(grad_shape) - len(shape)
        expected = values.sum(axis=tuple(range(lead)))
        summed = tuple(i for i, n in enumerate(shape) if n == 1 and expected.shape[i] != 1)
        expected = expected.sum(axis=summed, keepdims=True).reshape(shape)
        _close(got, expected, call)


@exercise("02.3")
def test_unbroadcast_is_built_from_tensor_ops(nb):
    grad = _leaf(16, 4, 2, 3)  # a gradient that is itself in a graph (create_graph=True)
    summed = nb.unbroadcast(grad * 2.0, (2, 1))
    assert isinstance(summed, minitorch.Tensor) and summed.requires_grad, (
        "unbroadcast(grad, shape) of a grad that requires grad gave a result that does not: "
        "use Tensor ops (grad.sum, .reshape), not numpy, so gradients of gradients flow"
    )
    (summed * minitorch.tensor([[1.0], [-3.0]], dtype=F64)).sum().backward()
    expected = np.broadcast_to(np.array([[2.0], [-6.0]]), (4, 2, 3))
    _close(grad.grad, expected, "the gradient flowing back through unbroadcast(grad, (2, 1))")


@exercise("02.3")
def test_add_with_broadcast_inputs_in_a_graph(nb):
    cases = [((4, 3), (3,)), ((2, 1, 3), (4, 1)), ((), (2, 3)), ((2, 3), (1, 1)), ((3, 1), (1, 5))]
    for k, (sa, sb) in enumerate(cases):
        a, b = _leaf(20 + k, *sa), _leaf(30 + k, *sb)
        weights = minitorch.tensor(
            np.random.default_rng(k).standard_normal(np.broadcast_shapes(sa, sb))
        )

        def mine(a, b, weights=weights):
            return (nb.Add.apply(a * 2.0, b.tanh()) * weights).sum()

        def reference(a, b, weights=weights):
            return ((a * 2.0 + b.tanh()) * weights).sum()

        _same_grads(mine, [a, b], f"Add of shapes {sa} and {sb}", reference)


# --- 02.4 MatMul --------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((4, 1, 3, 2), (2, 2, 5)),
    ((1, 3, 4), (2, 4, 1)),
]


@exercise("02.4")
def test_matmul_grads_match_minitorch(nb):
    for k, (sa, sb) in enumerate(MATMUL_SHAPES):
        a, b = _leaf(40 + k, *sa), _leaf(50 + k, *sb)
        out_shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        weights = minitorch.tensor(np.random.default_rng(k).standard_normal(out_shape))

        def mine(a, b, weights=weights):
            return (nb.MatMul.apply(a, b) * weights).sum()

        def reference(a, b, weights=weights):
            return ((a @ b) * weights).sum()

        _same_grads(mine, [a, b], f"MatMul of shapes {sa} @ {sb}", reference)


@exercise("02.4")
def test_batched_matmul_agrees_with_finite_differences(nb):
    a, b = _leaf(60, 2, 1, 2, 3), _leaf(61, 3, 3, 2)
    _finite_differences(nb.MatMul.apply, (a, b), "MatMul.apply of shapes (2, 1, 2, 3) @ (3, 3, 2)")


@exercise("02.4")
def test_a_two_layer_network_with_your_matmul(nb):
    def mine(x, w1, w2):
        return nb.MatMul.apply(nb.MatMul.apply(x, w1).relu(), w2).tanh().mean()

    def reference(x, w1, w2):
        return ((x @ w1).relu() @ w2).tanh().mean()

    leaves = [_leaf(62, 5, 4), _leaf(63, 4, 6), _leaf(64, 6, 2)]
    _same_grads(mine, leaves, "a two-layer network built with MatMul", reference)


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


@exercise("02.5")
def test_sum_grads_match_minitorch(nb):
    for k, (dim, keepdim) in enumerate(SUM_CASES):
        x = _leaf(70 + k, 2, 3, 4)
        out_shape = x.detach().sum(dim, keepdim=keepdim).shape
        weights = minitorch.tensor(np.random.default_rng(k).standard_normal(out_shape))

        def mine(x, dim=dim, keepdim=keepdim, weights=weights):
            return (nb.Sum.apply(x, dim, keepdim) * weights).sum()

        def reference(x, dim=dim, keepdim=keepdim, weights=weights):
            return (x.sum(dim, keepdim=keepdim) * weights).sum()

        _same_grads(mine, [x], f"Sum.apply(x of shape (2, 3, 4), {dim}, {keepdim})", reference)


@exercise("02.5")
def test_sum_normalising_with_broadcast(nb):
    def mine(x, t):
        e = x.exp()
        p = e / nb.Sum.apply(e, 1, True)
        return (p * t).sum() + nb.Sum.apply(nb.Sum.apply(x * x, 0, False), None, False)

    def reference(x, t):
        e = x.exp()
        return (e / e.sum(1, keepdim=True) * t).sum() + (x * x).sum(0).sum()

    leaves = [_leaf(80, 3, 5), _leaf(81, 3, 5)]
    _same_grads(mine, leaves, "a softmax normalised with Sum(e, 1, True)", reference)


@exercise("02.5")
def test_sum_agrees_with_finite_differences(nb):
    x = _leaf(82, 2, 3)
    _finite_differences(lambda t: nb.Sum.apply(t, 1, False) * 2.0, (x,), "Sum.apply(x, 1, False)")
    _finite_differences(lambda t: nb.Sum.apply(t, (0, 1), True), (x,), "Sum.apply(x, (0, 1), True)")


# --- 02.6 topological order ---------------------------------------------------------------
def _reachable(root):
    """Every node reachable from ``root`` along next_functions (an explicit stack)."""
    seen, stack = {root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def _check_order(nb, tensor, what):
    order = nb.topological_order(tensor)
    assert order is not None, f"topological_order({what}) returned None: return a list of nodes"
    order = list(order)
    nodes = _reachable(tensor.grad_fn)
    position = {}
    for i, node in enumerate(order):
        if not isinstance(node, Node):
            raise AssertionError(
                f"topological_order({what}) contains a {type(node).__name__}; list the graph's "
                "nodes (grad_fn objects and the AccumulateGrad nodes of next_functions)"
            )
        if node not in nodes:
            raise AssertionError(
                f"topological_order({what}) contains {node!r}, which is not a node of the graph"
            )
        if node in position:
            count = sum(n is node for n in order)
            raise AssertionError(
                f"topological_order({what}) lists {node.name()} {count} times; "
                "each node must appear once (remember the nodes you have seen)"
            )
        position[node] = i
    missing = sorted(n.name() for n in nodes if n not in position)
    if missing:
        raise AssertionError(
            f"topological_order({what}) misses {len(missing)} of the graph's {len(nodes)} "
            f"nodes, among them {missing[0]}; follow next_functions all the way down to the "
            "leaves' AccumulateGrad nodes"
        )
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and position[child] < position[node]:
                raise AssertionError(
                    f"topological_order({what}) puts {child.name()} (position "
                    f"{position[child]}) before {node.name()} (position {position[node]}), "
                    f"but {node.name()} sends it a gradient, so it must come first"
                )
    return order


@exercise("02.6")
def test_order_of_small_graphs(nb):
    x, w, b = _leaf(90, 3), _leaf(91, 3), _leaf(92)
    order = _check_order(nb, (x * w).sum() + b, "(x * w).sum() + b")
    assert len(order) == 6, (
        f"topological_order((x * w).sum() + b) has {len(order)} nodes, expected 6"
    )
    y = x * 2.0
    _check_order(nb, y + y.exp(), "y + y.exp()")  # a diamond: y's node is reached twice


@exercise("02.6")
def test_order_with_shared_subexpressions(nb):
    x, y = _leaf(93, 4), _leaf(94, 4)
    h = x * y
    z = (h.exp() + h * h + h / (y * y + 1.0)).sum() * h.sum()
    _check_order(nb, z, "a graph that reuses h = x * y four times")
    x, w1, b1, w2 = _leaf(95, 5, 3), _leaf(96, 3, 4), _leaf(97, 4), _leaf(98, 4, 1)
    loss = (((x @ w1 + b1).relu() @ w2) ** 2).mean()
    _check_order(nb, loss, "a two-layer network's loss")


@exercise("02.6")
def test_order_when_paths_multiply(nb):
    x = _leaf(99, 2)
    h = x
    for _ in range(18):
        h = h + h  # each level doubles the number of paths down to x: 2**18 in the end
    order = _check_order(nb, h.sum(), "h.sum() after 18 levels of h = h + h")
    assert len(order) == 20, f"topological_order has {len(order)} nodes, expected 20"


@exercise("02.6")
def test_order_of_a_10000_op_chain(nb):
    x = _leaf(100, 1)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    try:
        _check_order(nb, y, "a chain of 10,000 multiplications")
    except RecursionError:
        raise AssertionError(
            "topological_order of a chain of 10,000 ops hit Python's recursion limit: "
            "walk the graph with an explicit stack or queue instead of recursion"
        ) from None


# --- 02.7 the backward pass ---------------------------------------------------------------
def _mlp(x, w1, b1, w2):
    return ((x @ w1 + b1).relu() @ w2).tanh().mean()


def _shared(x, y):
    h = x * y
    return (h.exp() + h * h + h / (y * y + 1.0)).sum()


def _softmax_loss(x, t):
    e = (x - x.max()).exp()
    return -((e / e.sum(1, keepdim=True)).log() * t).sum()


GRAPHS = [
    (_mlp, [(5, 3), (3, 4), (4,), (4, 2)], "a two-layer network"),
    (_shared, [(4,), (4,)], "a graph reusing h = x * y"),
    (_softmax_loss, [(3, 4), (3, 4)], "a softmax cross-entropy"),
    (lambda x: (x * x * x).sum(), [(3,)], "(x * x * x).sum()"),
]


def _run_mine(nb, tensor, gradient=None):
    try:
        if gradient is None:
            nb.backward(tensor)
        else:
            nb.backward(tensor, gradient)
    except RecursionError:
        raise AssertionError(
            "backward (or the topological_order it uses) hit Python's recursion limit: "
            "walk the graph with loops and an explicit stack"
        ) from None


@exercise("02.7")
def test_backward_matches_tensor_backward(nb):
    for k, (build, shapes, what) in enumerate(GRAPHS):
        leaves = [_leaf(110 + 10 * k + i, *s) for i, s in enumerate(shapes)]
        mine, ref = _fresh(*leaves), _fresh(*leaves)
        _run_mine(nb, build(*mine))
        build(*ref).backward()
        for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
            _close(a.grad, b.grad, f"backward({what}): the .grad of leaf {i}")
            assert not a.grad.requires_grad, (
                f"backward({what}): the .grad of leaf {i} requires grad; keep the "
                "accumulation out of the graph (add tensors call_backward returned)"
            )


@exercise("02.7")
def test_backward_with_a_given_gradient(nb):
    x, w = _leaf(150, 3), _leaf(151, 3)
    y = (x * w).exp()
    gradient = minitorch.tensor([1.0, -2.0, 0.5], dtype=F64)
    _run_mine(nb, y, gradient)
    expected = _array(gradient) * np.exp(_array(x) * _array(w))
    _close(x.grad, expected * _array(w), "backward(y, gradient) with y = (x * w).exp(): x.grad")
    _close(w.grad, expected * _array(x), "backward(y, gradient) with y = (x * w).exp(): w.grad")


@exercise("02.7")
def test_backward_accumulates_into_existing_grads(nb):
    x, y = _leaf(152, 4), _leaf(153, 4)
    loss = _shared(x, y)
    ref_x, ref_y = _fresh(x, y)
    _shared(ref_x, ref_y).backward()
    _run_mine(nb, loss)
    _run_mine(nb, loss)  # the same graph again: call_backward keeps the saved tensors
    what = "after calling backward(loss) twice, x.grad (gradients must add up)"
    _close(x.grad, 2 * _array(ref_x.grad), what)
    x.grad = minitorch.ones(4, dtype=F64)
    y.grad = None
    _run_mine(nb, _shared(x, y))
    _close(x.grad, 1 + _array(ref_x.grad), "x.grad that held ones before backward")
    _close(y.grad, ref_y.grad, "y.grad that was None before backward")


@exercise("02.7")
def test_accumulating_never_writes_into_a_shared_gradient(nb):
    a, b = _leaf(156, 3), _leaf(157, 3)
    weights = minitorch.tensor([1.0, -2.0, 0.5], dtype=F64)
    loss = ((a + b) * weights).sum()  # Add hands the same gradient tensor to a and b
    _run_mine(nb, loss)
    _run_mine(nb, loss)
    for name, leaf in (("a", a), ("b", b)):
        _close(
            leaf.grad,
            2 * _array(weights),
            f"{name}.grad after backward(((a + b) * w).sum()) twice (store leaf.grad + grad, "
            "a new tensor, instead of adding in place)",
        )


@exercise("02.7")
def test_backward_touches_only_leaves_that_require_grad(nb):
    x = _leaf(154, 3)
    c = minitorch.tensor([1.0, 2.0, 3.0], dtype=F64)  # a constant: requires no grad
    h = x * c
    _run_mine(nb, (h * h).sum())
    assert c.grad is None, f"a tensor that does not require grad got .grad = {c.grad}"
    assert h.grad is None, "an intermediate (non-leaf) tensor got a .grad; only leaves do"
    _close(x.grad, 2 * _array(x) * _array(c) ** 2, "x.grad of ((x * c) ** 2).sum()")


@exercise("02.7")
def test_backward_through_a_10000_op_chain(nb):
    x = _leaf(155, 2)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    _run_mine(nb, y.sum())
    _close(x.grad, np.full(2, 1.0001**10_000), "x.grad after a chain of 10,000 multiplications")


# --- 02.8 a custom Function: clipped gradient ---------------------------------------------
@exercise("02.8")
def test_clip_forward_is_the_identity(nb):
    x = _leaf(160, 2, 3)
    y = nb.ClipGrad.apply(x)
    _close(y, x, "ClipGrad.apply(x)")
    assert y.grad_fn is not None and y.grad_fn.name() == "ClipGradBackward", (
        "ClipGrad.apply(x) of a tensor that requires grad should have grad_fn ClipGradBackward"
    )
    assert y.data_ptr() != x.data_ptr(), (
        "ClipGrad.apply(x) shares memory with x: return a copy of the array from forward"
    )


@exercise("02.8")
def test_clip_bounds_the_incoming_gradient(nb):
    x = _leaf(161, 5)
    scale = minitorch.tensor([3.0, -0.5, -4.0, 0.9, 1.0], dtype=F64)
    (nb.ClipGrad.apply(x) * scale).sum().backward()
    _close(
        x.grad, [1.0, -0.5, -1.0, 0.9, 1.0], "x.grad of (ClipGrad(x) * [3, -0.5, -4, 0.9, 1]).sum()"
    )


@exercise("02.8")
def test_clip_acts_where_it_sits_in_the_graph(nb):
    x = _leaf(162, 3)
    (nb.ClipGrad.apply(x * 10.0)).sum().backward()
    _close(
        x.grad, np.full(3, 10.0), "x.grad of ClipGrad(x * 10).sum() (the clip sees 1, x gets 10)"
    )
    x = _leaf(163, 3)
    (nb.ClipGrad.apply(x) * 10.0).sum().backward()
    _close(x.grad, np.ones(3), "x.grad of (ClipGrad(x) * 10).sum() (the clip sees 10)")


@exercise("02.8")
def test_training_with_a_clipped_gradient(nb):
    rng = np.random.default_rng(164)
    inputs = rng.uniform(-2.0, 2.0, size=8)
    targets = 3.0 * inputs + rng.normal(0.0, 4.0, size=8)
    w = minitorch.tensor([0.0], dtype=F64, requires_grad=True)
    x, t = minitorch.tensor(inputs), minitorch.tensor(targets)
    w_ref, lr = 0.0, 0.05
    for step in range(5):
        loss = ((nb.ClipGrad.apply(w * x) - t) ** 2).sum()
        w.grad = None
        loss.backward()
        with minitorch.no_grad():
            w -= lr * w.grad
        clipped = np.clip(2.0 * (w_ref * inputs - targets), -1.0, 1.0)
        w_ref -= lr * float((clipped * inputs).sum())
        _close(w, [w_ref], f"w after {step + 1} SGD steps with ClipGrad(w * x) in the loss")


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


@exercise("02.9")
def test_numerical_grad_of_a_cubic(nb):
    x = _leaf(170, 2, 3).detach()
    got = nb.numerical_grad(lambda t: (t**3).sum(), x)
    _close(got, 3 * _array(x) ** 2, "numerical_grad of (x**3).sum()", atol=1e-6, rtol=1e-6)
    got = nb.numerical_grad(lambda t: (t**3).sum(), x, eps=0.5)
    expected = 3 * _array(x) ** 2 + 0.25
    _close(got, expected, "numerical_grad of (x**3).sum() with eps=0.5 (central: 3x^2 + eps^2)")


@exercise("02.9")
def test_numerical_grad_works_in_float64(nb):
    x = _leaf(171, 5, dtype=minitorch.float32).detach()
    before = _array(x).copy()
    got = nb.numerical_grad(lambda t: (t.exp() * t).sum(), x)
    values = before.astype(np.float64)
    expected = (1 + values) * np.exp(values)
    _close(
        got,
        expected,
        "numerical_grad of (x.exp() * x).sum() for a float32 x (perturb a float64 copy)",
        atol=1e-6,
        rtol=1e-6,
    )
    assert np.array_equal(_array(x), before), "numerical_grad changed the values of x"
    scalar = minitorch.tensor(1.5, dtype=F64)
    _close(nb.numerical_grad(lambda t: t * t, scalar), 3.0, "numerical_grad of x * x at x = 1.5")


@exercise("02.9")
def test_gradcheck_passes_correct_functions(nb):
    cases = [
        (lambda a, b: (a @ b).tanh(), [_leaf(172, 3, 4), _leaf(173, 4, 2)], "(a @ b).tanh()"),
        (lambda a, b: a * b + a.exp(), [_leaf(174, 2, 3), _leaf(175, 3)], "a * b + a.exp()"),
        (_Cube.apply, [_leaf(176, 4)], "a correct Cube Function"),
        (
            lambda a, b: (a @ b).sigmoid(),
            [_leaf(177, 3, 4, dtype=minitorch.float32), _leaf(178, 4, 2, dtype=minitorch.float32)],
            "(a @ b).sigmoid() with float32 inputs (check in float64)",
        ),
        (lambda a: (a * a).sum(), [_leaf(179, 2, 2)], "(a * a).sum(), a scalar output"),
    ]
    for f, inputs, what in cases:
        result = nb.gradcheck(f, inputs)
        assert result is not None, f"gradcheck({what}) returned None: return True or False"
        assert result, f"gradcheck({what}) returned {result!r} for a correct function"


@exercise("02.9")
def test_gradcheck_catches_wrong_backwards(nb):
    cases = [
        (_BadSquare.apply, [_leaf(180, 3)], "a Square whose backward forgets the factor 2"),
        (
            _MulWrongForB.apply,
            [_leaf(181, 2, 3), _leaf(182, 2, 3)],
            "a Mul whose backward is wrong only for its second input",
        ),
        (_ExpOffByOnePercent.apply, [_leaf(183, 4)], "an Exp whose backward is 1% too large"),
    ]
    for f, inputs, what in cases:
        result = nb.gradcheck(f, inputs)
        assert result is not None, f"gradcheck({what}) returned None: return True or False"
        assert not result, f"gradcheck({what}) returned {result!r}; it should return False"
