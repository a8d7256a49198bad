"""``compile`` never reuses a stale graph (issue 19 item 2): what the code reads through
helpers, methods, submodules, containers, class attributes and hooks is guarded; the layout,
autocast and grad modes are guarded; what a graph can't replay (Python side effects, grad
mode switched inside, a re-seeded generator, results that are no tensors) runs eagerly
and ``explain()`` says why. And torch.compile's options are accepted or refused at once."""

from __future__ import annotations

import warnings

import pytest

import minitorch as mt
from minitorch import nn
from minitorch.jit import read_guards

SCALE = 2.0
LIST = [1.0, 2.0]
SETTINGS = {"nested": {"shift": 1.0}}
TENSORS = [mt.ones(2)]
CACHE: list = []


class Config:
    def __init__(self) -> None:
        self.scale = 2.0


CONFIG = Config()


def _helper(x):
    return x * SCALE


def _calls_helper(x):
    return _helper(x) + 1


def _calls_a_caller(x):
    return _calls_helper(x) * 2


def _reads_list(x):
    return x * LIST[0] + len(LIST)


def _reads_nested(x):
    return x * SETTINGS["nested"]["shift"]


def _reads_tensor_list(x):
    return x + TENSORS[0]


def _reads_config(x):
    return x * CONFIG.scale


def _appends(x):
    CACHE.append(1)
    return x * len(CACHE)


def _calls(compiled, *make_args, n=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [compiled(*make_args).tolist() for _ in range(n)]


def _after(fn, change, restore, *args):
    """The compiled and the eager answer after ``change()`` (``restore()`` undoes it)."""
    compiled = mt.compile(fn)
    compiled(*args)
    change()
    try:
        return compiled(*args).tolist(), fn(*args).tolist(), compiled
    finally:
        restore()


# catches: globals of the helper functions a compiled function calls, and the contents of
# containers and objects in globals, baked in at the first call (a stale graph)
@pytest.mark.parametrize(
    "fn, change, restore",
    [
        (_calls_helper, lambda: globals().update(SCALE=5.0), lambda: globals().update(SCALE=2.0)),
        (_calls_a_caller, lambda: globals().update(SCALE=5.0), lambda: globals().update(SCALE=2.0)),
        (_reads_list, lambda: LIST.__setitem__(0, 4.0), lambda: LIST.__setitem__(0, 1.0)),
        (_reads_list, lambda: LIST.append(3.0), lambda: LIST.pop()),
        (
            _reads_nested,
            lambda: SETTINGS["nested"].update(shift=3.0),
            lambda: SETTINGS["nested"].update(shift=1.0),
        ),
        (
            _reads_tensor_list,
            lambda: TENSORS.__setitem__(0, mt.zeros(2)),
            lambda: TENSORS.__setitem__(0, mt.ones(2)),
        ),
        (
            _reads_config,
            lambda: setattr(CONFIG, "scale", 7.0),
            lambda: setattr(CONFIG, "scale", 2.0),
        ),
    ],
    ids=["helper", "helper-of-helper", "list-item", "list-append", "nested-dict", "tensor-list",
         "object-attribute"],
)  # fmt: skip
def test_what_the_code_reads_through_helpers_and_containers_is_guarded(fn, change, restore):
    compiled, eager, cf = _after(fn, change, restore, mt.ones(2))
    assert compiled == eager
    assert len(cf.entries) == 2 and "changed: it was" in cf.recompile_reasons[-1]


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x) * SCALE


class _Outer(nn.Module):
    scale = 1.0  # a class attribute, read as self.scale

    def __init__(self) -> None:
        super().__init__()
        self.block = _Block()
        self._shift = 0.0  # a private attribute of the model's own class
        self.sizes = [1.0]

    def forward(self, x):
        return self.twice(self.block(x)) * self.scale + self._shift + self.sizes[0]

    def twice(self, x):
        return x * 2 * SCALE


# catches: a submodule's forward or a method reading a global, a class attribute, a private
# attribute or a list attribute changed after compiling, reused from the first trace
@pytest.mark.parametrize(
    "change, restore",
    [
        (lambda m: globals().update(SCALE=3.0), lambda m: globals().update(SCALE=2.0)),
        (lambda m: setattr(_Outer, "scale", 4.0), lambda m: setattr(_Outer, "scale", 1.0)),
        (lambda m: setattr(m, "_shift", 5.0), lambda m: None),
        (lambda m: m.sizes.__setitem__(0, 6.0), lambda m: None),
    ],
    ids=["global-in-submodule-and-method", "class-attribute", "private-attribute",
         "list-attribute"],
)  # fmt: skip
def test_what_methods_and_submodules_read_is_guarded(change, restore):
    model = _Outer()
    compiled, eager, _ = _after(model, lambda: change(model), lambda: restore(model), mt.ones(1, 2))
    assert compiled == eager


# catches: a submodule without parameters swapped after compiling (model.act = nn.Tanh())
# still running the old one: no parameter's shape changed
def test_a_replaced_submodule_recompiles():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    compiled = mt.compile(model)
    x = -mt.ones(1, 2) * 5
    compiled(x)
    setattr(model, "1", nn.Tanh())
    assert compiled(x).tolist() == model(x).tolist()
    assert "submodule self.1 was replaced" in compiled.recompile_reasons[-1]


# catches: a forward (pre-)hook registered after compiling never running
def test_hooks_added_after_compiling_run():
    lin = nn.Linear(2, 2)
    compiled = mt.compile(lin)
    x = mt.ones(1, 2)
    compiled(x)
    handle = lin.register_forward_hook(lambda module, inputs, out: out * 0)
    assert compiled(x).tolist() == [[0.0, 0.0]]
    handle.remove()
    lin.register_forward_pre_hook(lambda module, inputs: (inputs[0] * 0,))
    assert compiled(x).tolist() == lin(mt.zeros(1, 2)).tolist()


def _branchy_on_layout(x):
    return x * 2 if x.is_contiguous() else x * 3


# catches: strides not guarded (x.is_contiguous() baked), a graph traced inside an autocast
# region (its casts recorded) reused outside one, and a same list argument changed in place
def test_layout_autocast_and_argument_contents_are_guarded():
    compiled = mt.compile(_branchy_on_layout)
    x = mt.arange(9.0).reshape(3, 3)
    assert compiled(x).tolist() == _branchy_on_layout(x).tolist()
    assert compiled(x.t()).tolist() == _branchy_on_layout(x.t()).tolist()
    assert "stride mismatch" in compiled.recompile_reasons[-1]

    lin = nn.Linear(2, 2)
    in_region = mt.compile(lambda x: lin(x))
    with mt.autocast("cpu"):
        assert in_region(mt.ones(1, 2)).dtype is mt.bfloat16
    assert in_region(mt.ones(1, 2)).dtype is mt.float32
    assert "autocast state mismatch" in in_region.recompile_reasons[-1]

    scales = [2.0]
    by_list = mt.compile(lambda x, ks: x * ks[0])
    by_list(mt.ones(1), scales)
    scales[0] = 7.0
    assert by_list(mt.ones(1), scales).tolist() == [7.0]


class _Counter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls


def _keeps_the_last(x):
    global _LAST  # (assigned each call: a compiled graph would leave it at the first)
    _LAST = x * 2
    return _LAST + 1


def _no_grad_inside(x):
    with mt.no_grad():
        y = x * 2
    return y


def _reseeds(x):
    mt.manual_seed(0)
    return x + mt.rand(3)


# catches: a graph replayed where the Python around its ops changed state (a counter on the
# module, a list appended to), switched autograd off, or re-seeded the generator: each call
# must do what eager does, so these run eagerly and explain() says why
@pytest.mark.parametrize(
    "make, args, why",
    [
        (_Counter, (mt.ones(1),), "self.calls changed"),
        (lambda: _appends, (mt.ones(1),), "global 'CACHE' changed"),
        (lambda: _keeps_the_last, (mt.ones(1),), "assigns the global '_LAST'"),
        (lambda: _no_grad_inside, (mt.ones(1, requires_grad=True),), "switches autograd"),
        (lambda: _reseeds, (mt.zeros(3),), "re-seeds the random generator"),
        (lambda: lambda x: {"y": x}, (mt.ones(1),), "returns a dict"),
    ],
    ids=[
        "module-counter",
        "global-list",
        "global-statement",
        "no_grad",
        "manual_seed",
        "dict-result",
    ],
)
def test_what_a_graph_cannot_replay_runs_eagerly_and_says_why(make, args, why):
    CACHE.clear()
    fn, reference = make(), make()
    compiled = mt.compile(fn)
    with pytest.warns(RuntimeWarning, match=why):
        got = [compiled(*args) for _ in range(3)]
    CACHE.clear()
    expected = [reference(*args) for _ in range(3)]
    for g, e in zip(got, expected, strict=True):
        g, e = (g["y"], e["y"]) if isinstance(g, dict) else (g, e)
        assert g.tolist() == e.tolist() and g.requires_grad == e.requires_grad
    assert compiled.eager_reason is not None and why in compiled.explain()


# catches: a huge table fingerprinted on every call (or silently not guarded): a read too
# large to guard runs eagerly, while an attribute no code reads does not stop compiling
def test_state_too_large_to_guard_runs_eagerly_unless_nothing_reads_it():
    table = list(range(read_guards.MAX_ITEMS + 1))
    compiled = mt.compile(lambda x: x * len(table))
    with pytest.warns(RuntimeWarning, match="too many to check on every call"):
        assert compiled(mt.ones(1)).tolist() == [float(len(table))]

    model = nn.Linear(1, 1)
    model.vocabulary = {i: str(i) for i in range(read_guards.MAX_ITEMS + 1)}
    fast = mt.compile(model)
    fast(mt.ones(1, 1))
    assert fast.eager_reason is None and len(fast.entries) == 1


# --- torch.compile's options (issue 25) ------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"backend": "inductor"},
        {"backend": "eager"},
        {"backend": "aot_eager"},
        {"mode": "reduce-overhead"},
        {"mode": "max-autotune"},
        {"dynamic": True},
        {"dynamic": False},
        {"recompile_limit": 2},
        {"options": {}},
    ],
)
def test_pytorchs_compile_options_are_accepted(options):
    compiled = mt.compile(lambda x: x * 2 + 1, **options)
    assert compiled(mt.ones(2)).tolist() == [3.0, 3.0]
    assert mt.compile(lambda x: x, disable=True)(mt.ones(1)).tolist() == [1.0]


# catches: an unknown backend or mode, options given with a mode, or dynamic="x" accepted
# (or failing only at the first call)
@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"backend": "foo"}, ValueError, "backend must be one of 'inductor', 'eager', 'aot_eager'"),
        ({"backend": lambda gm, inputs: gm}, ValueError, "torch.fx GraphModule"),
        ({"mode": "fast"}, RuntimeError, "Unrecognized mode='fast', should be one of"),
        ({"mode": "default", "options": {}}, RuntimeError, "Either mode or options"),
        ({"options": {"triton.cudagraphs": True}}, RuntimeError, "triton.cudagraphs"),
        ({"options": "x"}, TypeError, "options must be a dict"),
        ({"dynamic": "x"}, TypeError, "dynamic must be a bool"),
        ({"disable": 1}, TypeError, "disable must be a bool"),
        ({"recompile_limit": 0}, ValueError, "recompile_limit must be >= 1"),
    ],
)  # fmt: skip
def test_bad_compile_options_fail_at_compile(options, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        mt.compile(lambda x: x, **options)


def test_the_options_are_torch_compiles():
    torch = pytest.importorskip("torch")
    import inspect

    ours = inspect.signature(mt.compile).parameters
    theirs = inspect.signature(torch.compile).parameters
    own = {"cache_size_limit", "optimize"}  # minitorch's (cache_size_limit: dynamo's config)
    assert set(ours) - own <= set(theirs)
    for name in ("fullgraph", "dynamic", "mode", "options", "disable", "recompile_limit"):
        assert ours[name].default == theirs[name].default, name
