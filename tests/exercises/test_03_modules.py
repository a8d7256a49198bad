"""Graded tests for chapter 03 (modules, optimizers, data, the training loop).

``nb`` holds what the notebook defined. Every test runs the learner's piece inside the
real framework (real modules, autograd, optimizers and data) and compares it with
minitorch's own version, which matches PyTorch. While the learner's code runs, the
package's version of the same piece is blocked, so that calling it cannot pass a test.
"""

import contextlib
import math
import operator

import numpy as np

import minitorch
import minitorch.nn.functional as F
from minitorch import nn, optim
from minitorch.data import Dataset, load_digits
from minitorch.grading import exercise


# --- helpers -------------------------------------------------------------------------------
@contextlib.contextmanager
def _blocked(nb, what, *targets):
    """While the learner's code runs, make the package's own ``what`` fail with a hint.

    ``targets`` are ``(owner, attribute)`` pairs; notebook globals bound to the same
    objects (``from minitorch.nn.utils import clip_grad_norm_``) are blocked too.
    """

    def refuse(*args, **kwargs):
        raise AssertionError(
            f"your code called minitorch's own {what}, which this exercise asks you to write"
        )

    saved = [(owner, name, owner.__dict__[name]) for owner, name in targets]
    originals = [original for _, _, original in saved]
    namespace = nb._globals
    aliases = [(k, v) for k, v in namespace.items() if any(v is original for original in originals)]
    try:
        for owner, name, _ in saved:
            setattr(owner, name, refuse)
        for k, _ in aliases:
            namespace[k] = refuse
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        for k, v in aliases:
            namespace[k] = v


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


# --- 03.1 named_parameters -----------------------------------------------------------------
_MODULE_WALK = (
    (nn.Module, "named_parameters"),
    (nn.Module, "parameters"),
    (nn.Module, "named_modules"),
    (nn.Module, "modules"),
    (nn.Module, "_named_members"),
    (nn.Module, "state_dict"),
)


def _walk(nb, model, prefix=""):
    with _blocked(nb, "Module.named_parameters (or another walk of the tree)", *_MODULE_WALK):
        found = list(nb.named_parameters(model, prefix))
    return found


def _same_walk(nb, model, prefix="", what="the model"):
    got = _walk(nb, model, prefix)
    expected = list(model.named_parameters(prefix))
    got_names = [name for name, _ in got]
    expected_names = [name for name, _ in expected]
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
    for (name, p), (_, q) in zip(got, expected, strict=True):
        assert p is q, (
            f"named_parameters({what}) yielded a copy for {name!r}; yield the Parameter object "
            "itself, so that an optimizer can update it in place"
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


@exercise("03.1")
def test_sequential_names(nb):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    _same_walk(nb, model, what="Sequential(Linear, ReLU, Linear)")


@exercise("03.1")
def test_nested_modules_in_depth_first_order(nb):
    _same_walk(nb, _Net(), what="a nested model")


@exercise("03.1")
def test_prefix_is_prepended(nb):
    _same_walk(nb, _Net(), prefix="model", what="a nested model")


@exercise("03.1")
def test_shared_parameters_are_yielded_once(nb):
    tied = nn.Module()
    tied.embed = nn.Embedding(10, 4)
    tied.decode = nn.Linear(4, 10)
    tied.decode.weight = tied.embed.weight  # tied weights: one Parameter in two places
    _same_walk(nb, tied, what="a model with tied weights")
    shared = nn.Linear(3, 3)
    _same_walk(nb, nn.Sequential(shared, nn.Tanh(), shared), what="Sequential(lin, Tanh, lin)")


# --- 03.2 Linear ---------------------------------------------------------------------------
_LINEAR = ((nn.Linear, "reset_parameters"), (nn.Linear, "forward"), (F, "linear"))


def _linear(nb, *args, **kwargs):
    with _blocked(nb, "nn.Linear or F.linear", *_LINEAR):
        return nb.Linear(*args, **kwargs)


def _forward(nb, layer, x):
    with _blocked(nb, "nn.Linear or F.linear", *_LINEAR):
        return layer(x)


@exercise("03.2")
def test_parameters_are_registered(nb):
    layer = _linear(nb, 5, 3)
    assert isinstance(layer, nn.Module), "Linear should subclass minitorch.nn.Module"
    names = [name for name, _ in layer.named_parameters()]
    assert names == ["weight", "bias"], (
        f"Linear(5, 3) registered the parameters {names}, expected ['weight', 'bias'] "
        "(assign nn.Parameter objects to self.weight and self.bias)"
    )
    shapes = (tuple(layer.weight.shape), tuple(layer.bias.shape))
    assert shapes == ((3, 5), (3,)), (
        f"Linear(5, 3) has weight and bias shapes {shapes}, expected ((3, 5), (3,)) "
        "(the weight is (out_features, in_features))"
    )
    no_bias = _linear(nb, 5, 3, bias=False)
    names = [name for name, _ in no_bias.named_parameters()]
    assert names == ["weight"] and no_bias.bias is None, (
        f"Linear(5, 3, bias=False) registered {names} with bias {no_bias.bias!r}; "
        "expected only 'weight', and self.bias None"
    )


@exercise("03.2")
def test_forward_matches_f_linear(nb):
    minitorch.manual_seed(2)
    for bias in (True, False):
        layer = _linear(nb, 6, 4, bias=bias)
        for shape in ((5, 6), (2, 3, 6)):
            x = minitorch.randn(*shape)
            got = _forward(nb, layer, x)
            expected = F.linear(x, layer.weight, layer.bias)
            assert tuple(got.shape) == tuple(expected.shape), (
                f"Linear(6, 4, bias={bias}) on input {shape} gave shape {tuple(got.shape)}, "
                f"expected {tuple(expected.shape)}"
            )
            assert np.allclose(_values(got), _values(expected), atol=1e-5), (
                f"Linear(6, 4, bias={bias}) on input {shape} differs from x @ W.T + b"
            )


@exercise("03.2")
def test_init_is_uniform_within_one_over_sqrt_fan_in(nb):
    minitorch.manual_seed(3)
    fan_in = 64
    layer = _linear(nb, fan_in, 512)
    bound = 1 / math.sqrt(fan_in)
    for name in ("weight", "bias"):
        w = _values(getattr(layer, name))
        assert np.abs(w).max() <= bound + 1e-6, (
            f"Linear({fan_in}, 512).{name} has values up to {np.abs(w).max():.4f}, outside "
            f"U(-1/sqrt(fan_in), 1/sqrt(fan_in)) = U(-{bound:.4f}, {bound:.4f})"
        )
    w = _values(layer.weight)
    expected_std = bound / math.sqrt(3)  # the std of U(-b, b)
    assert abs(w.std() - expected_std) < 0.05 * expected_std and abs(w.mean()) < 0.01 * bound, (
        f"Linear({fan_in}, 512).weight has mean {w.mean():.4f} and std {w.std():.4f}; "
        f"U(-{bound:.4f}, {bound:.4f}) has mean 0 and std {expected_std:.4f}"
    )
    b = _values(layer.bias)
    assert b.std() > 0.3 * expected_std, (
        f"Linear({fan_in}, 512).bias has std {b.std():.4f}; draw it from "
        f"U(-{bound:.4f}, {bound:.4f}) too (PyTorch does not start biases at 0)"
    )


@exercise("03.2")
def test_init_uses_minitorch_random_numbers(nb):
    minitorch.manual_seed(11)
    first = _values(_linear(nb, 8, 4).weight)
    minitorch.manual_seed(11)
    again = _values(_linear(nb, 8, 4).weight)
    minitorch.manual_seed(12)
    other = _values(_linear(nb, 8, 4).weight)
    assert np.array_equal(first, again) and not np.array_equal(first, other), (
        "Linear's weights should come from minitorch's random generator, so that "
        "minitorch.manual_seed repeats them: fill them with minitorch.nn.init functions"
    )


@exercise("03.2")
def test_trains_a_tiny_regression(nb):
    minitorch.manual_seed(4)
    true_w = minitorch.tensor([[2.0, -1.0, 0.5], [0.0, 1.5, -2.0]])
    true_b = minitorch.tensor([0.3, -0.7])
    x = minitorch.randn(64, 3)
    y = x @ true_w.T + true_b
    layer = _linear(nb, 3, 2)
    opt = optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(300):
        opt.zero_grad()
        loss = F.mse_loss(_forward(nb, layer, x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-4, (
        f"after 300 SGD steps fitting y = x @ A.T + b, the loss is {loss.item():.4g}, "
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
)


def _cross_entropy(nb, logits, target):
    # errstate: an overflowing attempt fails the test, without numpy warnings on top
    with _blocked(nb, "cross_entropy/log_softmax", *_CROSS_ENTROPY), np.errstate(all="ignore"):
        loss = nb.cross_entropy(logits, target)
    assert isinstance(loss, minitorch.Tensor) and loss.numel() == 1, (
        f"cross_entropy returned {loss!r}; return a 1-element minitorch tensor (the mean loss), "
        "so that loss.backward() works"
    )
    return loss


def _check_loss(nb, logits, target, what):
    got = _cross_entropy(nb, logits, target)
    expected = F.cross_entropy(logits, target).item()
    value = got.item()
    assert math.isfinite(value), (
        f"cross_entropy({what}) is {value}; subtract each row's max before exp so nothing overflows"
    )
    assert math.isclose(value, expected, rel_tol=1e-5, abs_tol=1e-5), (
        f"cross_entropy({what}) = {value:.6g}, expected {expected:.6g} (mean over the batch of "
        "logsumexp(row) - row[target])"
    )
    return got


@exercise("03.3")
def test_matches_minitorch_on_random_logits(nb):
    minitorch.manual_seed(5)
    for n, c in ((1, 3), (8, 10), (64, 5)):
        logits = minitorch.randn(n, c) * 3
        target = minitorch.randint(0, c, (n,))
        _check_loss(nb, logits, target, f"random logits of shape ({n}, {c})")


@exercise("03.3")
def test_extreme_logits_stay_finite(nb):
    logits = minitorch.tensor([[1000.0, 0.0, -1000.0], [-1e4, 1e4, 0.0], [500.0, 500.0, 500.0]])
    for targets in ([0, 1, 2], [2, 0, 1]):
        _check_loss(nb, logits, minitorch.tensor(targets), f"logits of +-1e4, targets {targets}")


@exercise("03.3")
def test_gradient_through_the_engine_matches(nb):
    minitorch.manual_seed(6)
    for scale in (1.0, 300.0):
        data = minitorch.randn(16, 7) * scale
        target = minitorch.randint(0, 7, (16,))
        mine = data.clone().requires_grad_()
        loss = _cross_entropy(nb, mine, target)
        with np.errstate(all="ignore"):
            loss.backward()
        ref = data.clone().requires_grad_()
        F.cross_entropy(ref, target).backward()
        assert mine.grad is not None, (
            "cross_entropy(...).backward() gave the logits no gradient: build the loss from "
            "minitorch tensor ops (no .item(), .numpy() or detach on the logits)"
        )
        got, expected = _values(mine.grad), _values(ref.grad)
        assert np.isfinite(got).all() and np.allclose(got, expected, atol=1e-6), (
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


def _compare_trajectories(got, expected, what):
    for step, (mine, ref) in enumerate(zip(got, expected, strict=True), start=1):
        for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
            if not np.allclose(a, b, rtol=1e-5, atol=1e-6):
                raise AssertionError(
                    f"{what}: after step {step}, parameter {i} differs from minitorch.optim's "
                    f"by up to {np.abs(a - b).max():.3g}"
                )


def _sgd_blocked(nb):
    return _blocked(nb, "optim.SGD", (optim.SGD, "step"))


@exercise("03.4")
def test_plain_step_is_p_minus_lr_times_grad(nb):
    p = nn.Parameter(minitorch.tensor([1.0, -2.0, 3.0]))
    p.grad = minitorch.tensor([0.5, 0.5, -1.0])
    opt = nb.SGD([p], lr=0.1)
    with _sgd_blocked(nb):
        opt.step()
    got = _values(p)
    assert np.allclose(got, [0.95, -2.05, 3.1]), (
        f"one SGD step with lr=0.1 from [1, -2, 3] with grad [0.5, 0.5, -1] gave "
        f"{got.round(4).tolist()}, expected [0.95, -2.05, 3.1]"
    )
    assert p.is_leaf and p.grad_fn is None and p.requires_grad, (
        "after step() the parameter should still be a leaf that requires grad: update it in "
        "place under minitorch.no_grad()"
    )


@exercise("03.4")
def test_momentum_trajectory_matches_minitorch(nb):
    for lr, momentum in ((0.05, 0.9), (0.1, 0.0), (0.02, 0.5)):
        _, _, got = _trajectory(
            lambda ps, lr=lr, m=momentum: nb.SGD(ps, lr=lr, momentum=m),
            1,
            20,
            lambda: _sgd_blocked(nb),
        )
        _, _, expected = _trajectory(
            lambda ps, lr=lr, m=momentum: optim.SGD(ps, lr=lr, momentum=m), 1, 20
        )
        _compare_trajectories(got, expected, f"SGD(lr={lr}, momentum={momentum})")


@exercise("03.4")
def test_momentum_buffers_live_in_the_optimizer_state(nb):
    model, opt, _ = _trajectory(
        lambda ps: nb.SGD(ps, lr=0.05, momentum=0.9), 2, 3, lambda: _sgd_blocked(nb)
    )
    ref_model, ref_opt, _ = _trajectory(lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9), 2, 3)
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters(), strict=True):
        if not p.requires_grad:
            continue
        state = opt.state.get(p, {})
        assert "momentum_buffer" in state, (
            f"after 3 steps, optimizer.state[{name}] has keys {sorted(state)}; keep the "
            "momentum in optimizer.state[p]['momentum_buffer'] so that state_dict() saves it"
        )
        got, expected = (
            _values(state["momentum_buffer"]),
            _values(ref_opt.state[q]["momentum_buffer"]),
        )
        assert np.allclose(got, expected, rtol=1e-5, atol=1e-6), (
            f"after 3 steps the momentum buffer of {name} differs from minitorch.optim.SGD's"
        )


# --- 03.5 Adam -----------------------------------------------------------------------------
def _adam_blocked(nb):
    return _blocked(nb, "optim.Adam", (optim.Adam, "step"))


@exercise("03.5")
def test_first_step_moves_each_weight_by_lr(nb):
    start = np.array([0.5, -1.0, 2.0, 0.0, 3.0], dtype=np.float32)
    grad = np.array([1e-3, -0.5, 40.0, 2.0, -1e3], dtype=np.float32)
    p = nn.Parameter(minitorch.from_numpy(start.copy()))
    p.grad = minitorch.from_numpy(grad)
    opt = nb.Adam([p], lr=0.01)
    with _adam_blocked(nb):
        opt.step()
    moved = _values(p) - start
    expected = -0.01 * np.sign(grad).astype(np.float64)
    assert np.allclose(moved, expected, rtol=1e-3, atol=1e-6), (
        f"Adam's first step (lr=0.01) moved the weights by {moved.round(5).tolist()}; with bias "
        f"correction m_hat / sqrt(v_hat) = sign(g), so expected {expected.round(5).tolist()}"
    )
    assert p.is_leaf and p.grad_fn is None and p.requires_grad, (
        "after step() the parameter should still be a leaf that requires grad: update it in "
        "place under minitorch.no_grad()"
    )


@exercise("03.5")
def test_trajectory_matches_minitorch(nb):
    _, _, got = _trajectory(lambda ps: nb.Adam(ps, lr=0.01), 3, 20, lambda: _adam_blocked(nb))
    _, _, expected = _trajectory(lambda ps: optim.Adam(ps, lr=0.01), 3, 20)
    _compare_trajectories(got, expected, "Adam(lr=0.01)")


@exercise("03.5")
def test_custom_betas_and_eps(nb):
    def make(cls):
        return lambda ps: cls(ps, lr=0.05, betas=(0.8, 0.99), eps=1e-4)

    _, _, got = _trajectory(make(nb.Adam), 4, 20, lambda: _adam_blocked(nb))
    _, _, expected = _trajectory(make(optim.Adam), 4, 20)
    _compare_trajectories(got, expected, "Adam(lr=0.05, betas=(0.8, 0.99), eps=1e-4)")


@exercise("03.5")
def test_moments_live_in_the_optimizer_state(nb):
    model, opt, _ = _trajectory(lambda ps: nb.Adam(ps, lr=0.01), 5, 4, lambda: _adam_blocked(nb))
    ref_model, ref_opt, _ = _trajectory(lambda ps: optim.Adam(ps, lr=0.01), 5, 4)
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters(), strict=True):
        if not p.requires_grad:
            continue
        state, ref = opt.state.get(p, {}), ref_opt.state[q]
        missing = [k for k in ("step", "exp_avg", "exp_avg_sq") if k not in state]
        assert not missing, (
            f"optimizer.state[{name}] has keys {sorted(state)}; keep 'step', 'exp_avg' and "
            "'exp_avg_sq' there, so that state_dict() saves them and training can resume"
        )
        assert int(state["step"]) == ref["step"], (
            f"after 4 steps optimizer.state[{name}]['step'] is {state['step']}, expected 4"
        )
        for key in ("exp_avg", "exp_avg_sq"):
            assert np.allclose(_values(state[key]), _values(ref[key]), rtol=1e-5, atol=1e-8), (
                f"after 4 steps optimizer.state[{name}][{key!r}] differs from minitorch.optim's"
            )


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


@exercise("03.6")
def test_clips_like_minitorch(nb):
    for scale, max_norm in ((3.0, 1.0), (10.0, 2.5)):
        mine, ref = _model_with_grads(7, scale), _model_with_grads(7, scale)
        total = _clip(nb, list(mine.parameters()), max_norm)
        expected = nn.utils.clip_grad_norm_(list(ref.parameters()), max_norm).item()
        assert total is not None and math.isclose(float(total), expected, rel_tol=1e-5), (
            f"clip_grad_norm_ returned {total!r}, expected the total norm before clipping, "
            f"{expected:.6g}"
        )
        for i, (a, b) in enumerate(zip(_grads(mine), _grads(ref), strict=True)):
            assert (a is None) == (b is None), f"parameter {i}'s grad should stay None"
            if a is not None:
                assert np.allclose(a, b, rtol=1e-5, atol=1e-7), (
                    f"after clip_grad_norm_(..., max_norm={max_norm}) the grad of parameter {i} "
                    "differs from minitorch's: scale every gradient by max_norm / total_norm"
                )
        clipped = math.sqrt(sum(float((g**2).sum()) for g in _grads(mine) if g is not None))
        assert clipped <= max_norm * (1 + 1e-4), (
            f"after clipping to max_norm={max_norm} the total norm is still {clipped:.4f}"
        )


@exercise("03.6")
def test_no_change_below_max_norm(nb):
    model = _model_with_grads(8, 0.01)
    before = _grads(model)
    total = _clip(nb, list(model.parameters()), 10.0)
    expected = math.sqrt(
        sum(float((g.astype(np.float64) ** 2).sum()) for g in before if g is not None)
    )
    assert total is not None and math.isclose(float(total), expected, rel_tol=1e-4), (
        f"clip_grad_norm_ returned {total!r}, expected the total norm {expected:.6g}"
    )
    for i, (a, b) in enumerate(zip(_grads(model), before, strict=True)):
        if a is not None:
            assert np.allclose(a, b, rtol=1e-6, atol=0), (
                f"the total norm {expected:.3g} is below max_norm=10, but the grad of parameter "
                f"{i} changed; leave the gradients alone then"
            )


@exercise("03.6")
def test_accepts_a_generator_of_parameters(nb):
    mine, ref = _model_with_grads(9, 5.0), _model_with_grads(9, 5.0)
    total = _clip(nb, mine.parameters(), 1.0)  # a generator: it can be iterated only once
    nn.utils.clip_grad_norm_(ref.parameters(), 1.0)
    for i, (a, b) in enumerate(zip(_grads(mine), _grads(ref), strict=True)):
        if a is not None:
            assert np.allclose(a, b, rtol=1e-5, atol=1e-7), (
                f"clip_grad_norm_(model.parameters(), 1.0) did not clip parameter {i}'s grad "
                "correctly; parameters can be a generator, so make a list of it once, first"
            )
    assert total is not None and float(total) > 1.0, (
        f"clip_grad_norm_(model.parameters(), 1.0) returned {total!r}, expected the norm "
        "before clipping"
    )


@exercise("03.6")
def test_nan_gradient_propagates(nb):
    model = _model_with_grads(10, 1.0)
    params = list(model.parameters())
    params[0].grad[0, 0] = float("nan")
    total = _clip(nb, params, 1.0)
    assert total is not None and math.isnan(float(total)), (
        f"with a NaN in one gradient clip_grad_norm_ returned {total!r}; the total norm should "
        "be NaN, so that the training loop can see it and skip the step"
    )
    for i, g in enumerate(_grads(model)):
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
)


def _batches(nb, loader):
    """One epoch of ``loader``, each batch checked to be a pair of tensors."""
    with _blocked(nb, "DataLoader or default_collate", *_LOADER):
        batches = list(loader)
    for k, batch in enumerate(batches):
        assert len(batch) == 2, (
            f"batch {k} has {len(batch)} parts; a dataset of (x, y) pairs gives batches (xs, ys)"
        )
        xs, ys = batch
        assert isinstance(xs, minitorch.Tensor) and isinstance(ys, minitorch.Tensor), (
            f"batch {k} is ({type(xs).__name__}, {type(ys).__name__}); stack the samples' parts "
            "into tensors with minitorch.stack"
        )
    return batches


def _epoch(nb, loader):
    """One epoch: the batches as lists of sample numbers, checking their structure."""
    numbers = []
    for k, (xs, ys) in enumerate(_batches(nb, loader)):
        assert xs.ndim == 2 and xs.shape[1] == 2 and ys.ndim == 1 and len(xs) == len(ys), (
            f"batch {k} has shapes {tuple(xs.shape)} and {tuple(ys.shape)}; stacking n samples "
            "of shapes (2,) and () should give (n, 2) and (n,)"
        )
        assert ys.dtype == minitorch.int64, f"batch {k}'s labels are {ys.dtype}, expected int64"
        numbers.append([int(v) for v in ys.tolist()])
        assert xs[:, 0].tolist() == [float(v) for v in numbers[-1]], (
            f"batch {k}: the x and y parts of the samples were stacked in different orders"
        )
    return numbers


@exercise("03.7")
def test_sequential_batches_in_order(nb):
    loader = nb.DataLoader(_Numbered(10), batch_size=4)
    got = _epoch(nb, loader)
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], (
        f"DataLoader(10 samples, batch_size=4) gave batches {got}, expected "
        "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] (the last batch is smaller)"
    )
    assert len(loader) == 3, f"len(loader) is {len(loader)}, expected 3 batches"


@exercise("03.7")
def test_drop_last(nb):
    loader = nb.DataLoader(_Numbered(10), batch_size=4, drop_last=True)
    got = _epoch(nb, loader)
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7]], (
        f"DataLoader(10 samples, batch_size=4, drop_last=True) gave {got}, expected the two "
        "full batches only"
    )
    assert len(loader) == 2, f"len(loader) with drop_last=True is {len(loader)}, expected 2"
    even = nb.DataLoader(_Numbered(8), batch_size=4, drop_last=True)
    assert len(_epoch(nb, even)) == 2 == len(even), (
        "with 8 samples, batch_size=4 and drop_last=True there are 2 batches"
    )


@exercise("03.7")
def test_shuffle_covers_every_sample_once(nb):
    loader = nb.DataLoader(
        _Numbered(23), batch_size=5, shuffle=True, generator=minitorch.Generator(1)
    )
    for epoch in (1, 2):
        batches = _epoch(nb, loader)
        order = [i for batch in batches for i in batch]
        assert sorted(order) == list(range(23)), (
            f"epoch {epoch} of a shuffled loader visited {sorted(order)}; every sample "
            "0..22 should appear exactly once"
        )
        assert [len(b) for b in batches] == [5, 5, 5, 5, 3], (
            f"a shuffled loader gave batch sizes {[len(b) for b in batches]}, expected "
            "[5, 5, 5, 5, 3]"
        )
        assert order != list(range(23)), f"epoch {epoch} with shuffle=True was not shuffled"


@exercise("03.7")
def test_seeded_shuffles_repeat_and_differ_between_epochs(nb):
    def epochs(seed, n=2):
        loader = nb.DataLoader(
            _Numbered(30), batch_size=8, shuffle=True, generator=minitorch.Generator(seed)
        )
        return [[i for b in _epoch(nb, loader) for i in b] for _ in range(n)]

    first, second = epochs(5)
    assert first != second, (
        "two epochs of the same shuffled loader came in the same order; draw a new "
        "permutation each time __iter__ starts"
    )
    assert epochs(5) == [first, second], (
        "two loaders with minitorch.Generator(5) gave different orders; draw the permutation "
        "from the loader's generator (minitorch.randperm(n, generator=...))"
    )
    assert epochs(6, 1)[0] != first, (
        "loaders with Generator(5) and Generator(6) gave the same order; use the generator"
    )


@exercise("03.7")
def test_batches_the_digits(nb):
    digits = load_digits("train")
    loader = nb.DataLoader(digits, batch_size=64, shuffle=True, generator=minitorch.Generator(0))
    batches = _batches(nb, loader)
    shapes = [(tuple(x.shape), tuple(y.shape)) for x, y in batches]
    assert len(batches) == 23 == len(loader), (
        f"1437 digits in batches of 64 should give 23 batches, got {len(batches)} (and "
        f"len(loader) = {len(loader)})"
    )
    assert all(s == ((64, 1, 8, 8), (64,)) for s in shapes[:-1]), (
        f"digit batches should have shapes (64, 1, 8, 8) and (64,), got {shapes[0]}"
    )
    assert shapes[-1] == ((29, 1, 8, 8), (29,)), (
        f"the last digit batch should hold the remaining 29 images, got shapes {shapes[-1]}"
    )
    labels = np.concatenate([y.numpy() for _, y in batches])
    expected = np.bincount(digits.tensors[1].numpy(), minlength=10)
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


def _regression(seed, n_batches=4, batch=8):
    minitorch.manual_seed(seed)
    true_w = minitorch.randn(6, 3)
    batches = []
    for _ in range(n_batches):
        x = minitorch.randn(batch, 6)
        batches.append((x, (x @ true_w).tanh()))
    return batches


def _train(nb, *args):
    return nb.train(*args)


@exercise("03.8")
def test_returns_one_mean_loss_per_epoch(nb):
    batches = _regression(20)
    model = _mlp(20)
    loader = _FixedLoader(batches)
    losses = _train(nb, model, loader, optim.SGD(model.parameters(), lr=0.0), F.mse_loss, 3)
    assert isinstance(losses, (list, tuple)) and len(losses) == 3, (
        f"train(..., epochs=3) returned {losses!r}; expected a list of 3 losses, one per epoch"
    )
    assert all(type(v) is float for v in losses), (
        f"train returned {[type(v).__name__ for v in losses]}; return Python floats (use "
        "loss.item(): keeping loss tensors also keeps their whole graphs in memory)"
    )
    assert loader.epochs == 3, f"train(..., epochs=3) iterated the loader {loader.epochs} times"
    with minitorch.no_grad():
        expected = sum(F.mse_loss(model(x), y).item() for x, y in batches) / len(batches)
    for epoch, value in enumerate(losses, start=1):
        assert math.isclose(value, expected, rel_tol=1e-5), (
            f"with lr=0 the weights never change, so epoch {epoch}'s loss should be the mean "
            f"batch loss {expected:.6f}, got {value:.6f}"
        )


@exercise("03.8")
def test_matches_a_correct_loop(nb):
    batches = _regression(21)
    model, ref = _mlp(21), _mlp(21)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    losses = _train(nb, model, _FixedLoader(batches), opt, F.mse_loss, 2)
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
    for (name, p), q in zip(model.named_parameters(), ref.parameters(), strict=True):
        assert np.allclose(_values(p), _values(q), rtol=1e-5, atol=1e-6), (
            f"after 2 epochs {name} differs from a correct loop's; for each batch: "
            "zero_grad, forward, loss, backward, step"
        )
    assert np.allclose(losses, expected, rtol=1e-5), (
        f"train returned the epoch losses {np.round(losses, 5).tolist()}, expected "
        f"{np.round(expected, 5).tolist()} (the mean of each epoch's batch losses)"
    )


@exercise("03.8")
def test_puts_the_model_in_training_mode(nb):
    model = nn.Sequential(_mlp(22), nn.Dropout(0.1))
    modes = []
    model.register_forward_hook(lambda module, args, output: modes.append(module.training))
    model.eval()  # as an evaluation before this epoch would have left it
    _train(
        nb,
        model,
        _FixedLoader(_regression(22)),
        optim.SGD(model.parameters(), lr=0.01),
        F.mse_loss,
        1,
    )
    assert modes and all(modes), (
        "train() ran the model in eval mode; call model.train() at the start of each epoch"
    )


@exercise("03.8")
def test_learns_to_classify_digits(nb):
    digits = load_digits("train")
    subset = minitorch.data.Subset(digits, list(range(0, 1437, 2)))  # 719 fixed images
    minitorch.manual_seed(23)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    loader = minitorch.data.DataLoader(
        subset, batch_size=32, shuffle=True, generator=minitorch.Generator(23)
    )
    opt = optim.Adam(model.parameters(), lr=1e-2)
    losses = _train(nb, model, loader, opt, F.cross_entropy, 6)
    test_images, test_labels = load_digits("test").tensors
    model.eval()
    with minitorch.no_grad():
        acc = (model(test_images).argmax(dim=1) == test_labels).float().mean().item()
    assert losses[-1] < 0.5 * losses[0], (
        f"training on digits, the epoch loss went from {losses[0]:.3f} to {losses[-1]:.3f}; "
        "it should at least halve in 6 epochs"
    )
    assert acc >= 0.9, (
        f"after 6 epochs on 719 digits the test accuracy is {acc:.1%}, expected at least 90%"
    )
