"""Chapter 04's package: bfloat16 tensors, autocast's regions and cast cache, GradScaler's
bookkeeping, memory accounting, and an AMP training run that matches float32."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.amp import GradScaler, autocast, memory_report, update_scale
from minitorch.course.digits import train
from minitorch.function import register_apply_hook


def _casts_during(fn):
    seen = []

    def record(cls, args, kwargs, out):
        if cls.name == "to":
            seen.append(args[1])

    with register_apply_hook(record):
        fn()
    return seen


# --- dtypes ----------------------------------------------------------------------------------
def test_bfloat16_tensors_are_floating_and_differentiable():
    x = mt.tensor([1.0, 2.0, 3.0], dtype=mt.bfloat16, requires_grad=True)
    assert x.is_floating_point() and x.dtype.itemsize == 2
    (x * x).sum().backward()
    assert x.grad.dtype is mt.bfloat16
    assert x.grad.float().tolist() == [2.0, 4.0, 6.0]
    assert "dtype=minitorch.bfloat16" in repr(x.detach())


def test_half_bfloat16_float_and_to_round_trip():
    x = mt.tensor([1.0, 1.0 + 2**-9, 70000.0])
    assert x.half().dtype is mt.float16 and x.bfloat16().dtype is mt.bfloat16
    with np.errstate(over="ignore"):
        assert x.half().float().tolist()[2] == float("inf")  # beyond float16's max
    assert x.bfloat16().float().tolist()[1] == 1.0  # 8 bits of mantissa lose 2**-9
    assert x.to(mt.bfloat16).to(mt.float32).dtype is mt.float32


def test_result_type_needs_an_operand():
    with pytest.raises(TypeError, match="at least one"):
        mt.result_type()


# --- autocast ----------------------------------------------------------------------------------
def test_autocast_regions_nest_and_restore():
    w = mt.randn(3, 4)
    with autocast("cpu", dtype=mt.float16):
        assert (w @ w.T).dtype is mt.float16
        with autocast("cpu", enabled=False):
            assert (w @ w.T).dtype is mt.float32
        with autocast("cpu", dtype=mt.bfloat16):
            assert (w @ w.T).dtype is mt.bfloat16
        assert (w @ w.T).dtype is mt.float16
    assert (w @ w.T).dtype is mt.float32
    assert not mt.amp.is_autocast_enabled("cpu")


def test_autocast_as_a_decorator_opens_a_fresh_region_per_call():
    @autocast("cpu", dtype=mt.float16)
    def product(a, depth=0):
        return product(a, depth - 1) if depth else a @ a.T

    assert product(mt.randn(2, 2), depth=2).dtype is mt.float16
    assert not mt.amp.is_autocast_enabled("cpu")


def test_autocast_is_thread_local():
    seen = {}
    with autocast("cpu", dtype=mt.float16):
        t = threading.Thread(
            target=lambda: seen.setdefault("dtype", (mt.ones(2, 2) @ mt.ones(2, 2)).dtype)
        )
        t.start()
        t.join()
    assert seen["dtype"] is mt.float32


def test_autocast_only_touches_its_device_type():
    with warnings.catch_warnings():  # (without a GPU the region is off, and says so)
        warnings.simplefilter("ignore", UserWarning)
        with autocast("cuda", dtype=mt.float16):  # on a CPU tensor this region changes nothing
            assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype is mt.float32


def test_gradients_reach_float32_master_weights():
    layer = nn.Linear(4, 3)
    with autocast("cpu", dtype=mt.float16):
        out = layer(mt.randn(5, 4))
    assert out.dtype is mt.float16
    out.float().sum().backward()
    assert layer.weight.grad.dtype is mt.float32 and layer.bias.grad.dtype is mt.float32


def test_a_weight_is_cast_once_per_region():
    layer = nn.Linear(4, 4)
    x = mt.randn(2, 4)

    def three_uses():
        with autocast("cpu", dtype=mt.float16):
            return layer(layer(layer(x)))

    casts = _casts_during(three_uses)
    # x once; weight and bias once each (cached); the float16 outputs need no cast
    assert casts == [mt.float16] * 3, casts
    three_uses().float().sum().backward()
    assert layer.weight.grad.dtype is mt.float32
    # the cache is emptied on leaving the region: a new region casts again
    assert len(_casts_during(three_uses)) == 3


def test_the_cache_is_not_used_under_no_grad_or_after_an_in_place_change():
    layer = nn.Linear(2, 2)
    x = mt.randn(1, 2)
    with autocast("cpu", dtype=mt.float16):
        with mt.no_grad():
            layer(x)
        out = layer(x)
        assert out.grad_fn is not None  # not a graph-less cast cached under no_grad
        with mt.no_grad():
            layer.weight.mul_(2.0)
        changed = layer(x)
    np.testing.assert_allclose(
        (changed - layer.bias.half()).float().detach().numpy(),
        2 * (out - layer.bias.half()).float().detach().numpy(),
        rtol=1e-2,
    )


def test_autocast_rejects_bad_settings():
    with pytest.raises(ValueError, match="float16 or minitorch.bfloat16"):
        autocast("cpu", dtype=mt.float64)
    with pytest.raises(ValueError, match="device_type"):
        autocast("tpu")
    if mt.cuda.is_available():
        with pytest.raises(ValueError, match="cupy has no bfloat16"):
            autocast("cuda", dtype=mt.bfloat16)
    else:  # as PyTorch: a CUDA region without CUDA is disabled, whatever its dtype
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast"):
            assert not autocast("cuda", dtype=mt.bfloat16).enabled


# --- GradScaler ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "state, found, expected",
    [
        ((1024.0, 0), True, (512.0, 0)),
        ((1024.0, 5), True, (512.0, 0)),
        ((1024.0, 1), False, (1024.0, 2)),
        ((1024.0, 2), False, (2048.0, 0)),  # growth_interval 3: the 3rd clean step grows
    ],
)
def test_update_scale_rule(state, found, expected):
    assert update_scale(*state, found, 2.0, 0.5, 3) == expected


def test_a_disabled_scaler_passes_everything_through():
    p = mt.tensor([1.0], requires_grad=True)
    opt = mt.optim.SGD([p], lr=1.0)
    scaler = GradScaler(enabled=False)
    loss = (p * 3).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [-2.0] and scaler.get_scale() == 1.0 and scaler.state_dict() == {}


def test_state_dict_round_trip_continues_the_same_schedule():
    p = mt.tensor([1.0], requires_grad=True)
    opt = mt.optim.SGD([p], lr=0.0)
    a = GradScaler(init_scale=8.0, growth_interval=2)
    for _ in range(3):
        opt.zero_grad()
        a.scale(p.sum()).backward()
        a.step(opt)
        a.update()
    b = GradScaler()
    b.load_state_dict(a.state_dict())
    assert (
        b.state_dict()
        == a.state_dict()
        == {
            "scale": 16.0,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 2,
            "_growth_tracker": 1,
        }
    )
    with pytest.raises(RuntimeError, match="empty"):
        GradScaler().load_state_dict({})


def test_scale_handles_lists_and_refuses_other_things():
    scaler = GradScaler(init_scale=4.0)
    a, b = scaler.scale([mt.tensor(1.0), mt.tensor(2.0)])
    assert (a.item(), b.item()) == (4.0, 8.0)
    with pytest.raises(ValueError, match="Tensor"):
        scaler.scale(3.0)


def test_float16_gradients_cannot_be_unscaled():
    p = mt.tensor([1.0], dtype=mt.float16, requires_grad=True)
    opt = mt.optim.SGD([p], lr=0.1)
    scaler = GradScaler()
    scaler.scale(p.sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(opt)


def test_bad_scaler_arguments_are_refused():
    with pytest.raises(ValueError, match="growth_factor"):
        GradScaler(growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor"):
        GradScaler(backoff_factor=1.5)
    with pytest.raises(ValueError, match="growth_interval"):
        GradScaler(growth_interval=0)


def test_every_write_of_a_scaler_step_goes_through_apply():
    p = mt.tensor([1.0, 2.0], requires_grad=True)
    opt = mt.optim.SGD([p], lr=0.1)
    scaler = GradScaler()
    scaler.scale((p * p).sum()).backward()
    names = []
    with register_apply_hook(lambda cls, args, kwargs, out: names.append(cls.name)):
        scaler.step(opt)
        scaler.update()
    assert "_foreach_non_finite" in names and "_foreach_mul_" in names
    assert "copy_" in names  # the scale is updated with fill_


# --- memory ----------------------------------------------------------------------------------
def test_amp_halves_the_saved_activations_of_a_wide_batch():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    x, y = mt.randn(512, 64), mt.randint(0, 10, (512,))
    fp32 = memory_report(model.parameters(), nn.functional.cross_entropy(model(x), y))
    with autocast("cpu", dtype=mt.float16):
        amp = memory_report(model.parameters(), nn.functional.cross_entropy(model(x), y))
    assert fp32.parameters == amp.parameters == sum(p.numel() * 4 for p in model.parameters())
    assert fp32.gradients == amp.gradients
    assert 0.45 < amp.activations / fp32.activations < 0.75
    assert amp.total < fp32.total


# --- training --------------------------------------------------------------------------------
def test_amp_training_reaches_float32_accuracy_on_the_digits():
    fp32 = train("fp32", epochs=10)
    for precision in ("fp16", "bf16"):
        amp = train(precision, epochs=10)
        gap = abs(amp.accuracy[-1] - fp32.accuracy[-1])
        assert gap <= 0.005, f"{precision}: {amp.accuracy[-1]:.4f} vs fp32 {fp32.accuracy[-1]:.4f}"


# catches: conv2d left in float32 under CPU autocast (its bias add promoted the lower-precision
# product back to float32); PyTorch runs the whole conv2d in the lower precision
@pytest.mark.parametrize("low", [mt.bfloat16, mt.float16])
def test_conv2d_with_a_bias_runs_in_the_lower_precision_under_cpu_autocast(low):
    x, w, b = mt.randn(1, 2, 5, 5), mt.randn(3, 2, 3, 3), mt.randn(3)
    with mt.autocast("cpu", dtype=low):
        assert mt.nn.functional.conv2d(x, w, b, padding=1).dtype is low
        assert mt.nn.Conv2d(2, 3, 3)(x).dtype is low
    assert mt.nn.functional.conv2d(x, w, b).dtype is mt.float32
