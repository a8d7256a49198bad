"""Differential tests of layers, losses, optimizers and schedulers against PyTorch."""

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

RTOL, ATOL = 1e-4, 1e-5


def pair(array, requires_grad=True):
    """The same float32 values as a minitorch tensor and a torch tensor."""
    array = np.asarray(array, dtype=np.float32)
    mine = minitorch.tensor(array, requires_grad=requires_grad)
    theirs = torch.tensor(array, requires_grad=requires_grad)
    return mine, theirs


def close(mine, theirs, what="", rtol=RTOL, atol=ATOL):
    a = mine.detach().numpy() if hasattr(mine, "detach") else np.asarray(mine)
    b = theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def copy_params(mine: nn.Module, theirs: "torch.nn.Module"):
    """Give the minitorch module the torch module's parameters and buffers."""
    state = {k: minitorch.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    mine.load_state_dict(state)


def check_layer(mine, theirs, x_array, rng=None):
    copy_params(mine, theirs)
    x, tx = pair(x_array)
    out, tout = mine(x), theirs(tx)
    close(out, tout, f"{type(mine).__name__} forward")
    g = np.random.default_rng(0).standard_normal(tout.shape).astype(np.float32)
    out.backward(minitorch.tensor(g))
    tout.backward(torch.tensor(g))
    close(x.grad, tx.grad, f"{type(mine).__name__} input grad")
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        close(p.grad, tp.grad, f"{type(mine).__name__}.{name} grad")


RNG = np.random.default_rng(42)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.Linear(5, 3), (4, 5)),
        (lambda m: m.Linear(5, 3, bias=False), (2, 3, 5)),
        (lambda m: m.Conv2d(2, 3, 3), (2, 2, 7, 6)),
        (lambda m: m.Conv2d(2, 4, (3, 2), stride=2, padding=1), (2, 2, 7, 6)),
        (lambda m: m.Conv2d(1, 2, 3, padding=2, dilation=2), (1, 1, 8, 8)),
        (lambda m: m.MaxPool2d(2), (2, 3, 6, 6)),
        (lambda m: m.MaxPool2d(3, stride=2, padding=1), (1, 2, 7, 7)),
        (lambda m: m.AvgPool2d(2), (2, 3, 6, 4)),
        (lambda m: m.Flatten(), (2, 3, 4)),
        (lambda m: m.ReLU(), (3, 4)),
        (lambda m: m.GELU(), (3, 4)),
        (lambda m: m.GELU(approximate="tanh"), (3, 4)),
        (lambda m: m.Tanh(), (3, 4)),
        (lambda m: m.Sigmoid(), (3, 4)),
        (lambda m: m.LayerNorm(4), (3, 4)),
        (lambda m: m.LayerNorm((3, 4)), (2, 3, 4)),
        (lambda m: m.BatchNorm1d(4), (6, 4)),
        (lambda m: m.BatchNorm2d(3), (4, 3, 5, 5)),
    ],
)
def test_layer_matches_torch(make, shape):
    torch.manual_seed(0)
    theirs = make(torch.nn)
    mine = make(nn)
    check_layer(mine, theirs, RNG.standard_normal(shape))


def test_batchnorm_running_stats_and_eval_match_torch():
    theirs, mine = torch.nn.BatchNorm2d(3, momentum=0.2), nn.BatchNorm2d(3, momentum=0.2)
    copy_params(mine, theirs)
    for _ in range(3):
        x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32) * 3 + 1
        mine(minitorch.tensor(x))
        theirs(torch.tensor(x))
    close(mine.running_mean, theirs.running_mean, "running_mean")
    close(mine.running_var, theirs.running_var, "running_var")
    assert mine.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 3
    mine.eval(), theirs.eval()
    x = RNG.standard_normal((2, 3, 2, 2)).astype(np.float32)
    close(mine(minitorch.tensor(x)), theirs(torch.tensor(x)), "eval forward")


def test_embedding_matches_torch():
    theirs, mine = torch.nn.Embedding(10, 4, padding_idx=0), nn.Embedding(10, 4, padding_idx=0)
    copy_params(mine, theirs)
    idx = np.array([[1, 0, 3], [3, 9, 1]])
    out, tout = mine(minitorch.tensor(idx)), theirs(torch.tensor(idx))
    close(out, tout, "embedding forward")
    g = RNG.standard_normal(tout.shape).astype(np.float32)
    out.backward(minitorch.tensor(g))
    tout.backward(torch.tensor(g))
    close(mine.weight.grad, theirs.weight.grad, "embedding weight grad")


def test_dropout_train_and_eval():
    drop = nn.Dropout(0.25)
    x = minitorch.ones(2000)
    y = drop(x).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.75], rtol=1e-6)
    assert abs((y == 0).mean() - 0.25) < 0.04
    drop.eval()
    assert drop(x) is x


LOSS_CASES = [
    ("mse", lambda f, x, t, **kw: f.mse_loss(x, t, **kw), "float"),
    ("bce_logits", lambda f, x, t, **kw: f.binary_cross_entropy_with_logits(x, t, **kw), "prob"),
    ("ce", lambda f, x, t, **kw: f.cross_entropy(x, t, **kw), "index"),
    ("ce_probs", lambda f, x, t, **kw: f.cross_entropy(x, t, **kw), "probs"),
    ("nll", lambda f, x, t, **kw: f.nll_loss(f.log_softmax(x, 1), t, **kw), "index"),
]


def _targets(kind, shape):
    if kind == "float":
        return RNG.standard_normal(shape).astype(np.float32)
    if kind == "prob":
        return RNG.random(shape).astype(np.float32)
    if kind == "probs":
        p = RNG.random(shape).astype(np.float32)
        return p / p.sum(axis=1, keepdims=True)
    return RNG.integers(0, shape[1], (shape[0],) + shape[2:])


@pytest.mark.parametrize("name, loss, kind", LOSS_CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(name, loss, kind, reduction):
    shape = (6, 4)
    x, tx = pair(RNG.standard_normal(shape) * 3)
    t_array = _targets(kind, shape)
    t, tt = minitorch.tensor(t_array), torch.tensor(t_array)
    out = loss(F, x, t, reduction=reduction)
    tout = loss(torch.nn.functional, tx, tt, reduction=reduction)
    close(out, tout, f"{name} {reduction}")
    out.sum().backward()
    tout.sum().backward()
    close(x.grad, tx.grad, f"{name} {reduction} grad")


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(weight=[0.2, 1.0, 3.0, 0.5]),
        dict(ignore_index=2),
        dict(label_smoothing=0.1),
        dict(label_smoothing=0.2, ignore_index=1),
        dict(label_smoothing=0.1, ignore_index=-100, weight=[0.2, 1.0, 3.0, 0.5]),
        dict(label_smoothing=0.3, ignore_index=3, weight=[0.2, 1.0, 3.0, 0.5]),
    ],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_options_match_torch(kwargs, reduction):
    x, tx = pair(RNG.standard_normal((8, 4, 3)))
    target = RNG.integers(0, 4, (8, 3))
    target[0, 0] = kwargs.get("ignore_index", 0)
    mine_kw, torch_kw = dict(kwargs), dict(kwargs)
    if "weight" in kwargs:
        mine_kw["weight"] = minitorch.tensor(kwargs["weight"])
        torch_kw["weight"] = torch.tensor(kwargs["weight"])
    out = F.cross_entropy(x, minitorch.tensor(target), reduction=reduction, **mine_kw)
    tout = torch.nn.functional.cross_entropy(
        tx, torch.tensor(target), reduction=reduction, **torch_kw
    )
    assert np.isfinite(out.detach().numpy()).all(), "cross_entropy produced NaN/inf"
    close(out, tout, f"cross_entropy {kwargs} {reduction}")
    out.sum().backward()
    tout.sum().backward()
    close(x.grad, tx.grad, f"cross_entropy {kwargs} {reduction} grad")


def test_ignore_index_with_label_smoothing_has_no_nan_even_with_extreme_logits():
    x = minitorch.tensor([[1000.0, -1000.0, 0.0], [0.0, 1.0, 2.0]], requires_grad=True)
    loss = F.cross_entropy(x, minitorch.tensor([-100, 2]), label_smoothing=0.1)
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(x.grad.numpy()).all()


def _trajectory(make_opt_mine, make_opt_torch, steps=20):
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w, tw = pair(w0)
    opt, topt = make_opt_mine([w]), make_opt_torch([tw])
    for step in range(steps):
        for param, optimizer, xx, lib in (
            (w, opt, minitorch.tensor(x), minitorch),
            (tw, topt, torch.tensor(x), torch),
        ):
            optimizer.zero_grad()
            loss = (lib.tanh(xx @ param) ** 2).sum()
            loss.backward()
            optimizer.step()
        close(w, tw, f"step {step}", rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("SGD", dict(lr=0.05)),
        ("SGD", dict(lr=0.05, momentum=0.9)),
        ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
        ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
        ("Adam", dict(lr=0.01)),
        ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
        ("AdamW", dict(lr=0.01)),
        ("AdamW", dict(lr=0.01, weight_decay=0.3, betas=(0.8, 0.99))),
    ],
)
def test_optimizer_trajectories_match_torch(name, kwargs):
    _trajectory(
        lambda ps: getattr(minitorch.optim, name)(ps, **kwargs),
        lambda ps: getattr(torch.optim, name)(ps, **kwargs),
    )


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("StepLR", dict(step_size=3, gamma=0.5)),
        ("CosineAnnealingLR", dict(T_max=10, eta_min=0.01)),
        ("LambdaLR", dict(lr_lambda=lambda e: 0.9**e)),
        ("LinearLR", dict(start_factor=0.1, total_iters=4)),
    ],
)
def test_schedulers_match_torch(name, kwargs):
    p, tp = pair([1.0])
    opt, topt = minitorch.optim.SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
    sched = getattr(minitorch.optim.lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    for epoch in range(12):
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-6), epoch
        opt.step(), topt.step()
        sched.step(), tsched.step()


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    grads = [RNG.standard_normal(s).astype(np.float32) * 5 for s in [(3, 4), (4,)]]
    mine = [minitorch.zeros(*g.shape, requires_grad=True) for g in grads]
    theirs = [torch.zeros(*g.shape, requires_grad=True) for g in grads]
    for p, tp, g in zip(mine, theirs, grads, strict=True):
        p.grad, tp.grad = minitorch.tensor(g), torch.tensor(g)
    total = nn.utils.clip_grad_norm_(mine, 1.0, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type)
    assert total.item() == pytest.approx(ttotal.item(), rel=1e-5)
    for p, tp in zip(mine, theirs, strict=True):
        close(p.grad, tp.grad, "clipped grad")


def test_clip_grad_norm_nonfinite():
    p = minitorch.zeros(2, requires_grad=True)
    p.grad = minitorch.tensor([float("nan"), 1.0])
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert np.isnan(total.item()) and np.isnan(p.grad.numpy()).all()
    p.grad = minitorch.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


def test_clip_grad_value():
    p = minitorch.zeros(3, requires_grad=True)
    p.grad = minitorch.tensor([-5.0, 0.5, 7.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]


def test_default_inits_have_pytorchs_bounds():
    lin = nn.Linear(100, 50)
    bound = 1 / np.sqrt(100)
    w = lin.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    conv = nn.Conv2d(4, 8, 3)
    cbound = 1 / np.sqrt(4 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= cbound


def test_optimizer_state_dict_round_trip():
    w = minitorch.tensor([1.0, 2.0], requires_grad=True)
    opt = minitorch.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    w2 = minitorch.tensor([1.0, 2.0], requires_grad=True)
    opt2 = minitorch.optim.Adam([w2], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1
    assert opt2.state[w2]["step"] == 1
    np.testing.assert_array_equal(
        opt2.state[w2]["exp_avg"].numpy(), opt.state[w]["exp_avg"].numpy()
    )


def test_max_pool_ties_nan_and_double_backward_match_torch():
    x = np.zeros((1, 2, 4, 4), dtype=np.float32)  # every window tied: the first index wins
    x[0, 1, 0, 1] = np.nan  # a NaN propagates to its window's output
    x[0, 1, 3, 3] = 2.0
    mine, theirs = pair(x)
    out, tout = F.max_pool2d(mine, 2), torch.nn.functional.max_pool2d(theirs, 2)
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    g = RNG.standard_normal(tout.shape).astype(np.float32)
    out.backward(minitorch.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())
    # the backward is itself differentiable (its adjoint reads the winners back)
    y = minitorch.tensor(
        RNG.standard_normal((1, 1, 4, 6)), dtype=minitorch.float64, requires_grad=True
    )
    assert minitorch.autograd.gradgradcheck(lambda t: F.max_pool2d(t, 2), (y,))


def test_avg_pool_paths_match_torch():
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    for kernel, stride in [(2, 2), (3, 1)]:  # tiles (strided views) and overlapping (im2col)
        mine, theirs = pair(x)
        out = F.avg_pool2d(mine, kernel, stride=stride)
        tout = torch.nn.functional.avg_pool2d(theirs, kernel, stride=stride)
        close(out, tout, f"avg_pool2d kernel {kernel} stride {stride}")
        out.sum().backward()
        tout.sum().backward()
        close(mine.grad, theirs.grad, f"avg_pool2d kernel {kernel} stride {stride} grad")
