"""The autograd engine and the Tensor API around it: graph nodes, backward, grad, hooks,
grad mode, higher-order gradients and deep graphs."""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import minitorch
from minitorch import autograd
from minitorch.autograd.graph import AccumulateGrad
from minitorch.function import Context, Function


def leaf(values, dtype=minitorch.float64):
    return minitorch.tensor(values, dtype=dtype, requires_grad=True)


def close(t, expected, **kw):
    np.testing.assert_allclose(t.detach().numpy(), expected, **kw)


# --- graph recording --------------------------------------------------------------------------
def test_apply_records_a_node_only_when_an_input_requires_grad():
    a, b = leaf([1.0, 2.0]), minitorch.tensor([3.0, 4.0])
    assert (b * 2).grad_fn is None and not (b * 2).requires_grad
    y = a * b
    assert y.requires_grad and not y.is_leaf
    assert type(y.grad_fn).__name__ == "MulBackward0" == y.grad_fn.name()  # PyTorch's name
    (acc, nr_a), (none, nr_b) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.variable is a and nr_a == 0
    assert none is None and nr_b == 0
    assert "grad_fn=<MulBackward0>" in repr(y)


def test_next_functions_chain_and_leaf_nodes_are_shared():
    a = leaf([1.0, 2.0])
    y = (a * 2 + a).sum()
    assert y.grad_fn.name() == "SumBackward0"
    ((add, _),) = y.grad_fn.next_functions
    assert add.name() == "AddBackward0"
    (mul, _), (acc, _) = add.next_functions
    assert mul.name() == "MulBackward0"
    assert mul.next_functions[0][0] is acc  # one AccumulateGrad per leaf


def test_grad_mode_off_records_nothing():
    a = leaf([1.0])
    with minitorch.no_grad():
        y = a * 2
    assert y.grad_fn is None and not y.requires_grad
    assert minitorch.is_grad_enabled()


def test_integer_and_bool_outputs_are_not_differentiable():
    a = leaf([[1.0, 3.0], [2.0, 0.0]])
    assert not (a > 1).requires_grad
    assert not a.argmax(1).requires_grad
    values, indices = a.max(1)
    assert values.requires_grad and not indices.requires_grad
    assert values.grad_fn is not None and indices.grad_fn is None


def test_repr_and_is_leaf():
    a = leaf([1.0])
    assert a.is_leaf and "requires_grad=True" in repr(a)
    assert not (a + 1).is_leaf


# --- backward ----------------------------------------------------------------------------------
def test_backward_accumulates_into_leaves():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    (a * b + a).sum().backward()
    close(a.grad, [5.0, 6.0, 7.0])
    close(b.grad, [1.0, 2.0, 3.0])
    (a * b).sum().backward()  # a second graph: gradients add up
    close(a.grad, [9.0, 11.0, 13.0])


def test_a_tensor_used_twice_gets_the_sum_of_both_gradients():
    a = leaf([2.0])
    y = a * a * a  # a node feeding two consumers, and a leaf used three times
    y.backward()
    close(a.grad, [12.0])


def test_backward_with_an_explicit_gradient():
    a = leaf([1.0, 2.0])
    y = a * 3
    y.backward(minitorch.tensor([1.0, 10.0], dtype=minitorch.float64))
    close(a.grad, [3.0, 30.0])


def test_backward_on_a_leaf():
    a = leaf(2.0)
    a.backward()
    close(a.grad, 1.0)


def test_gradients_keep_float32():
    w = minitorch.randn(3, 2, requires_grad=True)
    x = minitorch.randn(4, 3)
    (x @ w).relu().sum().backward()
    assert w.grad.dtype is minitorch.float32


def test_float32_leaf_through_a_float64_op_gets_a_float32_grad():
    a = minitorch.tensor([1.0, 2.0], requires_grad=True)
    (a.double() * 2).sum().backward()
    assert a.grad.dtype is minitorch.float32
    close(a.grad, [2.0, 2.0])


def test_leaf_grads_never_share_memory():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()  # AddBackward returns the same gradient for both
    a.grad.zero_()
    close(b.grad, [1.0, 1.0])


def test_a_broadcast_gradient_becomes_a_real_tensor():
    a = leaf([[1.0, 2.0], [3.0, 4.0]])
    a.sum().backward()  # SumBackward expands: the stored grad must be writable memory
    assert a.grad.is_contiguous()
    a.grad.add_(1.0)
    close(a.grad, np.full((2, 2), 2.0))


def test_the_callers_gradient_is_not_aliased_by_grad():
    a = leaf([1.0, 2.0])
    g = minitorch.tensor([1.0, 1.0], dtype=minitorch.float64)
    (a + 0).backward(g)
    a.grad.zero_()
    close(g, [1.0, 1.0])


def test_backward_with_inputs_accumulates_only_there():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).backward(inputs=[a])
    close(a.grad, [2.0])
    assert b.grad is None


def test_multiple_roots():
    a = leaf([1.0, 2.0])
    y1, y2 = (a * 2).sum(), (a * a).sum()
    autograd.backward([y1, y2])
    close(a.grad, [4.0, 6.0])


def test_multi_output_node_with_only_one_output_used():
    a = leaf([[1.0, 5.0, 3.0], [7.0, 2.0, 2.0]])
    values, indices = a.max(dim=1)
    values.sum().backward()
    close(a.grad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


# --- autograd.grad -----------------------------------------------------------------------------
def test_grad_returns_without_touching_dot_grad():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ga, gb = autograd.grad((a * b).sum(), [a, b])
    close(ga, [3.0, 4.0])
    close(gb, [1.0, 2.0])
    assert a.grad is None and b.grad is None


def test_grad_with_respect_to_an_intermediate():
    a = leaf([1.0, 2.0])
    h = a * 3
    (gh,) = autograd.grad((h * h).sum(), h)
    close(gh, [6.0, 12.0])


def test_grad_allow_unused():
    a, b = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((a * 2).sum(), [a, b])
    ga, gb = autograd.grad((a * 2).sum(), [a, b], allow_unused=True)
    assert gb is None
    _, gb = autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)
    close(gb, [0.0])


def test_grad_of_an_input_that_does_not_require_grad():
    a = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad((a * 2).sum(), minitorch.tensor([1.0]))


def test_grad_only_runs_the_needed_part_of_the_graph():
    calls = []

    class Spy(Function):
        @staticmethod
        def forward(ctx, x):
            return x.copy()

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            return grad

    a, b = leaf([1.0]), leaf([2.0])
    y = a * 2 + Spy.apply(b)
    autograd.grad(y.sum(), a)
    assert calls == []


# --- higher order ------------------------------------------------------------------------------
def test_create_graph_gives_differentiable_gradients():
    x = leaf([1.0, 2.0, 3.0])
    y = (x**3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    close(g, 3 * np.array([1.0, 4.0, 9.0]))
    assert g.requires_grad
    (h,) = autograd.grad(g.sum(), x)
    close(h, 6 * np.array([1.0, 2.0, 3.0]))


def test_hessian_vector_product_matches_finite_differences():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(4)
    v = rng.standard_normal(4)
    a = minitorch.tensor(rng.standard_normal((5, 4)))

    def loss(w):
        return ((a @ w).tanh() ** 2).sum() + (w.exp() * w).sum()

    def gradient(w_np):
        w = minitorch.tensor(w_np, requires_grad=True)
        (g,) = autograd.grad(loss(w), w)
        return g.numpy()

    w = minitorch.tensor(w0, requires_grad=True)
    (g,) = autograd.grad(loss(w), w, create_graph=True)
    (hv,) = autograd.grad((g * minitorch.tensor(v)).sum(), w)
    eps = 1e-6
    numeric = (gradient(w0 + eps * v) - gradient(w0 - eps * v)) / (2 * eps)
    close(hv, numeric, rtol=1e-5, atol=1e-6)


def test_gradient_penalty_trains_like_finite_differences():
    # A WGAN-GP style penalty: (|d D(x)/dx| - 1)^2, differentiated w.r.t. D's weights.
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w0 = rng.standard_normal((4, 1))

    def penalty(w):
        d = (x @ w).sigmoid().sum()
        (gx,) = autograd.grad(d, x, create_graph=True)
        return ((gx * gx).sum(1).sqrt() - 1.0).pow(2).mean()

    w = minitorch.tensor(w0, requires_grad=True)
    penalty(w).backward()
    numeric = np.zeros_like(w0)
    for i in range(4):
        e = np.zeros_like(w0)
        e[i] = 1e-6
        plus = penalty(minitorch.tensor(w0 + e)).item()
        minus = penalty(minitorch.tensor(w0 - e)).item()
        numeric[i] = (plus - minus) / 2e-6
    close(w.grad, numeric, rtol=1e-5, atol=1e-7)


def test_backward_create_graph_keeps_graph_on_grad():
    x = leaf([2.0])
    (x**2).backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.backward()
    close(x.grad, [2.0])


# --- deep graphs -------------------------------------------------------------------------------
def test_a_10000_op_chain_backpropagates_without_recursion():
    x = minitorch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    close(x.grad, [1.0001**10_000], rtol=1e-3)
    del y  # and the graph is freed without hitting the recursion limit


def test_a_deep_graph_is_freed_without_recursion_errors(monkeypatch):
    x = minitorch.tensor([1.0], requires_grad=True)
    y = x
    for i in range(20_000):
        y = y * x  # each node saves both inputs
        if i == 10_000:
            middle = weakref.ref(y.grad_fn)
    root = weakref.ref(y.grad_fn)
    unraisable = []  # an error in a destructor is printed and swallowed: catch it here
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    collecting = gc.isenabled()
    gc.disable()  # reference counting alone must free it: the graph holds no cycles
    try:
        del y
        assert root() is None and middle() is None, "the graph outlived its last tensor"
    finally:
        if collecting:
            gc.enable()
    assert not unraisable, [str(u.exc_value) for u in unraisable]
    assert x.grad_fn is None and x.grad is None  # the leaf itself is untouched


# --- retain_grad and hooks ---------------------------------------------------------------------
def test_retain_grad_keeps_an_intermediate_gradient():
    a = leaf([1.0, 2.0])
    h = a * 3
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    close(h.grad, [6.0, 12.0])
    assert (a * 2).grad is None  # other intermediates keep no gradient


def test_hooks_see_and_replace_gradients():
    a = leaf([1.0, 2.0])
    h = a * 3
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.numpy().copy()))
    h.register_hook(lambda g: g * 0)  # replace the gradient by zeros
    h.sum().backward()
    np.testing.assert_allclose(seen[0], [1.0, 1.0])
    close(a.grad, [0.0, 0.0])
    handle.remove()
    a.grad = None
    (a * 3).sum().backward()
    assert len(seen) == 1


def test_leaf_hook_runs_before_accumulation():
    a = leaf([1.0, 2.0])
    handle = a.register_hook(lambda g: g * 10)
    (a * 2).sum().backward()
    close(a.grad, [20.0, 20.0])
    handle.remove()
    (a * 2).sum().backward()
    close(a.grad, [22.0, 22.0])


def test_hook_on_a_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        minitorch.tensor([1.0]).register_hook(lambda g: g)


def test_retained_grad_sees_hook_changes():
    a = leaf([1.0])
    h = a * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 5)
    h.sum().backward()
    close(h.grad, [5.0])


# --- grad mode ---------------------------------------------------------------------------------
def test_no_grad_enable_grad_nest():
    a = leaf([1.0])
    with minitorch.no_grad():
        assert not minitorch.is_grad_enabled()
        with minitorch.enable_grad():
            assert (a * 2).requires_grad
        assert not (a * 2).requires_grad
    assert minitorch.is_grad_enabled()


def test_grad_mode_managers_as_decorators():
    a = leaf([1.0])

    @minitorch.no_grad()
    def f(x):
        return x * 2

    @minitorch.no_grad
    def g(x):
        return x * 2

    @minitorch.set_grad_enabled(False)
    def h(x):
        return x * 2

    assert not f(a).requires_grad and not g(a).requires_grad and not h(a).requires_grad
    assert minitorch.is_grad_enabled()
    assert f.__name__ == "f"


def test_set_grad_enabled_as_function_and_context():
    minitorch.set_grad_enabled(False)
    try:
        assert not minitorch.is_grad_enabled()
    finally:
        minitorch.set_grad_enabled(True)
    with minitorch.set_grad_enabled(False):
        assert not minitorch.is_grad_enabled()
    assert minitorch.is_grad_enabled()
    assert autograd.no_grad is minitorch.no_grad


def test_grad_mode_is_thread_local():
    seen = []
    with minitorch.no_grad():
        t = threading.Thread(target=lambda: seen.append(minitorch.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_no_grad_restores_on_exceptions():
    with pytest.raises(ValueError), minitorch.no_grad():
        raise ValueError
    assert minitorch.is_grad_enabled()


# --- requires_grad, detach, data ---------------------------------------------------------------
def test_requires_grad_flag_and_method():
    t = minitorch.zeros(2)
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad = False
    assert not t.requires_grad
    assert minitorch.ones(2, requires_grad=True).requires_grad


def test_detach_shares_storage_but_not_history():
    a = leaf([1.0, 2.0])
    y = a * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    assert d.untyped_storage() is y.untyped_storage()
    d.fill_(7.0)
    close(y, [7.0, 7.0])


def test_detach_in_place_makes_a_leaf():
    y = leaf([1.0]) * 2
    assert y.detach_() is y and y.is_leaf and not y.requires_grad


def test_data_is_detached_and_settable():
    w = leaf([1.0, 2.0])
    assert not w.data.requires_grad
    w.data.mul_(2)  # the usual (pre-no_grad) way to update a parameter
    close(w, [2.0, 4.0])
    w.data = minitorch.tensor([5.0], dtype=minitorch.float64)
    close(w, [5.0])
    assert w.requires_grad


def test_inplace_updates_of_a_leaf_under_no_grad():
    w = leaf([1.0, 2.0])
    (w * w).sum().backward()
    with minitorch.no_grad():
        w -= 0.5 * w.grad
        w.sub_(w.grad * 0)
        w[0] = 10.0
    close(w, [10.0, 0.0])
    assert w.is_leaf and w.requires_grad


# --- in-place ops on non-leaves are recorded --------------------------------------------------
def test_setitem_on_a_non_leaf_is_differentiable():
    a, v = leaf([1.0, 2.0, 3.0]), leaf([10.0])
    y = a * 2
    y[1:2] = v * 3
    assert y.grad_fn.name() == "IndexPutBackward0"
    (y * minitorch.tensor([1.0, 2.0, 3.0], dtype=minitorch.float64)).sum().backward()
    close(a.grad, [2.0, 0.0, 6.0])
    close(v.grad, [6.0])


def test_writing_a_tensor_that_requires_grad_into_a_plain_buffer():
    a = leaf([1.0, 2.0])
    buf = minitorch.zeros(3, dtype=minitorch.float64)
    buf[1:] = a * a
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    close(a.grad, [2.0, 4.0])


def test_add_in_place_on_a_non_leaf():
    a = leaf([1.0, 2.0])
    y = a * 2
    y.add_(1.0)
    y.mul_(3.0)
    y.sum().backward()
    close(a.grad, [6.0, 6.0])


# --- custom Functions -------------------------------------------------------------------------
class Cube(Function):
    """What a learner writes: forward on arrays, backward with minitorch ops."""

    @staticmethod
    def forward(ctx: Context, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x**3

    @staticmethod
    def backward(ctx: Context, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * ctx.scale * x * x, None


def test_custom_function():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"  # a Function of your own: no number
    assert y.grad_fn.needs_input_grad == (True, False)
    y.sum().backward()
    close(x.grad, [6.0, 24.0])
    assert autograd.gradcheck(lambda x: Cube.apply(x, 2.0), (x,))
    assert autograd.gradgradcheck(lambda x: Cube.apply(x, 2.0), (x,))


def test_custom_function_saved_output_is_connected_for_double_backward():
    class MyExp(Function):
        @staticmethod
        def forward(ctx, x):
            out = np.exp(x)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    x = leaf([0.5, 1.0])
    assert autograd.gradgradcheck(MyExp.apply, (x,))


def test_custom_function_with_a_broadcastable_gradient_is_summed_back():
    class Spread(Function):
        @staticmethod
        def forward(ctx, x):
            return x * np.ones((3, 1))

        @staticmethod
        def backward(ctx, grad):
            return grad  # shape (3, 2) for an input of shape (2,): the engine sums it back

    x = leaf([1.0, 2.0])
    Spread.apply(x).sum().backward()
    close(x.grad, [3.0, 3.0])


def test_mark_non_differentiable():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x)
            ranks = order.astype(x.dtype)
            ctx.mark_non_differentiable(ranks)
            ctx.order = order
            return x[order], ranks

        @staticmethod
        def backward(ctx, grad, grad_ranks):
            inverse = np.argsort(ctx.order)
            return grad[inverse.tolist()]

    x = leaf([3.0, 1.0, 2.0])
    values, ranks = SortWithIndex.apply(x)
    assert values.requires_grad and not ranks.requires_grad
    (values * minitorch.tensor([1.0, 2.0, 3.0], dtype=minitorch.float64)).sum().backward()
    close(x.grad, [3.0, 1.0, 2.0])
