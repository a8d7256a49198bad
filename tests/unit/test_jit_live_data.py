"""Trace and compile keep what must stay live: random draws are nodes that draw again on
every call (from the global generator, as eager code does), and tensor indices and loss
targets are values the graph reads, never constants baked in at trace time."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch as mt
import minitorch.nn.functional as F
from minitorch import jit, nn


def test_a_traced_draw_draws_again_on_every_call_in_the_eager_order() -> None:
    def f(x):
        return x + mt.rand(3) * mt.randn(3)

    traced = jit.trace(f, (mt.zeros(3),))
    assert [n.op for n in traced.graph.nodes].count("rand") == 1
    mt.manual_seed(7)
    eager = [f(mt.zeros(3)).tolist() for _ in range(2)]
    mt.manual_seed(7)
    assert [traced(mt.zeros(3)).tolist() for _ in range(2)] == eager
    assert eager[0] != eager[1]


def test_the_passes_neither_merge_fold_nor_drop_a_draw() -> None:
    def f(x):
        unused = mt.randn(2)  # noqa: F841 - an unused draw still moves the generator
        return x + mt.randn(3) + mt.randn(3)

    optimized = jit.optimize(jit.trace(f, (mt.zeros(3),)))
    assert [n.op for n in optimized.graph.nodes].count("randn") == 3
    mt.manual_seed(1)
    expected = f(mt.zeros(3)).tolist()
    mt.manual_seed(1)
    assert optimized(mt.zeros(3)).tolist() == expected


def test_compiled_dropout_in_training_mode_draws_a_new_mask_each_call() -> None:
    drop = nn.Dropout(0.5).train()
    compiled = mt.compile(drop)
    mt.manual_seed(3)
    eager = [drop(mt.ones(16)).tolist() for _ in range(2)]
    mt.manual_seed(3)
    assert [compiled(mt.ones(16)).tolist() for _ in range(2)] == eager
    assert eager[0] != eager[1]


def test_randint_and_randperm_in_a_compiled_function_match_eager() -> None:
    def f(x):
        return x[mt.randperm(4)] + mt.randint(0, 9, (4,))

    compiled = mt.compile(f)
    mt.manual_seed(5)
    eager = [f(mt.arange(4)).tolist() for _ in range(3)]
    mt.manual_seed(5)
    assert [compiled(mt.arange(4)).tolist() for _ in range(3)] == eager


def test_a_tensor_index_is_an_input_of_the_graph() -> None:
    x = mt.arange(10.0)
    traced = jit.trace(lambda x, i: x[i] * 2, (x, mt.tensor([1, 2])))
    assert traced(x, mt.tensor([5, 6])).tolist() == [10.0, 12.0]
    compiled = mt.compile(lambda x, i: x[i] * 2)
    assert compiled(x, mt.tensor([1, 2])).tolist() == [2.0, 4.0]
    assert compiled(x, mt.tensor([3, 4])).tolist() == [6.0, 8.0]


def test_a_compiled_loss_reads_each_batchs_targets() -> None:
    mt.manual_seed(0)
    logits = mt.randn(4, 3)
    loss = mt.compile(lambda z, t: F.cross_entropy(z, t))
    for targets in ([0, 1, 2, 0], [2, 2, 2, 2], [1, 0, 1, 0]):
        t = mt.tensor(targets)
        assert np.isclose(loss(logits, t).item(), F.cross_entropy(logits, t).item())


def test_an_index_put_with_a_tensor_index_reads_the_index_it_is_given() -> None:
    def f(x, i):
        y = x.clone()
        y[i] = 0.0
        return y

    compiled = mt.compile(f)
    assert compiled(mt.ones(4), mt.tensor([0])).tolist() == [0.0, 1.0, 1.0, 1.0]
    assert compiled(mt.ones(4), mt.tensor([3])).tolist() == [1.0, 1.0, 1.0, 0.0]


def test_gradients_through_a_tensor_index_still_add_up() -> None:
    w = mt.randn(5, 3, requires_grad=True)
    w[mt.tensor([0, 2, 2])].sum().backward()
    assert w.grad.sum(1).tolist() == [3.0, 0.0, 6.0, 0.0, 0.0]


# --- compile guards what its graph reads (issue 19 item 2) ---------------------------------
SCALE = 2.0
OFFSET = mt.ones(2)


def test_compile_recompiles_when_a_global_number_or_tensor_is_rebound() -> None:
    global SCALE, OFFSET
    scaled = mt.compile(lambda x: x * SCALE + OFFSET)
    try:
        assert scaled(mt.ones(2)).tolist() == [3.0, 3.0]
        SCALE = 3.0
        assert scaled(mt.ones(2)).tolist() == [4.0, 4.0]
        OFFSET = mt.zeros(2)
        assert scaled(mt.ones(2)).tolist() == [3.0, 3.0]
        assert "global 'SCALE' changed: it was 2.0" in scaled.explain()
    finally:
        SCALE, OFFSET = 2.0, mt.ones(2)


def test_compile_recompiles_when_a_closure_cell_changes() -> None:
    k = 1.0

    def times_k(x):
        return x * k

    compiled = mt.compile(times_k)
    assert compiled(mt.ones(2)).tolist() == [1.0, 1.0]
    k = 5.0
    assert compiled(mt.ones(2)).tolist() == [5.0, 5.0]


def test_compile_recompiles_when_a_module_attribute_changes() -> None:
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = 2.0
            self.inner = nn.Identity()
            self.inner.shift = 1.0

        def forward(self, x):
            return self.inner(x) * self.scale + self.inner.shift

    model = Scaled()
    compiled = mt.compile(model)
    assert compiled(mt.ones(2)).tolist() == [3.0, 3.0]
    model.scale = 4.0
    assert compiled(mt.ones(2)).tolist() == [5.0, 5.0]
    model.inner.shift = 0.0
    assert compiled(mt.ones(2)).tolist() == [4.0, 4.0]


def test_keyword_and_default_arguments_are_arguments_of_the_graph() -> None:
    def add(x, y=None):
        return x if y is None else x + y

    compiled = mt.compile(add)
    assert compiled(mt.ones(2)).tolist() == [1.0, 1.0]
    assert compiled(mt.ones(2), y=mt.ones(2)).tolist() == [2.0, 2.0]
    assert compiled(mt.ones(2), mt.ones(2) * 3).tolist() == [4.0, 4.0]
    both = mt.compile(lambda x, y: x + y)
    assert both(mt.ones(2), mt.ones(2)).tolist() == [2.0, 2.0]
    assert both(mt.ones(2), y=mt.ones(2) * 2).tolist() == [3.0, 3.0]


# --- script: one type per variable, globals read when called (issue 19 item 3) ------------
FACTOR = 2.0


def _tensor_or_int(x, flag: bool):
    if flag:
        y = x * 2
    else:
        y = 3
    return y


def _times_factor(x):
    return x * FACTOR


def test_script_refuses_a_variable_with_two_types_naming_both_lines() -> None:
    import inspect

    import pytest

    first = inspect.getsourcelines(_tensor_or_int)[1]
    with pytest.raises(jit.ScriptError) as caught:
        jit.script(_tensor_or_int)
    message = str(caught.value)
    assert "Type mismatch: y is set to type Tensor in the true branch" in message
    assert f"(line {first + 2})" in message and f"(line {first + 4})" in message


def test_a_scripted_function_reads_a_rebound_global_when_called() -> None:
    global FACTOR
    scripted = jit.script(_times_factor)
    try:
        assert scripted(mt.ones(1)).tolist() == [2.0]
        FACTOR = 5.0
        assert scripted(mt.ones(1)).tolist() == [5.0]
    finally:
        FACTOR = 2.0


def _variadic(x, *rest):
    return x


def test_script_names_star_args_instead_of_miscounting_arguments() -> None:
    import pytest

    with pytest.raises(jit.ScriptError, match=r"_variadic takes \*rest: TorchScript compiles"):
        jit.script(_variadic)


# --- a scripted submodule inside a trace keeps its control flow (issue 25 item 3) ---------
class _ScriptedGate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x + 3
        return y


class _HoldsAGate(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.gate = jit.script(_ScriptedGate())

    def forward(self, x):
        return self.gate(self.fc(x)) * 2


def test_a_trace_records_a_scripted_submodules_if_not_the_branch_it_took() -> None:
    # catches: the branch taken at trace time baked in (a negative input took the other)
    model = _HoldsAGate()
    traced = jit.trace(model, mt.ones(2) * 10)
    assert traced.graph.op_counts()["If"] == 1
    for x in (mt.ones(2) * 10, -mt.ones(2) * 10):
        np.testing.assert_allclose(traced(x).detach().numpy(), model(x).detach().numpy())
    compiled = mt.compile(model)  # compile traces too: the same If in its graph
    for x in (-mt.ones(2) * 10, mt.ones(2) * 10):
        np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy())


def test_a_trace_that_read_input_sizes_runs_other_sizes_as_eager_does() -> None:
    # catches: x.view(x.shape[0], -1) traced at batch 2 giving shape (2, 18) for a batch of
    # 4 (PyTorch's trace records sizes as ops; here the function is traced at the new size)
    def flatten(x):
        return x.view(x.shape[0], -1) / x.shape[0]

    traced = jit.trace(flatten, mt.ones(2, 3, 3))
    with pytest.warns(jit.TracerWarning, match="read input sizes as Python numbers"):
        got = traced(mt.ones(4, 3, 3))
    assert got.shape == (4, 9) and got.tolist() == flatten(mt.ones(4, 3, 3)).tolist()
    # tracing again at a new size is that call: BatchNorm's statistics (its batch mean
    # divides by the size) are updated once per call, as in eager mode
    mt.manual_seed(0)
    xs = [mt.randn(b, 3) for b in (4, 6, 6, 8)]
    traced_bn, eager_bn = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    bn = jit.trace(traced_bn, xs[0])
    eager_bn(xs[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        for x in xs[1:]:
            np.testing.assert_allclose(bn(x).detach().numpy(), eager_bn(x).detach().numpy())
    np.testing.assert_allclose(traced_bn.running_mean.numpy(), eager_bn.running_mean.numpy())
