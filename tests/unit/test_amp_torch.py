"""Chapter 04 against PyTorch: type promotion, autocast's output dtypes per op, and
GradScaler on the same gradient sequences (inf/NaN steps included)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
DTYPES += ["float16", "bfloat16", "float32", "float64"]


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


# --- type promotion --------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "div"])
def test_mixed_dtype_binary_ops_promote_like_torch(op):
    # catches: numpy's promotion leaking through (0-d operands, int with float, f16 with bf16)
    mismatches = []
    for a, b in itertools.product(DTYPES, DTYPES):
        for dims_a, dims_b in ((1, 1), (1, 0), (0, 1), (0, 0)):
            ta = torch.ones((3,) * dims_a, dtype=getattr(torch, a))
            tb = torch.ones((3,) * dims_b, dtype=getattr(torch, b))
            try:
                expected = _name(getattr(torch, op)(ta, tb).dtype)
            except RuntimeError:
                continue  # an op torch refuses (e.g. on bool) is not compared
            ma = mt.ones((3,) * dims_a, dtype=getattr(mt, a))
            mb = mt.ones((3,) * dims_b, dtype=getattr(mt, b))
            got = getattr(mt, op)(ma, mb).dtype.name
            if got != expected:
                mismatches.append(f"{a}[{dims_a}-d] {op} {b}[{dims_b}-d]: {got}, torch {expected}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("scalar", [True, 2, 2.5])
def test_python_numbers_promote_like_torch(scalar):
    for name in DTYPES:
        if name == "bool" and scalar is True:
            continue
        expected = _name((torch.ones(3, dtype=getattr(torch, name)) * scalar).dtype)
        got = (mt.ones(3, dtype=getattr(mt, name)) * scalar).dtype.name
        assert got == expected, f"{name} * {scalar!r}: {got}, torch {expected}"


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_matches_torch(a, b):
    expected = _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert mt.promote_types(getattr(mt, a), getattr(mt, b)).name == expected


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(name):
    ours, theirs = mt.finfo(getattr(mt, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field)), field


def test_bfloat16_rounds_like_torch():
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32) * 100
    ours = mt.tensor(values).bfloat16().float().numpy()
    theirs = torch.tensor(values).bfloat16().float().numpy()
    np.testing.assert_array_equal(ours, theirs)
    half = mt.tensor(values).half().float().numpy()
    np.testing.assert_array_equal(half, torch.tensor(values).half().float().numpy())


# --- autocast: output dtypes per op ----------------------------------------------------------
def _inputs(lib, low):
    gen = np.random.default_rng(1)
    arrays = {
        "x": gen.standard_normal((4, 8)).astype(np.float32),
        "w": gen.standard_normal((3, 8)).astype(np.float32),
        "img": gen.standard_normal((2, 3, 8, 8)).astype(np.float32),
        "k": gen.standard_normal((4, 3, 3, 3)).astype(np.float32),
    }
    t = {k: lib.tensor(v) for k, v in arrays.items()}
    t["t"] = lib.tensor([0, 1, 2, 1])
    t["xl"] = t["x"].to(low)
    t["x64"] = t["x"].double()
    return t


def _op_table(lib, fn, t):
    """The same calls in both libraries (``fn`` is F or torch.nn.functional)."""
    x, xl, w = t["x"], t["xl"], t["w"]
    return {
        "matmul": lambda: x @ w.T,
        "linear": lambda: fn.linear(x, w),
        "linear_low_input": lambda: fn.linear(xl, w),
        "conv2d": lambda: fn.conv2d(t["img"], t["k"]),
        "matmul_float64": lambda: t["x64"] @ t["x64"].T,
        "softmax": lambda: x.softmax(1),
        "log_softmax": lambda: x.log_softmax(1),
        "softmax_low": lambda: xl.softmax(1),
        "log_softmax_low": lambda: xl.log_softmax(1),
        "exp_low": lambda: xl.exp(),
        "log_low": lambda: xl.abs().log(),
        "sum_low": lambda: xl.sum(),
        "mean_low": lambda: xl.mean(),
        "pow_low": lambda: xl**2,
        "sqrt_low": lambda: xl.abs().sqrt(),
        "relu_low": lambda: xl.relu(),
        "tanh_low": lambda: xl.tanh(),
        "sigmoid_low": lambda: xl.sigmoid(),
        "cross_entropy_low": lambda: fn.cross_entropy(xl[:, :3], t["t"]),
        "nll_loss_low": lambda: fn.nll_loss(xl[:, :3], t["t"]),
        "mse_loss_low": lambda: fn.mse_loss(xl, xl * 2),
        "bce_with_logits_low": lambda: fn.binary_cross_entropy_with_logits(xl, xl.sigmoid()),
        "layer_norm_low": lambda: fn.layer_norm(xl, (8,)),
        "add_mixed": lambda: xl + x,
        "mul_mixed": lambda: xl * x,
        "div_mixed": lambda: xl / x,
        "sub_scalar_low": lambda: xl - 1.5,
        "cat_mixed": lambda: lib.cat([xl, x]),
        "stack_mixed": lambda: lib.stack([xl, x]),
        "where_mixed": lambda: lib.where(x > 0, xl, x),
        "maximum_mixed": lambda: lib.maximum(xl, x),
        "max_pool2d_low": lambda: fn.max_pool2d(t["img"].to(xl.dtype), 2),
        "avg_pool2d_low": lambda: fn.avg_pool2d(t["img"].to(xl.dtype), 2),
    }


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_autocast_output_dtypes_match_torch_on_the_cpu(low):
    # catches: an op in the wrong autocast list, losses left in low precision, float64 cast
    ours_t = _inputs(mt, getattr(mt, low))
    theirs_t = _inputs(torch, getattr(torch, low))
    with mt.autocast("cpu", dtype=getattr(mt, low)):
        ours = {k: f().dtype.name for k, f in _op_table(mt, F, ours_t).items()}
    with torch.autocast("cpu", dtype=getattr(torch, low)):
        theirs = {k: _name(f().dtype) for k, f in _op_table(torch, TF, theirs_t).items()}
    assert ours == theirs


def test_autocast_defaults_to_bfloat16_on_the_cpu_as_torch():
    with mt.autocast("cpu"), torch.autocast("cpu"):
        assert mt.amp.get_autocast_dtype("cpu").name == _name(torch.get_autocast_dtype("cpu"))
        assert mt.amp.is_autocast_enabled("cpu") == torch.is_autocast_enabled("cpu")


def test_autocast_gradients_match_torch():
    # catches: casts that are not differentiable, gradients arriving in low precision
    gen = np.random.default_rng(2)
    w1, w2 = gen.standard_normal((16, 8)) * 0.3, gen.standard_normal((4, 16)) * 0.3
    x, y = gen.standard_normal((6, 8)), np.array([0, 1, 2, 3, 0, 1])
    grads = []
    for lib, fn in ((mt, F), (torch, TF)):
        a = lib.tensor(w1.astype(np.float32), requires_grad=True)
        b = lib.tensor(w2.astype(np.float32), requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            h = fn.linear(lib.tensor(x.astype(np.float32)), a).relu()
            loss = fn.cross_entropy(fn.linear(h, b), lib.tensor(y))
        loss.backward()
        assert str(a.grad.dtype).endswith("float32")
        grads.append([a.grad.detach().numpy(), b.grad.detach().numpy(), loss.item()])
    for ours, theirs in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=0.05, atol=0.02)


# --- GradScaler: same gradients, same scales, same skips, same parameters --------------------
def _gradient_sequence(steps=24, seed=3):
    """(multiplier array, kind) per step; some steps hold inf or NaN."""
    gen = np.random.default_rng(seed)
    seq = []
    for i in range(steps):
        g = gen.standard_normal(5).astype(np.float32)
        kind = "inf" if i in (2, 3, 11) else "nan" if i in (7, 16) else "ok"
        if kind == "inf":
            g[1] = np.inf
        elif kind == "nan":
            g[3] = np.nan
        seq.append((g, kind))
    return seq


def _run_scaler(lib, seq, *, clip=False, accumulate=False, new_scale_at=None):
    p = lib.tensor(np.linspace(-1, 1, 5).astype(np.float32), requires_grad=True)
    q = lib.tensor(np.ones(3, dtype=np.float32), requires_grad=True)  # no gradient: skipped
    opt = lib.optim.SGD([p, q], lr=0.1, momentum=0.9)
    if lib is torch:
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
    else:
        scaler = mt.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
    scales, params = [], []
    for i, (g, _) in enumerate(seq):
        opt.zero_grad()
        parts = (0.5, 0.5) if accumulate else (1.0,)
        for part in parts:
            loss = (p * lib.tensor(g)).sum() * part
            scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            clip_fn = torch.nn.utils.clip_grad_norm_ if lib is torch else nn.utils.clip_grad_norm_
            with np.errstate(invalid="ignore"):
                clip_fn([p], 1.0)
        scaler.step(opt)
        scaler.update(new_scale=300.0 if i == new_scale_at else None)
        scales.append(scaler.get_scale())
        params.append(p.detach().numpy().copy())
    return scales, np.array(params), scaler.state_dict()


@pytest.mark.parametrize(
    "options",
    [{}, {"clip": True}, {"accumulate": True}, {"new_scale_at": 9}],
    ids=["plain", "unscale_then_clip", "accumulation", "update_new_scale"],
)
def test_grad_scaler_matches_torch_step_by_step(options):
    # catches: a wrong backoff/growth rule, a step taken on inf/NaN, a missed unscale
    seq = _gradient_sequence()
    ours = _run_scaler(mt, seq, **options)
    theirs = _run_scaler(torch, seq, **options)
    assert ours[0] == theirs[0], "the scale after each step differs"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-7)
    assert ours[2] == theirs[2]
    # a skipped step leaves the parameters as they were
    for i, (_, kind) in enumerate(seq):
        if kind != "ok" and i:
            np.testing.assert_array_equal(ours[1][i], ours[1][i - 1])


def test_grad_scaler_growth_stops_short_of_float32_overflow_as_torch():
    scales = []
    for lib, scaler_cls in ((mt, mt.amp.GradScaler), (torch, torch.amp.GradScaler)):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.0)
        scaler = scaler_cls("cpu", init_scale=2.0**125, growth_factor=4.0, growth_interval=1)
        seen = []
        for _ in range(3):
            opt.zero_grad()
            scaler.scale((p * 1e-30).sum()).backward()
            scaler.step(opt)
            scaler.update()
            seen.append(scaler.get_scale())
        scales.append(seen)
    assert scales[0] == scales[1]


def test_grad_scaler_errors_match_torch():
    for lib, scaler_cls in ((mt, mt.amp.GradScaler), (torch, torch.amp.GradScaler)):
        p = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = scaler_cls("cpu")
        with pytest.raises((RuntimeError, AssertionError), match="_scale is None"):
            scaler.step(opt)
        scaler.scale((p * 2).sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            scaler.unscale_(opt)
        scaler.update()
