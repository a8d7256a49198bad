"""``jit.script``: early returns (TorchScript's transform) or a refusal naming the line,
calls bound as TorchScript binds them, methods and scripted submodules compiled in, and a
scripted module that reads its globals, containers and ``training`` flag when called
(issue 19 item 3, issue 25 item 3)."""

from __future__ import annotations

import inspect
import io

import pytest

import minitorch as mt
from minitorch import jit, nn

LIST = [1.0, 2.0]
SCALE = 2.0


def clip_or_shift(x):
    if x.sum() > 0:  # the lesson's own example
        return x.tanh()
    return x - 1


def _elif_chain(x):
    s = x.sum()
    if s > 10:
        return x * 3
    elif s > 0:
        return x * 2
    else:
        return x - 1


def _nested(x):
    if x.sum() > 0:
        if x.max() > 2:
            return x * 10
        y = x + 1
    else:
        y = x - 1
    return y * 2


def _pair(x):
    if x.sum() > 0:
        return x, x * 2
    return x * 3, x


def _raises_or_returns(x):
    if x.sum() > 0:
        return x * 2
    raise ValueError("negative input")


# catches: an early return refused (the lesson's clip_or_shift could not be scripted), or
# compiled as if the code after the if always ran
@pytest.mark.parametrize("fn", [clip_or_shift, _elif_chain, _nested, _pair])
@pytest.mark.parametrize("scale", [-1.0, 1.0, 5.0])
def test_early_returns_give_eagers_answer(fn, scale):
    x = mt.ones(3) * scale
    got, want = jit.script(fn)(x), fn(x)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_a_branch_that_raises_ends_its_path():
    scripted = jit.script(_raises_or_returns)
    assert scripted(mt.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="negative input"):
        scripted(-mt.ones(2))


def _returns_in_loop(x):
    for i in range(3):
        if i == 1:
            return x * i
    return x


def _returns_two_types(x, flag: bool):
    if flag:
        return x
    return 3


# catches: a return in a loop compiled wrongly (or refused without the line), two return
# types let through (TorchScript refuses them at compile time, naming both)
def test_what_is_not_supported_is_refused_at_compile_time_naming_the_line():
    first = inspect.getsourcelines(_returns_in_loop)[1]
    with pytest.raises(jit.ScriptError, match="return inside a loop is not supported") as err:
        jit.script(_returns_in_loop)
    assert f"line {first + 3}" in str(err.value)
    first = inspect.getsourcelines(_returns_two_types)[1]
    with pytest.raises(jit.ScriptError, match=f"Previous return statement \\(line {first + 2}\\)"):
        jit.script(_returns_two_types)


def _scaled(x, n: int = 2):
    return x * n


# catches: keyword arguments and defaults refused, an int argument given a str or a tensor
# argument given an int failing inside the graph with an internal message
def test_calls_are_bound_and_checked_as_torchscript_does():
    scripted = jit.script(_scaled)
    assert scripted(mt.ones(1)).tolist() == [2.0]
    assert scripted(mt.ones(1), n=3).tolist() == [3.0]
    assert scripted(x=mt.ones(1)).tolist() == [2.0]
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'm'"):
        scripted(mt.ones(1), m=3)
    with pytest.raises(TypeError, match="missing value for argument 'x'.* 0 were given"):
        scripted()
    with pytest.raises(TypeError, match="Expected a value of type 'int' for argument 'n'"):
        scripted(mt.ones(1), "a")
    traced = jit.trace(lambda x: x * 2, mt.ones(1))
    with pytest.raises(TypeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        traced(3)
    buffer = io.BytesIO()
    jit.save(scripted, buffer)
    buffer.seek(0)
    assert jit.load(buffer)(mt.ones(1)).tolist() == [2.0]  # the default survives a file


class _Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x + 3
        return y


class _Affine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return -x


class _Holder(nn.Module):
    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner
        self.k = 3.0

    def forward(self, x):
        return self.helper(self.inner(x))

    def helper(self, x):
        return x * self.k * SCALE


# catches: scripting a module whose submodule is already scripted with an if/else crashing
# (GraphLintError: block0 of node If returns %x, which is not defined), a scripted
# submodule with parameters refused, self.method(x) refused
@pytest.mark.parametrize("inner", [_Gate, _Affine])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_scripted_submodule_keeps_its_control_flow_and_parameters(inner, sign):
    model = _Holder(jit.script(inner()))
    scripted = jit.script(model)
    x = mt.ones(2) * sign
    assert scripted(x).tolist() == model(x).tolist()
    assert [n for n, _ in scripted.named_parameters()] == [n for n, _ in model.named_parameters()]


class _ModeDependent(nn.Module):
    def forward(self, x):
        if self.training:
            return x * 2
        return x * 3


def _reads_list(x):
    return x * LIST[0] + LIST[1]


def _reads_through_a_helper(x):
    return _times_scale(x) + 1


def _times_scale(x):
    return x * SCALE


# catches: scripted.eval() keeping the training branch, a global list changed in place or a
# helper's global rebound after scripting giving the value read at script time
def test_a_scripted_module_reads_its_flags_and_globals_when_called():
    scripted = jit.script(_ModeDependent())
    assert scripted(mt.ones(1)).tolist() == [2.0]
    scripted.eval()
    assert scripted(mt.ones(1)).tolist() == [3.0]
    scripted.train()
    assert scripted(mt.ones(1)).tolist() == [2.0]
    global SCALE
    by_list, by_helper = jit.script(_reads_list), jit.script(_reads_through_a_helper)
    try:
        LIST[0] = 10.0
        SCALE = 5.0
        assert by_list(mt.ones(1)).tolist() == [12.0]
        assert by_helper(mt.ones(1)).tolist() == [6.0]
    finally:
        LIST[0], SCALE = 1.0, 2.0


class _Exported(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = 3.0

    def forward(self, x):
        return x + 1

    @jit.export
    def triple(self, x):
        return x * self.k


# catches: jit.export missing, exported methods lost on save/load
def test_exported_methods_are_compiled_and_saved():
    scripted = jit.script(_Exported())
    assert scripted.triple(mt.ones(2)).tolist() == [3.0, 3.0]
    assert set(scripted.methods) == {"triple"}
    buffer = io.BytesIO()
    jit.save(scripted, buffer)
    buffer.seek(0)
    loaded = jit.load(buffer)
    assert loaded.triple(mt.ones(2)).tolist() == [3.0, 3.0] and loaded(mt.ones(1)).tolist() == [2.0]
    with pytest.raises(TypeError, match="jit.export: expected a function"):
        jit.export(3)


def _maybe_add(x, y=None):
    if y is None:
        return x
    return x + y


# catches: `y is None` decided at compile time (a run-time value is never None), so a call
# without y ran x + None inside the graph
def test_an_argument_that_defaults_to_none_is_tested_when_called():
    scripted = jit.script(_maybe_add)
    assert scripted(mt.ones(1)).tolist() == [1.0]
    assert scripted(mt.ones(1), mt.ones(1) * 2).tolist() == [3.0]
    assert scripted(mt.ones(1), y=mt.ones(1) * 4).tolist() == [5.0]


def test_a_scripted_or_traced_function_is_a_script_function():
    # catches: jit.script(f) of a function with an early return giving a ScriptModule, where
    # PyTorch gives a torch.jit.ScriptFunction (and a Module stays a ScriptModule)
    scripted = jit.script(clip_or_shift)
    traced = jit.trace(lambda x: x * 2, (mt.ones(2),))
    assert type(scripted) is jit.ScriptFunction and type(traced) is jit.ScriptFunction
    assert type(jit.script(mt.nn.Linear(2, 2))) is jit.ScriptModule
    assert (
        scripted(mt.tensor([3.0, -1.0])).tolist() == clip_or_shift(mt.tensor([3.0, -1.0])).tolist()
    )
