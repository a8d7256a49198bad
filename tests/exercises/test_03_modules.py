"""Graded tests for chapter 03 (modules, optimizers, data, the training loop).

The *probes* run the learner's piece inside the real framework (real modules, autograd,
optimizers and data) and return what came out as plain data: names, numbers, arrays.
The *judges* (``@exercise``) rebuild the same setting here in the grader with
minitorch's own version, which matches PyTorch, and compare. While the learner's code
runs, a call from it to the package's version of the same piece fails the exercise
(see :mod:`minitorch.course.grading.delegation`).
"""

import contextlib
import math
import operator

import numpy as np

import minitorch
import minitorch.nn.functional as F
from minitorch import nn, optim
from minitorch.course.grading import exercise, forbid, forbidding, probe
from minitorch.course.grading.delegation import refusing_ops
from minitorch.course.grading.judging import checked_array
from minitorch.data import Dataset, load_digits


# --- helpers -------------------------------------------------------------------------------
def _answer(nb):
    """The notebook's definitions as the delegation watch scans them (a class imported and
    left unused costs nothing: the watch scans the names the probes look up)."""
    return nb


def _blocked(nb, what, *targets):
    """While the learner's code runs, a call from it to the package's own ``what`` (any of
    ``targets``, ``(owner, attribute)`` pairs) fails the probe with "your answer used
    minitorch's own ...: write it yourself" (see :mod:`minitorch.course.grading.delegation`)."""
    return forbidding(forbid(*targets), _answer(nb))


_ops_refused = refusing_ops  # (the grading package's: see its docstring)


def _values(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


def _mlp(seed, sizes=(6, 8, 3)):
    minitorch.manual_seed(seed)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def _set_grads(params, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    for p in params:
        p.grad = minitorch.from_numpy((rng.standard_normal(p.shape) * scale).astype(np.float32))


def grader_warm_up():
    """The grader calls this while the notebook loads: the judges need the digits."""
    load_digits("test")


def _plain(value):
    """A tensor as an array, a number as a float; anything else as it is."""
    if isinstance(value, minitorch.Tensor):
        return _values(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def _close_arrays(got, expected, what, rtol=1e-5, atol=1e-6):
    got = np.asarray(got)
    assert got.dtype.kind in "fiub" and got.shape == np.shape(expected), (
        f"{what}: got {got.shape if got.dtype.kind in 'fiub' else got!r}, expected an array "
        f"of shape {np.shape(expected)}"
    )
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        raise AssertionError(f"{what} differs by up to {np.nanmax(np.abs(got - expected)):.3g}")


# --- 03.1 named_parameters -----------------------------------------------------------------
_MODULE_WALK = (
    (nn.Module, "named_parameters"),
    (nn.Module, "parameters"),
    (nn.Module, "named_modules"),
    (nn.Module, "modules"),
    (nn.Module, "_named_members"),
    (nn.Module, "state_dict"),
)


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.proj = nn.Linear(4, 4, bias=False)  # registers bias as None
        self.scale = nn.Parameter(minitorch.ones(1))
        self.register_buffer("steps", minitorch.zeros(1))  # a buffer, not a parameter


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(minitorch.ones(4))
        self.blocks = nn.ModuleList([_Block(), _Block()])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.add_module("unused_slot", None)
        self.bn = nn.BatchNorm1d(4)


def _tied():
    tied = nn.Module()
    tied.embed = nn.Embedding(10, 4)
    tied.decode = nn.Linear(4, 10)
    tied.decode.weight = tied.embed.weight  # tied weights: one Parameter in two places
    return tied


def _reused():
    shared = nn.Linear(3, 3)
    return nn.Sequential(shared, nn.Tanh(), shared)


def _frozen():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model[0].requires_grad_(False)  # a frozen layer: its parameters are still parameters
    model[2].bias.requires_grad_(False)
    return model


MODELS = {
    "frozen": _frozen,
    "sequential": lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)),
    "nested": _Net,
    "tied": _tied,
    "reused": _reused,
}


def _slots(model):
    """Every module's parameter and submodule slots (None ones included), in order."""
    return [(list(m._parameters), list(m._modules)) for m in model.modules()]


@probe
def walk(nb, model_name, prefix, times=1):
    """The names the learner's walk yields (the last of ``times`` walks of one model), which
    of the model's parameters each is (its position in the model's own walk, -1 for a
    copy), and whether the model's slots are as they were."""
    model = MODELS[model_name]()
    params = [p for _, p in model.named_parameters()]
    slots = _slots(model)
    with _blocked(nb, "Module.named_parameters (or another walk of the tree)", *_MODULE_WALK):
        for _ in range(times):
            found = list(nb.named_parameters(model, prefix))
    names, which = [], []
    for item in found:
        name, p = item
        names.append(name)
        which.append(next((i for i, q in enumerate(params) if q is p), -1))
    return names, which, _slots(model) == slots


def _same_walk(run, model_name, prefix="", what="the model", times=1):
    got_names, which, slots_kept = run(walk, model_name, prefix, times)
    # catches: None slots deleted from the caller's modules while walking them (a model
    # whose bias=False layer loses its 'bias' slot, or a None submodule its place)
    assert slots_kept, (
        f"named_parameters({what}) changed the model: its modules' parameter or submodule "
        "slots differ afterwards (skip None entries, never delete them)"
    )
    expected_names = [name for name, _ in MODELS[model_name]().named_parameters(prefix)]
    if got_names != expected_names:
        pairs = zip(got_names, expected_names, strict=False)
        k = next(
            (i for i, (a, b) in enumerate(pairs) if a != b),
            min(len(got_names), len(expected_names)),
        )
        mine = repr(got_names[k]) if k < len(got_names) else "nothing more"
        theirs = repr(expected_names[k]) if k < len(expected_names) else "nothing more"
        raise AssertionError(
            f"named_parameters({what}, prefix={prefix!r}) yielded {len(got_names)} names, "
            f"expected {len(expected_names)}; name #{k + 1} is {mine}, expected {theirs} "
            f"(the expected names: {expected_names})"
        )
    for i, (name, w) in enumerate(zip(got_names, which, strict=True)):
        assert w == i, (
            f"named_parameters({what}) yielded a copy for {name!r}; yield the Parameter object "
            "itself, so that an optimizer can update it in place"
        )


# catches: a walk of the direct children only; indices of Sequential not used as names
@exercise("03.1")
def test_sequential_names(run):
    _same_walk(run, "sequential", what="Sequential(Linear, ReLU, Linear)")


# catches: breadth-first order; None submodules or parameters not skipped; buffers yielded
@exercise("03.1")
def test_nested_modules_in_depth_first_order(run):
    _same_walk(run, "nested", what="a nested model")


# catches: the prefix ignored, or joined without a dot
@exercise("03.1")
def test_prefix_is_prepended(run):
    _same_walk(run, "nested", prefix="model", what="a nested model")


# catches: a tied or reused parameter yielded twice (an optimizer would step it twice)
@exercise("03.1")
def test_shared_parameters_are_yielded_once(run):
    _same_walk(run, "tied", what="a model with tied weights")
    _same_walk(run, "reused", what="Sequential(lin, Tanh, lin)")


# catches: a seen-set kept between calls (a default argument seen=set(), or a global): the
# second walk of one model yields nothing
@exercise("03.1")
def test_the_same_model_walked_twice(run):
    _same_walk(run, "sequential", what="Sequential(Linear, ReLU, Linear), walked twice", times=2)
    _same_walk(run, "nested", what="a nested model, walked a second time", times=2)


# catches: frozen (requires_grad=False) parameters skipped: they are still parameters
@exercise("03.1")
def test_frozen_parameters_are_yielded(run):
    _same_walk(run, "frozen", what="a model with a frozen layer")


# --- 03.2 Linear ---------------------------------------------------------------------------
# catches: the init handed to the package's own Linear init (nn.init.default_layer_init_)
_LINEAR = (nn.Linear, (F, "linear"), (nn.init, "default_layer_init_"))
_LINEAR_OP = "minitorch's own linear op (F.Linear)"


def _linear(nb, *args, **kwargs):
    with _blocked(nb, "nn.Linear or F.linear", *_LINEAR):
        return nb.Linear(*args, **kwargs)


def _forward(nb, layer, x):
    # catches: F.Linear.apply (the op behind F.linear) called directly
    with _blocked(nb, "nn.Linear or F.linear", *_LINEAR), _ops_refused(_LINEAR_OP, F.Linear):
        return layer(x)


@probe
def linear_registration(nb):
    out = {}
    for bias in (True, False):
        layer = _linear(nb, 5, 3, bias=bias)
        out[bias] = {
            "module": isinstance(layer, nn.Module),
            "names": [name for name, _ in layer.named_parameters()],
            "shapes": [tuple(p.shape) for _, p in layer.named_parameters()],
            "bias_is_none": getattr(layer, "bias", 0) is None,
            "slots": list(getattr(layer, "_parameters", {})),
            "dtypes": [str(p.dtype) for _, p in layer.named_parameters()],
        }
    return out


# catches: weight of shape (in, out); plain tensors instead of Parameters; bias=False ignored
@exercise("03.2")
def test_parameters_are_registered(run):
    got = run(linear_registration)
    assert got[True]["module"], "Linear should subclass minitorch.nn.Module"
    names = got[True]["names"]
    assert names == ["weight", "bias"], (
        f"Linear(5, 3) registered the parameters {names}, expected ['weight', 'bias'] "
        "(assign nn.Parameter objects to self.weight and self.bias)"
    )
    shapes = tuple(got[True]["shapes"])
    assert shapes == ((3, 5), (3,)), (
        f"Linear(5, 3) has weight and bias shapes {shapes}, expected ((3, 5), (3,)) "
        "(the weight is (out_features, in_features))"
    )
    names = got[False]["names"]
    assert names == ["weight"] and got[False]["bias_is_none"], (
        f"Linear(5, 3, bias=False) registered {names}; expected only 'weight', and self.bias None"
    )
    # catches: bias=False handled with a plain attribute instead of an empty slot
    slots = got[False]["slots"]
    assert slots == ["weight", "bias"], (
        f"Linear(5, 3, bias=False) has the parameter slots {slots}, expected ['weight', 'bias'] "
        "(call self.register_parameter('bias', None))"
    )
    # catches: parameters made in float64 (minitorch's default dtype is float32)
    for bias in (True, False):
        dtypes = got[bias]["dtypes"]
        assert all(d == str(minitorch.float32) for d in dtypes), (
            f"Linear(5, 3, bias={bias}) has parameters of dtypes {dtypes}, expected float32 "
            "(minitorch.empty's default)"
        )


@probe
def linear_outputs(nb, seed):
    minitorch.manual_seed(seed)
    out = []
    for bias in (True, False):
        layer = _linear(nb, 6, 4, bias=bias)
        for shape in ((5, 6), (2, 3, 6)):
            x = minitorch.randn(*shape)
            got = _forward(nb, layer, x)
            out.append(
                {
                    "x": _values(x),
                    "weight": _values(layer.weight),
                    "bias": None if layer.bias is None else _values(layer.bias),
                    "out": _values(got) if isinstance(got, minitorch.Tensor) else None,
                }
            )
    return out


# catches: x @ W instead of x @ W.T; the bias left out; batch dims not supported
@exercise("03.2")
def test_forward_matches_f_linear(run):
    cases = [(bias, shape) for bias in (True, False) for shape in ((5, 6), (2, 3, 6))]
    for (bias, shape), got in zip(cases, run(linear_outputs, 2), strict=True):
        assert got["out"] is not None, f"Linear(6, 4, bias={bias}) did not return a tensor"
        x = minitorch.tensor(got["x"])
        b = None if got["bias"] is None else minitorch.tensor(got["bias"])
        expected = _values(F.linear(x, minitorch.tensor(got["weight"]), b))
        out = checked_array(got["out"], expected, f"Linear(6, 4, bias={bias}) on input {shape}")
        assert np.allclose(out, expected, atol=1e-5), (
            f"Linear(6, 4, bias={bias}) on input {shape} differs from x @ W.T + b"
        )


@probe
def linear_init(nb, seeds, fan_in, fan_out):
    out = []
    for seed in seeds:
        minitorch.manual_seed(seed)
        layer = _linear(nb, fan_in, fan_out)
        out.append((_values(layer.weight), _values(layer.bias)))
    return out


# catches: randn init; bounds of 1/fan_out or 1/fan_in; biases started at zero
@exercise("03.2")
def test_init_is_uniform_within_one_over_sqrt_fan_in(run):
    fan_in = 64
    ((w, b),) = run(linear_init, [3], fan_in, 512)
    bound = 1 / math.sqrt(fan_in)
    for name, values in (("weight", w), ("bias", b)):
        assert np.abs(values).max() <= bound + 1e-6, (
            f"Linear({fan_in}, 512).{name} has values up to {np.abs(values).max():.4f}, outside "
            f"U(-1/sqrt(fan_in), 1/sqrt(fan_in)) = U(-{bound:.4f}, {bound:.4f})"
        )
    expected_std = bound / math.sqrt(3)  # the std of U(-b, b)
    assert abs(w.std() - expected_std) < 0.05 * expected_std and abs(w.mean()) < 0.01 * bound, (
        f"Linear({fan_in}, 512).weight has mean {w.mean():.4f} and std {w.std():.4f}; "
        f"U(-{bound:.4f}, {bound:.4f}) has mean 0 and std {expected_std:.4f}"
    )
    assert b.std() > 0.3 * expected_std, (
        f"Linear({fan_in}, 512).bias has std {b.std():.4f}; draw it from "
        f"U(-{bound:.4f}, {bound:.4f}) too (PyTorch does not start biases at 0)"
    )


@probe
def linear_bounds(nb, fan_ins, fan_out):
    minitorch.manual_seed(5)
    return [float(np.abs(_values(_linear(nb, f, fan_out).weight)).max()) for f in fan_ins]


# catches: the bound computed once and kept (on the class, or in a global): a later layer
# with another fan_in gets the first layer's bound
@exercise("03.2")
def test_each_layer_gets_its_own_bound(run):
    fan_ins = [4, 100, 9]
    got = run(linear_bounds, fan_ins, 256)
    for k, (fan_in, top) in enumerate(zip(fan_ins, got, strict=True), start=1):
        bound = 1 / math.sqrt(fan_in)
        assert 0.9 * bound <= top <= bound + 1e-6, (
            f"Linear({fan_in}, 256), layer {k} of Linear(n, 256) for n in {fan_ins} made one "
            f"after another, has weights up to {top:.4f}; they should fill "
            f"U(-{bound:.4f}, {bound:.4f}), with k = 1/sqrt(fan_in) of that layer"
        )


# catches: numpy's global random numbers (manual_seed does not repeat them)
@exercise("03.2")
def test_init_uses_minitorch_random_numbers(run):
    (first, _), (again, _), (other, _) = run(linear_init, [11, 11, 12], 8, 4)
    assert np.array_equal(first, again) and not np.array_equal(first, other), (
        "Linear's weights should come from minitorch's random generator, so that "
        "minitorch.manual_seed repeats them: fill them with minitorch.nn.init functions"
    )


def _regression_data():
    minitorch.manual_seed(4)
    true_w = minitorch.tensor([[2.0, -1.0, 0.5], [0.0, 1.5, -2.0]])
    true_b = minitorch.tensor([0.3, -0.7])
    x = minitorch.randn(64, 3)
    return x, x @ true_w.T + true_b


REGRESSION_STEPS = 60


@probe
def linear_fit(nb):
    x, y = _regression_data()
    layer = _linear(nb, 3, 2)
    opt = optim.SGD(layer.parameters(), lr=0.5)  # (converges in tens of steps on this data)
    for _ in range(REGRESSION_STEPS):
        opt.zero_grad()
        F.mse_loss(_forward(nb, layer, x), y).backward()
        opt.step()
    bias = None if layer.bias is None else _values(layer.bias)
    return _values(layer.weight), bias


# catches: a forward that does not use the registered weight and bias
@exercise("03.2")
def test_trains_a_tiny_regression(run):
    weight, bias = run(linear_fit)
    x, y = _regression_data()
    assert bias is not None, "Linear(3, 2) has no bias"
    # (the probe returns float64 values; linear takes one dtype, as PyTorch's)
    pred = F.linear(
        x, minitorch.tensor(weight, dtype=x.dtype), minitorch.tensor(bias, dtype=x.dtype)
    )
    loss = F.mse_loss(pred, y).item()
    assert loss < 1e-4, (
        f"after {REGRESSION_STEPS} SGD steps fitting y = x @ A.T + b, the loss is {loss:.4g}, "
        "expected < 1e-4: check that forward uses the registered weight and bias"
    )


# --- 03.3 cross-entropy --------------------------------------------------------------------
_CROSS_ENTROPY = (
    (F, "cross_entropy"),
    (F, "nll_loss"),
    (F, "log_softmax"),
    (minitorch.ops, "log_softmax"),
    (minitorch, "log_softmax"),
    (minitorch.Tensor, "log_softmax"),
    (nn.CrossEntropyLoss, "forward"),
    # catches: the pick-and-mean handed to the package's loss modules or their insides
    # (nn.NLLLoss()(log_probs, target), F.CrossEntropy.apply, F._nll_terms)
    (nn.CrossEntropyLoss, "__init__"),
    (nn.NLLLoss, "__init__"),
    (nn.NLLLoss, "forward"),
    (F, "_cross_entropy"),
    (F, "_nll_terms"),
    (F.NllLoss, "forward"),
)


def _cross_entropy(nb, logits, target):
    # errstate: an overflowing attempt fails the test, without numpy warnings on top
    # catches: the LogSoftmax op reached without the forbidden functions (its Function class
    # called directly, or an nn.LogSoftmax module)
    refused = _ops_refused("minitorch's own log_softmax op", minitorch.ops.LogSoftmax)
    before = (_values(logits), target.numpy().copy())
    with _blocked(nb, "cross_entropy/log_softmax", *_CROSS_ENTROPY), np.errstate(all="ignore"):
        with refused:
            loss = nb.cross_entropy(logits, target)
    assert isinstance(loss, minitorch.Tensor) and loss.numel() == 1, (
        f"cross_entropy returned a {type(loss).__name__}; return a 1-element minitorch tensor "
        "(the mean loss), so that loss.backward() works"
    )
    # catches: the max subtracted from the caller's logits in place (logits.sub_ under
    # no_grad): the loss is right, but the caller's logits are not theirs any more
    changed = np.abs(_values(logits) - before[0])
    assert np.array_equal(_values(logits), before[0], equal_nan=True), (
        f"cross_entropy(logits of shape {tuple(logits.shape)}, target) changed the caller's "
        f"logits (by up to {np.nanmax(changed):.4g}); compute shifted = logits - max as a new "
        "tensor, never in place"
    )
    assert np.array_equal(target.numpy(), before[1]), "cross_entropy changed the caller's target"
    return loss


@probe
def losses_of(nb, cases):
    return [_cross_entropy(nb, minitorch.tensor(x), minitorch.tensor(t)).item() for x, t in cases]


def _check_losses(run, cases, whats):
    for (x, t), value, what in zip(cases, run(losses_of, cases), whats, strict=True):
        expected = F.cross_entropy(minitorch.tensor(x), minitorch.tensor(t)).item()
        assert isinstance(value, float) and math.isfinite(value), (
            f"cross_entropy({what}) is {value}; subtract each row's max before exp so nothing "
            "overflows"
        )
        assert math.isclose(value, expected, rel_tol=1e-5, abs_tol=1e-5), (
            f"cross_entropy({what}) = {value:.6g}, expected {expected:.6g} (mean over the batch "
            "of logsumexp(row) - row[target])"
        )


# catches: sum instead of mean; the target's logit not subtracted; the wrong axis
@exercise("03.3")
def test_matches_minitorch_on_random_logits(run):
    cases, whats = [], []
    for n, c in ((1, 3), (8, 10), (64, 5)):
        cases.append(
            (
                (run.rng.standard_normal((n, c)) * 3).astype(np.float32),
                run.rng.integers(0, c, size=n).astype(np.int64),
            )
        )
        whats.append(f"random logits of shape ({n}, {c})")
    _check_losses(run, cases, whats)


# catches: exp of large logits without subtracting the max (overflow to inf or nan)
@exercise("03.3")
def test_extreme_logits_stay_finite(run):
    logits = np.array(
        [[1000.0, 0.0, -1000.0], [-1e4, 1e4, 0.0], [500.0, 500.0, 500.0]], dtype=np.float32
    )
    targets = [np.array(t, dtype=np.int64) for t in ([0, 1, 2], [2, 0, 1])]
    whats = [f"logits of +-1e4, targets {t.tolist()}" for t in targets]
    _check_losses(run, [(logits, t) for t in targets], whats)


@probe
def loss_gradient(nb, data, target):
    mine = minitorch.tensor(data).requires_grad_()
    loss = _cross_entropy(nb, mine, minitorch.tensor(target))
    with np.errstate(all="ignore"):
        loss.backward()
    return None if mine.grad is None else _values(mine.grad)


# catches: a loss computed through .item(), .numpy() or detach (no gradient flows)
@exercise("03.3")
def test_gradient_through_the_engine_matches(run):
    for scale in (1.0, 300.0):
        data = (run.rng.standard_normal((16, 7)) * scale).astype(np.float32)
        target = run.rng.integers(0, 7, size=16).astype(np.int64)
        got = run(loss_gradient, data, target)
        assert got is not None, (
            "cross_entropy(...).backward() gave the logits no gradient: build the loss from "
            "minitorch tensor ops (no .item(), .numpy() or detach on the logits)"
        )
        ref = minitorch.tensor(data).requires_grad_()
        F.cross_entropy(ref, minitorch.tensor(target)).backward()
        expected = _values(ref.grad)
        got = checked_array(got, expected, f"the gradient of cross_entropy (scale {scale:g})")
        assert np.isfinite(got).all(), (
            f"the gradient of cross_entropy for logits of scale {scale:g} is not finite or has "
            "the wrong shape"
        )
        assert np.allclose(got, expected, atol=1e-6), (
            f"the gradient of cross_entropy for logits of scale {scale:g} differs from "
            "(softmax(logits) - onehot(target)) / batch size, by up to "
            f"{np.nanmax(np.abs(got - expected)):.3g}"
        )


# --- 03.4 SGD with momentum ----------------------------------------------------------------
def _trajectory(make_optimizer, seed, steps, guard=contextlib.nullcontext):
    """Train a small MLP on fixed data for ``steps`` steps; the parameters after each step."""
    model = _mlp(seed)
    minitorch.manual_seed(seed + 100)
    x, y = minitorch.randn(16, 6), minitorch.randn(16, 3)
    opt = make_optimizer(model.parameters())
    frozen = model[0].bias
    frozen.requires_grad_(False)  # a parameter without a gradient must be skipped
    history = []
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        with guard():
            opt.step()
        history.append([_values(p) for p in model.parameters()])
    return model, opt, history


_STEP = {"SGD": "optim.SGD", "Adam": "optim.Adam"}
# catches: the momentum handed to optim.SGD's own helper (optim.SGD._momentum(self, ...))
_SGD_STEP = ((optim.SGD, "step"), (optim.SGD, "_momentum"))
_STEPS = {"SGD": _SGD_STEP, "Adam": ((optim.Adam, "step"),)}


@probe
def trajectory(nb, kind, kwargs, seed, steps):
    """The learner's optimizer's parameters after each step, and its state at the end."""
    cls = getattr(nb, kind)

    def guard():
        return _blocked(nb, _STEP[kind], *_STEPS[kind])

    model, opt, history = _trajectory(lambda ps: cls(ps, **kwargs), seed, steps, guard)
    states = []
    state = getattr(opt, "state", {})
    for p in model.parameters():
        entry = state.get(p, {}) if hasattr(state, "get") else {}
        states.append({str(k): _plain(v) for k, v in dict(entry).items()})
    return history, states


def _reference(kind, kwargs, seed, steps):
    return _trajectory(lambda ps: getattr(optim, kind)(ps, **kwargs), seed, steps)


def _compare_trajectories(got, expected, what):
    assert len(got) == len(expected), f"{what}: {len(got)} steps recorded, expected {len(expected)}"
    for step, (mine, ref) in enumerate(zip(got, expected, strict=True), start=1):
        for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
            _close_arrays(a, b, f"{what}: after step {step}, parameter {i} (vs minitorch.optim's)")


@probe
def one_sgd_step(nb, start, grad, lr):
    p = nn.Parameter(minitorch.tensor(start))
    p.grad = minitorch.tensor(grad)
    opt = nb.SGD([p], lr=lr)
    with _blocked(nb, "optim.SGD", *_SGD_STEP):
        opt.step()
    return _values(p), bool(p.is_leaf and p.grad_fn is None and p.requires_grad)


# catches: a step that adds the gradient; a parameter replaced by a new non-leaf tensor
@exercise("03.4")
def test_plain_step_is_p_minus_lr_times_grad(run):
    start = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    grad = np.array([0.5, 0.5, -1.0], dtype=np.float32)
    got, leaf = run(one_sgd_step, start, grad, 0.1)
    assert np.shape(got) == (3,) and np.allclose(got, [0.95, -2.05, 3.1]), (
        f"one SGD step with lr=0.1 from [1, -2, 3] with grad [0.5, 0.5, -1] gave "
        f"{np.round(got, 4).tolist()}, expected [0.95, -2.05, 3.1]"
    )
    assert leaf, (
        "after step() the parameter should still be a leaf that requires grad: update it in "
        "place under minitorch.no_grad()"
    )


# catches: momentum applied to the step instead of the buffer; a buffer aliasing .grad
@exercise("03.4")
def test_momentum_trajectory_matches_minitorch(run):
    for lr, momentum in ((0.05, 0.9), (0.1, 0.0), (0.02, 0.5)):
        kwargs = {"lr": lr, "momentum": momentum}
        got, _ = run(trajectory, "SGD", kwargs, 1, 20)
        _, _, expected = _reference("SGD", kwargs, 1, 20)
        _compare_trajectories(got, expected, f"SGD(lr={lr}, momentum={momentum})")


# catches: buffers kept in a private dict (state_dict() would not save them)
@exercise("03.4")
def test_momentum_buffers_live_in_the_optimizer_state(run):
    kwargs = {"lr": 0.05, "momentum": 0.9}
    _, states = run(trajectory, "SGD", kwargs, 2, 3)
    model, ref_opt, _ = _reference("SGD", kwargs, 2, 3)
    names = [name for name, _ in model.named_parameters()]
    for name, p, state in zip(names, model.parameters(), states, strict=True):
        if not p.requires_grad:
            continue
        assert "momentum_buffer" in state, (
            f"after 3 steps, optimizer.state[{name}] has keys {sorted(state)}; keep the "
            "momentum in optimizer.state[p]['momentum_buffer'] so that state_dict() saves it"
        )
        expected = _values(ref_opt.state[p]["momentum_buffer"])
        _close_arrays(
            state["momentum_buffer"],
            expected,
            f"after 3 steps the momentum buffer of {name} (vs minitorch.optim.SGD's)",
        )


_GROUP_KWARGS = {
    "SGD": ({"lr": 0.01, "momentum": 0.9}, {"momentum": 0.5}),
    "Adam": ({"lr": 0.01, "betas": (0.9, 0.99)}, {"betas": (0.8, 0.9), "eps": 1e-3}),
}


def _groups_run(make_optimizer, kind, guard=contextlib.nullcontext):
    """Two param groups (the second with its own hyper-parameters), a parameter whose
    first gradient arrives at step 3, a scheduler that changes one group's lr at step 4,
    and a parameter without a gradient at step 5: the parameters after each step."""
    defaults, second = _GROUP_KWARGS[kind]
    minitorch.manual_seed(30)
    p1, p2, p3 = (nn.Parameter(minitorch.randn(n)) for n in (3, 2, 2))
    opt = make_optimizer([{"params": [p1, p2], "lr": 0.05}, {"params": [p3], **second}], defaults)
    rng = np.random.default_rng(31)
    history = []
    for step in range(6):
        for p in (p1, p2, p3):
            p.grad = minitorch.from_numpy(rng.standard_normal(p.shape).astype(np.float32))
        if step < 2:
            p2.grad = None  # no gradient yet (unused in the forward pass)
        if step == 4:
            p3.grad = None  # unused in this step: skipped, its momentum does not move it
        if step == 3:
            opt.param_groups[1]["lr"] = 0.2  # what a learning-rate scheduler does
        with guard():
            opt.step()
        history.append([_values(p) for p in (p1, p2, p3)])
    return history


@probe
def groups_trajectory(nb, kind):
    cls = getattr(nb, kind)

    def guard():
        return _blocked(nb, _STEP[kind], *_STEPS[kind])

    return _groups_run(lambda groups, defaults: cls(groups, **defaults), kind, guard)


def _check_groups(run, kind):
    got = run(groups_trajectory, kind)
    expected = _groups_run(lambda groups, defaults: getattr(optim, kind)(groups, **defaults), kind)
    what = (
        f"{kind} with two param groups, a late gradient and an lr changed by a scheduler "
        "(read each group's own hyper-parameters at every step, count steps per parameter)"
    )
    _compare_trajectories(got, expected, what)


@probe
def same_gradient_twice(nb, momentum):
    p = nn.Parameter(minitorch.tensor([1.0, -2.0, 3.0]))
    p.grad = minitorch.tensor([0.5, 0.5, -1.0])
    opt = nb.SGD([p], lr=0.1, momentum=momentum)
    out = []
    with _blocked(nb, "optim.SGD", *_SGD_STEP):
        for _ in range(2):
            opt.step()  # the same gradient twice (e.g. a step retried)
            out.append((_values(p), _values(p.grad)))
        opt.zero_grad(set_to_none=False)  # zeroes .grad in place
        with minitorch.no_grad():
            p.grad.add_(minitorch.tensor([1.0, -1.0, 0.25]))  # the engine accumulates in place
        opt.step()
        out.append((_values(p), _values(p.grad)))
    return out


def _check_same_gradient_twice(run, momentum, advice):
    got = run(same_gradient_twice, momentum)
    p = nn.Parameter(minitorch.tensor([1.0, -2.0, 3.0]))
    p.grad = minitorch.tensor([0.5, 0.5, -1.0])
    ref = optim.SGD([p], lr=0.1, momentum=momentum)
    expected = []
    for _ in range(2):
        ref.step()
        expected.append((_values(p), _values(p.grad)))
    ref.zero_grad(set_to_none=False)
    with minitorch.no_grad():
        p.grad.add_(minitorch.tensor([1.0, -1.0, 0.25]))
    ref.step()
    expected.append((_values(p), _values(p.grad)))
    for step, ((mine, mine_grad), (theirs, theirs_grad)) in enumerate(
        zip(got, expected, strict=True), start=1
    ):
        _close_arrays(
            mine_grad,
            theirs_grad,
            f"p.grad after step {step} of SGD(lr=0.1, momentum={momentum}) (step() must leave "
            f".grad as it was: {advice})",
        )
        _close_arrays(mine, theirs, f"p after step {step} of SGD(lr=0.1, momentum={momentum})")


# catches: a momentum buffer that is the .grad tensor itself (no clone): updating the
# buffer in place changes the gradient, and zeroing the gradient zeroes the buffer
@exercise("03.4")
def test_momentum_buffer_is_not_the_gradient(run):
    _check_same_gradient_twice(run, 0.9, "the buffer must not share memory with .grad")


# catches: the step made by scaling .grad in place (p.grad.mul_(lr)): the gradient the
# caller sees afterwards is no longer the gradient, and a second step uses the wrong one
@exercise("03.4")
def test_plain_step_leaves_the_gradient_alone(run):
    _check_same_gradient_twice(run, 0.0, "compute lr * grad as a new tensor")


# catches: hyper-parameters read from self.defaults (or captured in __init__) instead of
# each param group at each step: groups and schedulers silently ignored
@exercise("03.4")
def test_param_groups_and_a_scheduled_lr(run):
    _check_groups(run, "SGD")


# --- 03.5 Adam -----------------------------------------------------------------------------
@probe
def one_adam_step(nb, start, grad, lr):
    p = nn.Parameter(minitorch.from_numpy(start.copy()))
    p.grad = minitorch.from_numpy(grad)
    opt = nb.Adam([p], lr=lr)
    with _blocked(nb, "optim.Adam", (optim.Adam, "step")):
        opt.step()
    grad = None if p.grad is None else _values(p.grad)
    return _values(p), bool(p.is_leaf and p.grad_fn is None and p.requires_grad), grad


# catches: no bias correction (the first step is lr * (1 - beta1) / sqrt(1 - beta2))
@exercise("03.5")
def test_first_step_moves_each_weight_by_lr(run):
    start = np.array([0.5, -1.0, 2.0, 0.0, 3.0], dtype=np.float32)
    grad = np.array([1e-3, -0.5, 40.0, 2.0, -1e3], dtype=np.float32)
    got, leaf, _ = run(one_adam_step, start, grad, 0.01)
    moved = np.asarray(got) - start
    expected = -0.01 * np.sign(grad).astype(np.float64)
    assert moved.shape == expected.shape and np.allclose(moved, expected, rtol=1e-3, atol=1e-6), (
        f"Adam's first step (lr=0.01) moved the weights by {np.round(moved, 5).tolist()}; with "
        f"bias correction m_hat / sqrt(v_hat) = sign(g), so expected {expected.round(5).tolist()}"
    )
    assert leaf, (
        "after step() the parameter should still be a leaf that requires grad: update it in "
        "place under minitorch.no_grad()"
    )


# catches: .grad changed in place while updating the moments (g.mul_(1 - beta1)): the
# caller's gradient is not the gradient any more (a second optimizer, a logger, a clip
# after the step all read it)
@exercise("03.5")
def test_step_leaves_the_gradient_alone(run):
    start = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    grad = np.array([0.25, -3.0, 8.0], dtype=np.float32)
    _, _, after = run(one_adam_step, start, grad, 0.01)
    assert after is not None, "after Adam's step() the parameter has no gradient any more"
    _close_arrays(
        after,
        grad.astype(np.float64),
        f"p.grad after one Adam step with the gradient {grad.tolist()} (step() must leave "
        ".grad as it was: build the moments' updates as new tensors)",
        rtol=0,
        atol=0,
    )


# catches: eps inside the square root; moments updated in the wrong order
@exercise("03.5")
def test_trajectory_matches_minitorch(run):
    got, _ = run(trajectory, "Adam", {"lr": 0.01}, 3, 20)
    _, _, expected = _reference("Adam", {"lr": 0.01}, 3, 20)
    _compare_trajectories(got, expected, "Adam(lr=0.01)")


# catches: the defaults used instead of the param group's betas and eps
@exercise("03.5")
def test_custom_betas_and_eps(run):
    kwargs = {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-4}
    got, _ = run(trajectory, "Adam", kwargs, 4, 20)
    _, _, expected = _reference("Adam", kwargs, 4, 20)
    _compare_trajectories(got, expected, "Adam(lr=0.05, betas=(0.8, 0.99), eps=1e-4)")


# catches: one global step count; moments kept outside optimizer.state
@exercise("03.5")
def test_moments_live_in_the_optimizer_state(run):
    _, states = run(trajectory, "Adam", {"lr": 0.01}, 5, 4)
    model, ref_opt, _ = _reference("Adam", {"lr": 0.01}, 5, 4)
    names = [name for name, _ in model.named_parameters()]
    for name, p, state in zip(names, model.parameters(), states, strict=True):
        if not p.requires_grad:
            continue
        ref = ref_opt.state[p]
        missing = [k for k in ("step", "exp_avg", "exp_avg_sq") if k not in state]
        assert not missing, (
            f"optimizer.state[{name}] has keys {sorted(state)}; keep 'step', 'exp_avg' and "
            "'exp_avg_sq' there, so that state_dict() saves them and training can resume"
        )
        step = state["step"]
        step = float(np.asarray(step).reshape(-1)[0]) if np.size(step) == 1 else step
        assert step == ref["step"], (
            f"after 4 steps optimizer.state[{name}]['step'] is {step}, expected 4"
        )
        for key in ("exp_avg", "exp_avg_sq"):
            _close_arrays(
                state[key],
                _values(ref[key]),
                f"after 4 steps optimizer.state[{name}][{key!r}] (vs minitorch.optim's)",
                atol=1e-8,
            )


# catches: one global step count (a parameter whose first gradient comes late gets the
# wrong bias correction); self.defaults read instead of each param group
@exercise("03.5")
def test_param_groups_and_a_late_gradient(run):
    _check_groups(run, "Adam")


# --- 03.6 clip_grad_norm_ ------------------------------------------------------------------
def _clip(nb, parameters, max_norm):
    with _blocked(nb, "nn.utils.clip_grad_norm_", (nn.utils, "clip_grad_norm_")):
        return nb.clip_grad_norm_(parameters, max_norm)


def _model_with_grads(seed, scale):
    model = _mlp(seed, (5, 7, 4))
    params = list(model.parameters())
    _set_grads(params, seed, scale)
    params[1].grad = None  # a parameter without a gradient takes no part
    return model


def _grads(model):
    return [None if p.grad is None else _values(p.grad) for p in model.parameters()]


@probe
def clipped(nb, seed, scale, max_norm, how):
    model = _model_with_grads(seed, scale)
    params = list(model.parameters())
    if how == "nan":
        params[0].grad[0, 0] = float("nan")
    if how == "none":
        for p in params:
            p.grad = None
    given = list(params)
    total = _clip(nb, model.parameters() if how == "generator" else params, max_norm)
    # catches: parameters without a gradient removed from the caller's list (parameters[:] =
    # ...): the list is the caller's, and its optimizer may hold it too
    assert [id(p) for p in params] == [id(q) for q in given], (
        f"clip_grad_norm_(parameters, {max_norm}) changed the caller's list of {len(given)} "
        f"parameters (it has {len(params)} afterwards); read it, and keep your own list of "
        "the gradients"
    )
    if isinstance(total, minitorch.Tensor) and total.numel() == 1:
        total = total.item()
    return _plain(total), _grads(model)


def _reference_clip(seed, scale, max_norm):
    model = _model_with_grads(seed, scale)
    total = nn.utils.clip_grad_norm_(list(model.parameters()), max_norm).item()
    return total, _grads(model)


@probe
def gradient_objects(nb, seed, scale, max_norm):
    """Whether each parameter still holds the gradient tensor it held before the clip, and
    the values of the tensors held from before (as other code holding them sees them)."""
    params = list(_model_with_grads(seed, scale).parameters())
    held = [p.grad for p in params]
    _clip(nb, params, max_norm)
    kept = [p.grad is g for p, g in zip(params, held, strict=True)]
    return kept, [None if g is None else _values(g) for g in held]


# catches: a new tensor assigned to p.grad (p.grad = p.grad * coef) instead of scaling the
# gradient in place: code that holds the gradient tensor still sees the unclipped values
@exercise("03.6")
def test_gradients_are_scaled_in_place(run):
    kept, held = run(gradient_objects, 11, 4.0, 1.0)
    _, expected = _reference_clip(11, 4.0, 1.0)
    for i, (same, values, ref) in enumerate(zip(kept, held, expected, strict=True)):
        if ref is None:
            continue
        assert same, (
            f"after clip_grad_norm_(parameters, 1.0) parameter {i} holds a new gradient tensor; "
            "scale the gradient tensor it had in place, so that whoever holds it sees the "
            "clipped values"
        )
        _close_arrays(
            values,
            ref,
            f"the gradient tensor parameter {i} held before clip_grad_norm_(parameters, 1.0)",
            atol=1e-7,
        )


# catches: per-parameter clipping; the norm after clipping returned; None grads counted
@exercise("03.6")
def test_clips_like_minitorch(run):
    for scale, max_norm in ((3.0, 1.0), (10.0, 2.5)):
        total, grads = run(clipped, 7, scale, max_norm, "list")
        expected_total, expected = _reference_clip(7, scale, max_norm)
        assert isinstance(total, float) and math.isclose(total, expected_total, rel_tol=1e-5), (
            f"clip_grad_norm_ returned {total!r}, expected the total norm before clipping, "
            f"{expected_total:.6g}"
        )
        for i, (a, b) in enumerate(zip(grads, expected, strict=True)):
            assert (a is None) == (b is None), f"parameter {i}'s grad should stay None"
            if a is not None:
                _close_arrays(
                    a,
                    b,
                    f"after clip_grad_norm_(..., max_norm={max_norm}) the grad of parameter {i} "
                    "(scale every gradient by max_norm / total_norm)",
                    atol=1e-7,
                )
        clipped_norm = math.sqrt(sum(float((g**2).sum()) for g in grads if g is not None))
        assert clipped_norm <= max_norm * (1 + 1e-4), (
            f"after clipping to max_norm={max_norm} the total norm is still {clipped_norm:.4f}"
        )


# catches: gradients scaled up to max_norm when they are already below it
@exercise("03.6")
def test_no_change_below_max_norm(run):
    total, grads = run(clipped, 8, 0.01, 10.0, "list")
    before = _grads(_model_with_grads(8, 0.01))
    expected = math.sqrt(
        sum(float((g.astype(np.float64) ** 2).sum()) for g in before if g is not None)
    )
    assert isinstance(total, float) and math.isclose(total, expected, rel_tol=1e-4), (
        f"clip_grad_norm_ returned {total!r}, expected the total norm {expected:.6g}"
    )
    for i, (a, b) in enumerate(zip(grads, before, strict=True)):
        if a is not None:
            _close_arrays(
                a,
                b,
                f"the total norm {expected:.3g} is below max_norm=10, but the grad of parameter "
                f"{i} changed; leave the gradients alone then",
                rtol=1e-6,
                atol=0,
            )


# catches: the parameters iterated twice (a generator is empty the second time)
@exercise("03.6")
def test_accepts_a_generator_of_parameters(run):
    total, grads = run(clipped, 9, 5.0, 1.0, "generator")
    _, expected = _reference_clip(9, 5.0, 1.0)
    for i, (a, b) in enumerate(zip(grads, expected, strict=True)):
        if a is not None and b is not None:
            _close_arrays(
                a,
                b,
                f"clip_grad_norm_(model.parameters(), 1.0): parameter {i}'s grad (parameters "
                "can be a generator, so make a list of it once, first)",
                atol=1e-7,
            )
    assert isinstance(total, float) and total > 1.0, (
        f"clip_grad_norm_(model.parameters(), 1.0) returned {total!r}, expected the norm "
        "before clipping"
    )


# catches: None (or an error) returned when no parameter has a gradient: the norm is 0
@exercise("03.6")
def test_no_gradients_at_all(run):
    total, grads = run(clipped, int(run.rng.integers(100)), 1.0, 1.0, "none")
    assert isinstance(total, float) and total == 0.0, (
        f"with no gradients at all clip_grad_norm_ returned {total!r}; the total norm of no "
        "gradients is 0"
    )
    assert all(g is None for g in grads), "clip_grad_norm_ gave a gradient to a parameter"


# catches: a clip that hides a NaN norm (the loop could not see it and skip the step)
@exercise("03.6")
def test_nan_gradient_propagates(run):
    total, grads = run(clipped, 10, 1.0, 1.0, "nan")
    assert isinstance(total, float) and math.isnan(total), (
        f"with a NaN in one gradient clip_grad_norm_ returned {total!r}; the total norm should "
        "be NaN, so that the training loop can see it and skip the step"
    )
    for i, g in enumerate(grads):
        if g is not None:
            assert np.isnan(g).all(), (
                f"with a NaN total norm, parameter {i}'s grad should become NaN too (as in "
                "PyTorch: scale by min(max_norm / norm, 1), which keeps the NaN)"
            )


# --- 03.7 DataLoader -----------------------------------------------------------------------
class _Numbered(Dataset):
    """Sample ``i`` is ``(tensor([i, i]), i)``; only integer indices are accepted."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        try:
            i = operator.index(index)
        except TypeError:
            i = None
        if i is None or isinstance(index, bool) or not 0 <= i < self.n:
            raise AssertionError(
                f"the loader asked the dataset for item {index!r}; fetch one sample at a time "
                f"with an int index in range({self.n})"
            )
        return minitorch.tensor([float(i), float(i)]), minitorch.tensor(i)


_LOADER = (
    (minitorch.data.DataLoader, "__iter__"),
    (minitorch.data.BatchSampler, "__iter__"),
    (minitorch.data.collate, "default_collate"),
    (minitorch.data.dataloader, "default_collate"),
    (minitorch.data, "default_collate"),
    # catches: default_collate's own insides called directly (collate._collate(samples, ...))
    (minitorch.data.collate, "_collate"),
)


def _batch_data(batch):
    """A batch as plain data: its parts' types, and for (xs, ys) of tensors their contents."""
    parts = list(batch)
    data = {"parts": len(parts), "types": [type(p).__name__ for p in parts]}
    if len(parts) == 2 and all(isinstance(p, minitorch.Tensor) for p in parts):
        xs, ys = parts
        data.update(xs=_values(xs), ys=ys.numpy().copy(), ys_dtype=str(ys.dtype))
    return data


def _loader(nb, dataset, kwargs):
    kwargs = dict(kwargs)
    if "seed" in kwargs:
        kwargs["generator"] = minitorch.Generator(kwargs.pop("seed"))
    return nb.DataLoader(dataset, **kwargs)


@probe
def epochs_of(nb, n, kwargs, count, len_first=False):
    """``count`` epochs of a loader over ``_Numbered(n)``, and len(loader) (also asked
    before each epoch with ``len_first``, as a progress bar does)."""
    loader = _loader(nb, _Numbered(n), kwargs)
    out = []
    for _ in range(count):
        if len_first:
            len(loader)
        with _blocked(nb, "DataLoader or default_collate", *_LOADER):
            out.append([_batch_data(b) for b in loader])
    return out, len(loader)


def _structure(batches):
    for k, batch in enumerate(batches):
        assert batch["parts"] == 2, (
            f"batch {k} has {batch['parts']} parts; a dataset of (x, y) pairs gives batches "
            "(xs, ys)"
        )
        assert "xs" in batch, (
            f"batch {k} is ({', '.join(batch['types'])}); stack the samples' parts into tensors "
            "with minitorch.stack"
        )


def _numbers(batches):
    """An epoch's batches as lists of sample numbers, checking their structure."""
    _structure(batches)
    numbers = []
    for k, batch in enumerate(batches):
        xs, ys = batch["xs"], batch["ys"]
        assert xs.ndim == 2 and xs.shape[1] == 2 and ys.ndim == 1 and len(xs) == len(ys), (
            f"batch {k} has shapes {xs.shape} and {ys.shape}; stacking n samples "
            "of shapes (2,) and () should give (n, 2) and (n,)"
        )
        assert batch["ys_dtype"] == str(minitorch.int64), (
            f"batch {k}'s labels are {batch['ys_dtype']}, expected int64"
        )
        numbers.append([int(v) for v in ys.tolist()])
        assert xs[:, 0].tolist() == [float(v) for v in numbers[-1]], (
            f"batch {k}: the x and y parts of the samples were stacked in different orders"
        )
    return numbers


# catches: the last, smaller batch dropped; len() rounding down
@exercise("03.7")
def test_sequential_batches_in_order(run):
    (epoch,), length = run(epochs_of, 10, {"batch_size": 4}, 1)
    got = _numbers(epoch)
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], (
        f"DataLoader(10 samples, batch_size=4) gave batches {got}, expected "
        "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] (the last batch is smaller)"
    )
    assert length == 3, f"len(loader) is {length}, expected 3 batches"
    # catches: len() that adds one partial batch even when batch_size divides the length
    size = int(run.rng.integers(2, 6))
    count = int(run.rng.integers(2, 5))
    (epoch,), length = run(epochs_of, size * count, {"batch_size": size}, 1)
    assert len(_numbers(epoch)) == count == length, (
        f"{size * count} samples in batches of {size} make {count} full batches; the loader "
        f"gave {len(epoch)} and len(loader) = {length}"
    )


# catches: drop_last ignored, in iteration or in len()
@exercise("03.7")
def test_drop_last(run):
    (epoch,), length = run(epochs_of, 10, {"batch_size": 4, "drop_last": True}, 1)
    got = _numbers(epoch)
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7]], (
        f"DataLoader(10 samples, batch_size=4, drop_last=True) gave {got}, expected the two "
        "full batches only"
    )
    assert length == 2, f"len(loader) with drop_last=True is {length}, expected 2"
    (epoch,), length = run(epochs_of, 8, {"batch_size": 4, "drop_last": True}, 1)
    assert len(_numbers(epoch)) == 2 == length, (
        "with 8 samples, batch_size=4 and drop_last=True there are 2 batches"
    )


# catches: sampling with replacement; shuffle ignored
@exercise("03.7")
def test_shuffle_covers_every_sample_once(run):
    seed = int(run.rng.integers(1000))
    epochs, _ = run(epochs_of, 23, {"batch_size": 5, "shuffle": True, "seed": seed}, 2)
    for epoch, batches in enumerate(epochs, start=1):
        numbers = _numbers(batches)
        order = [i for batch in numbers for i in batch]
        assert sorted(order) == list(range(23)), (
            f"epoch {epoch} of a shuffled loader visited {sorted(order)}; every sample "
            "0..22 should appear exactly once"
        )
        assert [len(b) for b in numbers] == [5, 5, 5, 5, 3], (
            f"a shuffled loader gave batch sizes {[len(b) for b in numbers]}, expected "
            "[5, 5, 5, 5, 3]"
        )
        assert order != list(range(23)), f"epoch {epoch} with shuffle=True was not shuffled"


# catches: one permutation reused every epoch; the generator ignored
@exercise("03.7")
def test_seeded_shuffles_repeat_and_differ_between_epochs(run):
    def orders(seed, n=2):
        epochs, _ = run(epochs_of, 30, {"batch_size": 8, "shuffle": True, "seed": seed}, n)
        return [[i for b in _numbers(batches) for i in b] for batches in epochs]

    seed = int(run.rng.integers(1000))
    first, second = orders(seed)
    assert first != second, (
        "two epochs of the same shuffled loader came in the same order; draw a new "
        "permutation each time __iter__ starts"
    )
    assert orders(seed) == [first, second], (
        f"two loaders with minitorch.Generator({seed}) gave different orders; draw the "
        "permutation from the loader's generator (minitorch.randperm(n, generator=...))"
    )
    assert orders(seed + 1, 1)[0] != first, (
        "loaders with different generators gave the same order; use the generator"
    )
    # catches: len() computed by running an epoch (it draws a permutation from the generator)
    epochs, _ = run(epochs_of, 30, {"batch_size": 8, "shuffle": True, "seed": seed}, 2, True)
    assert [[i for b in _numbers(batches) for i in b] for batches in epochs] == [first, second], (
        "calling len(loader) before each epoch changed the shuffled orders; len() should "
        "compute the number of batches without iterating (or drawing random numbers)"
    )


class _Triples(Dataset):
    """Sample ``i`` is ``(tensor([i, i]), i, tensor(-i))``: three parts."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return minitorch.tensor([float(i), float(i)]), minitorch.tensor(i), minitorch.tensor(-i)


@probe
def triple_batches(nb, batch_size):
    loader = _loader(nb, _Triples(), {"batch_size": batch_size})
    with _blocked(nb, "DataLoader or default_collate", *_LOADER):
        return [[_values(part) for part in batch] for batch in loader]


# catches: a collate that assumes (x, y) pairs: samples may have any number of parts
@exercise("03.7")
def test_samples_with_three_parts(run):
    size = int(run.rng.integers(2, 5))
    batches = run(triple_batches, size)
    order = list(range(7))
    expected = [order[i : i + size] for i in range(0, 7, size)]
    assert len(batches) == len(expected), (
        f"7 samples in batches of {size} gave {len(batches)} batches, expected {len(expected)}"
    )
    for k, (batch, numbers) in enumerate(zip(batches, expected, strict=True)):
        assert len(batch) == 3, (
            f"batch {k} of a dataset of (x, y, z) samples has {len(batch)} parts, expected 3 "
            "(stack each part of the samples, however many there are)"
        )
        xs, ys, zs = batch
        assert ys.tolist() == numbers and zs.tolist() == [-i for i in numbers], (
            f"batch {k}'s second and third parts are {ys.tolist()} and {zs.tolist()}, expected "
            f"{numbers} and {[-i for i in numbers]}"
        )
        assert xs.shape == (len(numbers), 2), f"batch {k}'s first part has shape {xs.shape}"


@probe
def digit_batches(nb):
    loader = _loader(nb, load_digits("train"), {"batch_size": 64, "shuffle": True, "seed": 0})
    with _blocked(nb, "DataLoader or default_collate", *_LOADER):
        batches = [_batch_data(b) for b in loader]
    for b in batches:
        if "xs" in b:
            b["xs"] = b["xs"].shape  # only the images' shapes travel back
    return batches, len(loader)


# catches: images flattened or squeezed by the collate; a batch lost at the end
@exercise("03.7")
def test_batches_the_digits(run):
    batches, length = run(digit_batches)
    _structure(batches)
    shapes = [(tuple(b["xs"]), tuple(b["ys"].shape)) for b in batches]
    assert len(batches) == 23 == length, (
        f"1437 digits in batches of 64 should give 23 batches, got {len(batches)} (and "
        f"len(loader) = {length})"
    )
    assert all(s == ((64, 1, 8, 8), (64,)) for s in shapes[:-1]), (
        f"digit batches should have shapes (64, 1, 8, 8) and (64,), got {shapes[0]}"
    )
    assert shapes[-1] == ((29, 1, 8, 8), (29,)), (
        f"the last digit batch should hold the remaining 29 images, got shapes {shapes[-1]}"
    )
    labels = np.concatenate([b["ys"] for b in batches]).astype(np.int64)
    expected = np.bincount(load_digits("train").tensors[1].numpy(), minlength=10)
    assert np.array_equal(np.bincount(labels, minlength=10), expected), (
        "one epoch over the digits should contain every image exactly once (the label "
        "counts differ from the dataset's)"
    )


# --- 03.8 the training loop ----------------------------------------------------------------
class _FixedLoader:
    """The same list of batches every epoch; counts the epochs."""

    def __init__(self, batches):
        self.batches = batches
        self.epochs = 0

    def __iter__(self):
        self.epochs += 1
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def _regression(seed, n_batches=4, batch=8, last=None):
    minitorch.manual_seed(seed)
    true_w = minitorch.randn(6, 3)
    batches = []
    for k in range(n_batches):
        x = minitorch.randn(last if last and k == n_batches - 1 else batch, 6)
        batches.append((x, (x @ true_w).tanh()))
    return batches


@probe
def train_with_sgd(nb, seed, lr, momentum, epochs, last=None):
    batches = _regression(seed, last=last)
    model = _mlp(seed)
    loader = _FixedLoader(batches)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = nb.train(model, loader, opt, F.mse_loss, epochs)
    kinds = [type(v).__name__ for v in losses] if isinstance(losses, (list, tuple)) else None
    return {
        "losses": losses,
        "kinds": kinds,
        "epochs": loader.epochs,
        "params": [_values(p) for p in model.parameters()],
    }


# catches: the last batch's loss returned; loss tensors kept (graphs kept alive)
@exercise("03.8")
def test_returns_one_mean_loss_per_epoch(run):
    got = run(train_with_sgd, 20, 0.0, 0.0, 3)
    losses = got["losses"]
    assert isinstance(losses, (list, tuple)) and len(losses) == 3, (
        f"train(..., epochs=3) returned {losses!r}; expected a list of 3 losses, one per epoch"
    )
    assert got["kinds"] == ["float"] * 3, (
        f"train returned {got['kinds']}; return Python floats (use loss.item(): keeping loss "
        "tensors also keeps their whole graphs in memory)"
    )
    assert got["epochs"] == 3, f"train(..., epochs=3) iterated the loader {got['epochs']} times"
    batches, model = _regression(20), _mlp(20)
    with minitorch.no_grad():
        expected = sum(F.mse_loss(model(x), y).item() for x, y in batches) / len(batches)
    for epoch, value in enumerate(losses, start=1):
        assert math.isclose(value, expected, rel_tol=1e-5), (
            f"with lr=0 the weights never change, so epoch {epoch}'s loss should be the mean "
            f"batch loss {expected:.6f}, got {value:.6f}"
        )
    # catches: the epoch loss weighted by batch size (the last batch is smaller here)
    seed, last = int(run.rng.integers(100, 1000)), int(run.rng.integers(1, 4))
    got = run(train_with_sgd, seed, 0.0, 0.0, 1, last)
    batches, model = _regression(seed, last=last), _mlp(seed)
    with minitorch.no_grad():
        expected = [F.mse_loss(model(x), y).item() for x, y in batches]
    losses = checked_array(got["losses"], [0.0], "the epoch losses train returned")
    assert np.allclose(losses, [sum(expected) / len(expected)], rtol=1e-5), (
        f"with batches of sizes {[len(x) for x, _ in batches]} and lr=0, train returned "
        f"{got['losses']!r}, expected [{sum(expected) / len(expected):.6f}]: the plain mean of "
        "the batch losses, each batch counting once"
    )


# catches: zero_grad forgotten or misplaced; step before backward
@exercise("03.8")
def test_matches_a_correct_loop(run):
    got = run(train_with_sgd, 21, 0.1, 0.5, 2)
    batches, ref = _regression(21), _mlp(21)
    ref_opt = optim.SGD(ref.parameters(), lr=0.1, momentum=0.5)
    expected = []
    for _ in range(2):
        total = 0.0
        for x, y in batches:
            ref_opt.zero_grad()
            loss = F.mse_loss(ref(x), y)
            loss.backward()
            ref_opt.step()
            total += loss.item()
        expected.append(total / len(batches))
    for (name, q), p in zip(ref.named_parameters(), got["params"], strict=True):
        p = checked_array(p, _values(q), f"{name} after 2 epochs")
        assert np.allclose(p, _values(q), rtol=1e-5, atol=1e-6), (
            f"after 2 epochs {name} differs from a correct loop's; for each batch: "
            "zero_grad, forward, loss, backward, step"
        )
    losses = got["losses"]
    # catches: a list of the wrong length (a history kept between calls), which np.allclose
    # cannot compare
    assert (
        isinstance(losses, (list, tuple))
        and len(losses) == len(expected)
        and np.allclose(checked_array(losses, expected, "the epoch losses"), expected, rtol=1e-5)
    ), (
        f"train returned the epoch losses {losses!r}, expected "
        f"{np.round(expected, 5).tolist()} (the mean of each epoch's batch losses)"
    )


@probe
def training_modes(nb, seed):
    model = nn.Sequential(_mlp(seed), nn.Dropout(0.1))
    modes = []
    model.register_forward_hook(lambda module, args, output: modes.append(module.training))
    model.eval()  # as an evaluation before this epoch would have left it
    opt = optim.SGD(model.parameters(), lr=0.01)
    nb.train(model, _FixedLoader(_regression(seed)), opt, F.mse_loss, 1)
    return [bool(m) for m in modes]


# catches: model.train() never called (an evaluation left the model in eval mode)
@exercise("03.8")
def test_puts_the_model_in_training_mode(run):
    modes = run(training_modes, 22)
    assert modes and all(modes), (
        "train() ran the model in eval mode; call model.train() at the start of each epoch"
    )


def _task(seed):
    """The grader's classification task: Gaussian clusters in 4 to 8 dimensions, two
    clusters per class (so that the classes are not linearly separable), the clusters at
    least 6 standard deviations apart; a model, optimizer and batch size drawn with it."""
    rng = np.random.default_rng(seed)
    classes, dim = int(rng.integers(3, 6)), int(rng.integers(4, 9))
    spec = {
        "classes": classes,
        "dim": dim,
        "width": int(rng.choice([24, 32, 48])),
        "batch_size": int(rng.choice([25, 32, 40])),
        "optimizer": ["Adam", "SGD"][int(rng.integers(2))],
    }
    centres = np.zeros((0, dim))
    while len(centres) < 2 * classes:
        c = rng.uniform(-5, 5, size=dim)
        if all(np.linalg.norm(c - other) >= 6 for other in centres):
            centres = np.vstack([centres, c])

    def draw(n):
        cluster = rng.integers(0, len(centres), size=n)
        x = centres[cluster] + rng.standard_normal((n, dim))
        return x.astype(np.float32), (cluster % classes).astype(np.int64)

    return spec, draw(512), draw(400)


def _task_model(spec, seed):
    minitorch.manual_seed(seed)
    width = spec["width"]
    return nn.Sequential(
        nn.Linear(spec["dim"], width),
        nn.Tanh(),
        nn.Linear(width, width),
        nn.Tanh(),
        nn.Linear(width, spec["classes"]),
    )


@probe
def train_on_a_task(nb, seed, epochs):
    spec, (x, y), _ = _task(seed)
    model = _task_model(spec, seed)
    data = minitorch.data.TensorDataset(minitorch.from_numpy(x), minitorch.from_numpy(y))
    loader = minitorch.data.DataLoader(
        data, batch_size=spec["batch_size"], shuffle=True, generator=minitorch.Generator(seed)
    )
    if spec["optimizer"] == "Adam":
        opt = optim.Adam(model.parameters(), lr=0.01)
    else:
        opt = optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    losses = nb.train(model, loader, opt, F.cross_entropy, epochs)
    return losses, [_values(p) for p in model.parameters()]


# catches: a loop that does not learn (no step, step before backward, gradients never
# cleared, lr unused): the goal on a task the learner has not seen, judged here on the
# trained weights and held-out examples the learner's process never saw
@exercise("03.8")
def test_reaches_the_goal_on_an_unseen_task(run):
    seed, epochs = int(run.rng.integers(10**6)), 4
    spec, _, (x_test, y_test) = _task(seed)
    what = (
        f"a {spec['classes']}-class task in {spec['dim']} dimensions (512 examples, batches of "
        f"{spec['batch_size']}, an MLP of width {spec['width']}, {spec['optimizer']}, "
        f"cross-entropy, task seed {seed}), trained with train(..., epochs={epochs})"
    )
    losses, params = run(train_on_a_task, seed, epochs)
    assert isinstance(losses, (list, tuple)) and len(losses) == epochs, (
        f"{what} returned {losses!r}; expected {epochs} epoch losses"
    )
    losses = checked_array(losses, np.zeros(epochs), f"the epoch losses of {what}")
    model = _task_model(spec, seed)
    assert len(params) == len(list(model.parameters())), f"{what}: the model's parameters changed"
    with minitorch.no_grad():
        for p, values in zip(model.parameters(), params, strict=True):
            assert np.shape(values) == tuple(p.shape), f"{what}: a parameter changed shape"
            p.copy_(minitorch.tensor(np.asarray(values, dtype=np.float32)))
    model.eval()
    with minitorch.no_grad():
        predictions = model(minitorch.from_numpy(x_test)).argmax(dim=1).numpy()
    acc = float((predictions == y_test).mean())
    assert np.isfinite(losses).all() and losses[-1] <= 0.5 * losses[0], (
        f"{what}: the epoch loss went from {losses[0]:.4g} to {losses[-1]:.4g}; the goal is "
        "that the last epoch's loss is at most half the first's"
    )
    assert acc >= 0.9, (
        f"{what}: the trained model classifies {acc:.1%} of 400 held-out examples right; the "
        "goal is at least 90% (a correct loop reaches over 96%)"
    )


@probe
def train_with_stale_gradients(nb, seed):
    batches, model = _regression(seed), _mlp(seed)
    _set_grads(model.parameters(), seed, scale=20.0)  # left over from an earlier backward
    opt = optim.SGD(model.parameters(), lr=0.05)
    losses = nb.train(model, _FixedLoader(batches), opt, F.mse_loss, 1)
    return losses, [_values(p) for p in model.parameters()]


# catches: zero_grad called after the step instead of before backward (or only from the
# second batch on): gradients already on the model when train is called leak into the
# first step
@exercise("03.8")
def test_gradients_from_before_the_call_do_not_leak(run):
    seed = int(run.rng.integers(100, 1000))
    _, params = run(train_with_stale_gradients, seed)
    batches, ref = _regression(seed), _mlp(seed)
    ref_opt = optim.SGD(ref.parameters(), lr=0.05)
    for x, y in batches:
        ref_opt.zero_grad()
        F.mse_loss(ref(x), y).backward()
        ref_opt.step()
    for (name, q), p in zip(ref.named_parameters(), params, strict=True):
        p = checked_array(p, _values(q), f"{name} after one epoch")
        assert np.allclose(p, _values(q), rtol=1e-5, atol=1e-6), (
            f"the model came into train() holding gradients from an earlier backward (of size "
            f"about 20); after one epoch of SGD(lr=0.05) {name} differs from a loop whose every "
            "step uses its own batch's gradient alone, by up to "
            f"{np.abs(p - _values(q)).max():.3g}: the old gradients leaked into a step"
        )


class _EvaluatingLoader(_FixedLoader):
    """Like an evaluation callback at the end of each epoch: switches the model to eval."""

    def __init__(self, batches, model):
        super().__init__(batches)
        self.model = model

    def __iter__(self):
        self.epochs += 1
        yield from self.batches
        self.model.eval()


@probe
def modes_per_epoch(nb, seed, epochs):
    model = nn.Sequential(_mlp(seed), nn.Dropout(0.1))
    modes = []
    model.register_forward_hook(lambda module, args, output: modes.append(module.training))
    loader = _EvaluatingLoader(_regression(seed), model)
    opt = optim.SGD(model.parameters(), lr=0.01)
    nb.train(model, loader, opt, F.mse_loss, epochs)
    return [bool(m) for m in modes]


# catches: model.train() called once before the epochs, not at the start of each (an
# evaluation after epoch 1 leaves epochs 2 and later in eval mode)
@exercise("03.8")
def test_training_mode_in_every_epoch(run):
    modes = run(modes_per_epoch, 24, 3)
    assert len(modes) == 12 and all(modes), (
        "after an evaluation switched the model to eval mode, train() ran the next epoch in "
        "eval mode: call model.train() at the start of every epoch"
    )


@probe
def graphs_kept_alive(nb, seed):
    import gc
    import weakref

    batches, model = _regression(seed, n_batches=6), _mlp(seed)
    graphs, alive = [], []

    def loss_fn(out, target):
        if len(graphs) % len(batches) == len(batches) - 1:
            gc.collect()  # at each epoch's last batch: the earlier batches' graphs are freed
        alive.append(sum(ref() is not None for ref in graphs))
        loss = F.mse_loss(out, target)
        graphs.append(weakref.ref(loss.grad_fn))
        return loss

    opt = optim.SGD(model.parameters(), lr=0.01)
    nb.train(model, _FixedLoader(batches), opt, loss_fn, 2)
    return alive


# catches: the loss tensors added up (or kept in a list) instead of loss.item(): every
# batch's graph stays alive until the end of the epoch
@exercise("03.8")
def test_batch_graphs_are_not_kept_alive(run):
    alive = run(graphs_kept_alive, 25)
    assert alive and max(alive) <= 1, (
        f"while training, up to {max(alive)} earlier batches' graphs were still alive; take "
        "each batch's loss with loss.item(), so that its graph can be freed"
    )
