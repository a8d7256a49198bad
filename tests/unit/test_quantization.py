"""Dynamic quantization (``minitorch.quantization``): its arithmetic, its module, its state,
its errors, and differential tests against ``torch.ao.quantization`` (skipped without torch).

The differential tests expect PyTorch's own integers and scales exactly, and outputs within
PyTorch's float32 tolerance (``torch.testing.assert_close``): on x86 they agree bit for bit.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch import quantization as Q
from minitorch.quantization.linear_dynamic import choose_qparams

RNG = np.random.default_rng(25)
pytestmark = [  # torch.ao.quantization's own deprecation notices
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
    pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions.*deprecated"),
    pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max"),
]


def _torch():
    return pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def chapter03_mlp(lib):
    """The chapter 03 lesson's digits MLP (8x8 images, 10 classes)."""
    return lib.nn.Sequential(
        lib.nn.Flatten(), lib.nn.Linear(64, 256), lib.nn.BatchNorm1d(256), lib.nn.ReLU(),
        lib.nn.Dropout(0.3), lib.nn.Linear(256, 10),
    )  # fmt: skip


def digits_batch(n=64):
    """Inputs on the digits' scale: pixel values 0..16, as ``load_digits`` gives them."""
    return RNG.integers(0, 17, (n, 1, 8, 8)).astype(np.float32)


def numpy_of(t):
    return t.detach().numpy()


# --- the arithmetic, without torch -------------------------------------------------------
def test_quantize_dequantize_round_trip_is_within_half_a_step():
    x = minitorch.tensor(RNG.standard_normal((40, 30)).astype(np.float32) * 3)
    observer = Q.MinMaxObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric)
    observer(x)
    scale, zero_point = observer.calculate_qparams()
    q = Q.quantize_per_tensor(x, scale.item(), int(zero_point.item()), Q.qint8)
    assert q.int_repr().dtype is minitorch.int8 and q.qscheme() is Q.per_tensor_affine
    error = np.abs(numpy_of(q.dequantize()) - numpy_of(x)).max()
    assert error <= q.q_scale() / 2 + np.abs(numpy_of(x)).max() * 2**-23, (error, q.q_scale())
    # the largest magnitude lands on the edge of the int8 range: nothing of it is wasted
    assert np.abs(numpy_of(q.int_repr()).astype(int)).max() >= 127

    pc = Q.PerChannelMinMaxObserver(dtype=Q.qint8, qscheme=Q.per_channel_symmetric)
    rows = x * minitorch.tensor(np.logspace(-3, 0, 40, dtype=np.float32)).reshape(40, 1)
    pc(rows)
    scales, zero_points = pc.calculate_qparams()
    qc = Q.quantize_per_channel(rows, scales, zero_points, 0, Q.qint8)
    per_row = np.abs(numpy_of(qc.dequantize()) - numpy_of(rows)).max(axis=1)
    bound = numpy_of(qc.q_per_channel_scales()) / 2 + np.abs(numpy_of(rows)).max(axis=1) * 2**-23
    assert (per_row <= bound).all()
    # one scale for all rows would round the small rows away: per channel keeps them
    whole = Q.quantize_per_tensor(rows, float(scales.max().item()), 0, Q.qint8).dequantize()
    assert np.abs(numpy_of(whole) - numpy_of(rows))[0].max() > 10 * per_row[0]


def test_out_of_range_values_clamp_and_zero_is_exact():
    x = minitorch.tensor([-5.0, -0.25, 0.0, 0.1, 7.0])
    q = Q.quantize_per_tensor(x, 0.05, 10, Q.quint8)
    assert numpy_of(q.int_repr()).tolist() == [0, 5, 10, 12, 150]
    assert numpy_of(q.dequantize())[2] == 0.0


@pytest.mark.parametrize(
    "low, high", [(-3.0, 5.0), (0.5, 2.0), (-2.0, -1e-3), (0.0, 0.0), (-1e-7, 1e-7)]
)
def test_choose_qparams_covers_the_range_and_represents_zero(low, high):
    scale, zero_point = choose_qparams(low, high)  # reduce_range: uint8 [0, 127]
    assert 0 <= zero_point <= 127 and scale > 0
    lo, hi = min(low, 0.0), max(high, 0.0)
    if hi > lo and scale > 6.1e-5 * 1.0001:  # not raised to fbgemm's smallest scale
        assert abs((hi - lo) / 127 - scale) <= 1e-6 * scale
        assert -0.5 <= lo / scale + zero_point <= 0.5 and 126.5 <= hi / scale + zero_point <= 127.5


def exact_dynamic_linear(x, weight_q, w_scale, w_zero, bias):
    """The same maths with explicit int64 integers (no float BLAS): the reference."""
    scale, zero = choose_qparams(float(x.min()), float(x.max()))
    inverse = np.float32(1) / np.float32(scale)
    x_q = np.clip(np.rint((x.astype(np.float64) * inverse + zero).astype(np.float32)), 0, 255)
    acc = (x_q.astype(np.int64) - zero) @ (weight_q.astype(np.int64) - w_zero.reshape(-1, 1)).T
    multiplier = (np.float32(scale) * w_scale.astype(np.float32)).astype(np.float64)
    return (acc.astype(np.float32) * multiplier + (0 if bias is None else bias)).astype(np.float32)


@pytest.mark.parametrize("in_features, qconfig", [
    (48, Q.default_dynamic_qconfig), (300, Q.per_channel_dynamic_qconfig),
    (1500, Q.default_dynamic_qconfig),  # K * 128 * 128 > 2**24: the float64 path
    (1500, Q.QConfig(Q.default_dynamic_quant_observer, Q.PerChannelMinMaxObserver.with_args(
        dtype=Q.qint8, qscheme=Q.per_channel_affine))),
])  # fmt: skip
def test_dynamic_linear_equals_integer_arithmetic(in_features, qconfig):
    model = nn.Sequential(nn.Linear(in_features, 7))
    quantized = Q.quantize_dynamic(model, {nn.Linear: qconfig})
    layer = quantized[0]
    x = (RNG.standard_normal((5, in_features)) * 4 + 1).astype(np.float32)
    weight = layer.weight()
    per_channel = weight.qscheme().per_channel
    w_scale = weight.q_per_channel_scales() if per_channel else minitorch.tensor(weight.q_scale())
    w_zero = (
        weight.q_per_channel_zero_points()
        if per_channel
        else minitorch.tensor(weight.q_zero_point())
    )
    expected = exact_dynamic_linear(
        x, numpy_of(weight.int_repr()), numpy_of(w_scale), numpy_of(w_zero), numpy_of(layer.bias())
    )
    np.testing.assert_array_equal(numpy_of(quantized(minitorch.tensor(x))), expected)
    # and it stays close to the float layer: int8 weights, 7-bit activations
    with minitorch.no_grad():
        float_out = numpy_of(model(minitorch.tensor(x)))
    assert np.abs(expected - float_out).max() <= 0.03 * np.abs(float_out).max()


def test_the_largest_integer_sums_stay_exact():
    """Every product at its largest (127 * 127), 1500 of them: partial sums pass 2**24, where
    float32 stops holding every integer, so the matmul must switch to float64."""
    layer = nn.Linear(1500, 3)
    with minitorch.no_grad():
        layer.weight.fill_(0.5)
        layer.weight[1, ::7] = 0.49  # other integers than 127 in a row: odd sums too
    quantized = Q.quantize_dynamic(nn.Sequential(layer))[0]
    x = np.full((2, 1500), 2.0, dtype=np.float32)
    x[1, ::3] = 1.99
    weight = quantized.weight()
    expected = exact_dynamic_linear(
        x, numpy_of(weight.int_repr()), np.float32(weight.q_scale()), np.array(0),
        numpy_of(quantized.bias()),
    )  # fmt: skip
    assert numpy_of(weight.int_repr()).max() == 127
    np.testing.assert_array_equal(numpy_of(quantized(minitorch.tensor(x))), expected)


def test_quantize_dynamic_swaps_linears_in_a_copy_in_eval_mode():
    model = chapter03_mlp(minitorch)
    quantized = Q.quantize_dynamic(model, {nn.Linear}, dtype=Q.qint8)
    assert type(model[1]) is nn.Linear and model.training  # the original is untouched
    assert [type(m).__name__ for m in quantized] == [
        "Flatten", "Linear", "BatchNorm1d", "ReLU", "Dropout", "Linear"
    ]  # fmt: skip
    assert isinstance(quantized[1], Q.DynamicQuantizedLinear) and not quantized.training
    assert repr(quantized[1]) == (
        "DynamicQuantizedLinear(in_features=64, out_features=256, dtype=minitorch.qint8, "
        "qscheme=minitorch.per_tensor_affine)"
    )
    assert list(quantized.parameters()) == list(quantized[2].parameters())  # BatchNorm's only
    x = minitorch.tensor(digits_batch(8), requires_grad=True)
    out = quantized(x)
    assert out.shape == (8, 10) and not out.requires_grad  # inference only, as in PyTorch

    same = Q.quantize_dynamic(model, {nn.Linear: Q.per_channel_dynamic_qconfig}, inplace=True)
    assert same is model and "per_channel_affine" in repr(model[5])


def test_qconfig_spec_names_none_and_module_qconfig():
    model = nn.Sequential(
        nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)), nn.Linear(4, 2)
    )
    by_name = Q.quantize_dynamic(model, {"0"})
    assert [type(m).__name__ for m in by_name[0]] == ["Linear", "ReLU", "Linear"]
    assert isinstance(by_name[0][2], Q.DynamicQuantizedLinear) and type(by_name[1]) is nn.Linear
    skipped = Q.quantize_dynamic(model, {nn.Linear: Q.default_dynamic_qconfig, "0.2": None})
    assert type(skipped[0][2]) is nn.Linear and isinstance(skipped[0][0], Q.DynamicQuantizedLinear)
    model[1].qconfig = Q.per_channel_dynamic_qconfig  # a module's own qconfig wins
    mixed = Q.quantize_dynamic(model)
    assert "per_tensor" in repr(mixed[0][0]) and "per_channel" in repr(mixed[1])


def test_float16_weights():
    model = nn.Sequential(nn.Linear(16, 8))
    half = Q.quantize_dynamic(model, {nn.Linear}, dtype=minitorch.float16)
    assert repr(half[0]) == (
        "DynamicQuantizedLinear(in_features=16, out_features=8, dtype=minitorch.float16)"
    )
    assert half.state_dict()["0._packed_params.weight"].dtype is minitorch.float16
    x = minitorch.randn(3, 16)
    with minitorch.no_grad():
        np.testing.assert_allclose(numpy_of(half(x)), numpy_of(model(x)), rtol=1e-2, atol=1e-3)


def test_state_dict_save_load_round_trip(tmp_path):
    model = chapter03_mlp(minitorch).eval()
    for qconfig in (Q.default_dynamic_qconfig, Q.per_channel_dynamic_qconfig):
        quantized = Q.quantize_dynamic(model, {nn.Linear: qconfig})
        state = quantized.state_dict()
        assert state["1._packed_params.weight"].dtype is minitorch.int8
        path = tmp_path / "q.mt"
        minitorch.save(state, path)
        minitorch.save(model.state_dict(), tmp_path / "f.mt")
        ratio = (tmp_path / "f.mt").stat().st_size / path.stat().st_size
        assert ratio > 2.5, ratio  # int8 weights: about a quarter of their bytes
        fresh = Q.quantize_dynamic(chapter03_mlp(minitorch), {nn.Linear: qconfig})
        fresh.load_state_dict(minitorch.load(path))
        x = minitorch.tensor(digits_batch(16))
        np.testing.assert_array_equal(numpy_of(fresh(x)), numpy_of(quantized(x)))
    per_tensor = Q.quantize_dynamic(model).state_dict()
    with pytest.raises(RuntimeError, match="size mismatch for 1._packed_params.weight_scale"):
        Q.quantize_dynamic(model, {nn.Linear: Q.per_channel_dynamic_qconfig}).load_state_dict(
            per_tensor
        )


def test_trace_and_deepcopy_of_a_quantized_model():
    quantized = Q.quantize_dynamic(chapter03_mlp(minitorch).eval())
    x = minitorch.tensor(digits_batch(4))
    expected = numpy_of(quantized(x))
    traced = minitorch.jit.trace(quantized, x)
    assert "linear_dynamic" in str(traced.graph)
    other = minitorch.tensor(digits_batch(4))
    np.testing.assert_array_equal(numpy_of(traced(other)), numpy_of(quantized(other)))
    np.testing.assert_array_equal(numpy_of(copy.deepcopy(quantized)(x)), expected)


QUANTIZED = Q.quantize_dynamic
X64 = minitorch.randn(2, 64)
RANDN3 = minitorch.randn(3)


@pytest.mark.parametrize("call, error, message", [
    (lambda m: QUANTIZED(m, {nn.Linear}, dtype=Q.quint8), ValueError, "quint8"),
    (lambda m: QUANTIZED(m, {nn.Linear}, dtype=minitorch.int8), ValueError, "int8"),
    (lambda m: QUANTIZED(m, {nn.Flatten}), ValueError, "no dynamically quantized Flatten"),
    (lambda m: QUANTIZED(m, {"9"}), ValueError, "no submodule of that name"),
    (lambda m: QUANTIZED(m[1]), ValueError, "the model itself is an nn.Linear"),
    (lambda m: QUANTIZED(m, {minitorch.nn.functional.linear}), TypeError, "keys must be"),
    (lambda m: QUANTIZED(m, {nn.Linear: "qint8"}), TypeError, "must be a QConfig"),
    (lambda m: QUANTIZED(m)(X64.double()), RuntimeError, "float32 input"),
    (lambda m: QUANTIZED(m)[1](minitorch.randn(2, 7)), RuntimeError, "7 features"),
    (lambda m: QUANTIZED(m)[1](X64 * float("nan")), RuntimeError, "not finite"),
    (lambda m: QUANTIZED(m)(X64).sum().backward(), RuntimeError, "grad"),
    (lambda m: Q.quantize_per_tensor(RANDN3, 0.0, 0, Q.qint8), ValueError, "scale"),
    (lambda m: Q.quantize_per_tensor(RANDN3, 0.1, 200, Q.qint8), ValueError, "zero_point"),
    (lambda m: Q.quantize_per_tensor(RANDN3, 0.1, 0, minitorch.int8), RuntimeError, "qint8"),
    (lambda m: Q.quantize_per_tensor(RANDN3.double(), 0.1, 0, Q.qint8), RuntimeError, "float64"),
    (lambda m: Q.quantize_per_channel(minitorch.randn(3, 2), minitorch.ones(2),
                                      minitorch.zeros(2), 0, Q.qint8), ValueError, "3 scales"),
    (lambda m: Q.MinMaxObserver(dtype=minitorch.float32), ValueError, "float32"),
    (lambda m: Q.MinMaxObserver(qscheme=Q.per_channel_affine), NotImplementedError, "qscheme"),
    (lambda m: Q.QConfig(Q.MinMaxObserver(), None), ValueError, "observer instance"),
    (lambda m: QUANTIZED(m)[1].weight().q_per_channel_scales(), RuntimeError, "q_scale"),
])  # fmt: skip
def test_bad_input_is_named(call, error, message):
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    with pytest.raises(error, match=message):
        call(model)


# --- against PyTorch -------------------------------------------------------------------
def twins(torch, build):
    """``build(minitorch)`` and ``build(torch)`` with the same weights, in eval mode."""
    mine = build(minitorch).eval()
    theirs = build(torch).eval()
    theirs.load_state_dict({k: torch.tensor(numpy_of(v)) for k, v in mine.state_dict().items()})
    return mine, theirs


def torch_qconfigs(torch):
    """Each weight configuration as (torch's QConfig, minitorch's QConfig)."""
    TQ = torch.ao.quantization

    def pair(observer, **kwargs):
        theirs = {k: getattr(torch, v) for k, v in kwargs.items() if isinstance(v, str)}
        mine = {k: getattr(Q, v) for k, v in kwargs.items() if isinstance(v, str)}
        flags = {k: v for k, v in kwargs.items() if not isinstance(v, str)}
        return (
            TQ.QConfig(TQ.default_dynamic_quant_observer,
                       getattr(TQ, observer).with_args(**theirs, **flags)),
            Q.QConfig(Q.default_dynamic_quant_observer,
                      getattr(Q, observer).with_args(**mine, **flags)),
        )  # fmt: skip

    return {
        "per_tensor": (TQ.default_dynamic_qconfig, Q.default_dynamic_qconfig),
        "per_channel": (TQ.per_channel_dynamic_qconfig, Q.per_channel_dynamic_qconfig),
        "affine": pair("MinMaxObserver", dtype="qint8", qscheme="per_tensor_affine"),
        "per_channel_affine": pair(
            "PerChannelMinMaxObserver", dtype="qint8", qscheme="per_channel_affine"
        ),
        "reduce_range": pair(
            "MinMaxObserver", dtype="qint8", qscheme="per_tensor_symmetric", reduce_range=True
        ),
    }


def assert_same_weights(torch, theirs, mine, what):
    tw, mw = theirs.weight(), mine.weight()
    assert str(tw.qscheme()).replace("torch.", "") == mw.qscheme().name, what
    np.testing.assert_array_equal(numpy_of(mw.int_repr()), tw.int_repr().numpy(), err_msg=what)
    if tw.qscheme() == torch.per_channel_affine:
        np.testing.assert_array_equal(
            numpy_of(mw.q_per_channel_scales()), tw.q_per_channel_scales().numpy(), err_msg=what
        )
        np.testing.assert_array_equal(
            numpy_of(mw.q_per_channel_zero_points()), tw.q_per_channel_zero_points().numpy()
        )
    else:
        assert (mw.q_scale(), mw.q_zero_point()) == (tw.q_scale(), tw.q_zero_point()), what


@pytest.mark.parametrize("scheme", ["per_tensor", "per_channel"])
def test_chapter03_mlp_matches_torch(scheme):
    torch = _torch()
    minitorch.manual_seed(3)
    mine, theirs = twins(torch, chapter03_mlp)
    tq_config, mq_config = torch_qconfigs(torch)[scheme]
    tq = torch.ao.quantization.quantize_dynamic(
        theirs, {torch.nn.Linear: tq_config}, dtype=torch.qint8
    )
    mq = Q.quantize_dynamic(mine, {nn.Linear: mq_config}, dtype=Q.qint8)
    for i in (1, 5):
        assert repr(mq[i]) == repr(tq[i]).replace("torch.", "minitorch.")
        assert_same_weights(torch, tq[i], mq[i], f"layer {i}")
    x = digits_batch(64)
    torch.testing.assert_close(torch.tensor(numpy_of(mq(minitorch.tensor(x)))), tq(torch.tensor(x)))
    with torch.no_grad():  # and both are as close to the float model
        float_out = theirs(torch.tensor(x))
    assert (tq(torch.tensor(x)) - float_out).abs().max() < 0.05 * float_out.abs().max()


INPUTS = {
    "normal": lambda s: RNG.standard_normal(s) * 3,
    "positive": lambda s: np.abs(RNG.standard_normal(s)) + 0.5,
    "negative": lambda s: -np.abs(RNG.standard_normal(s)) - 0.5,
    "zeros": np.zeros,
    "tiny": lambda s: RNG.standard_normal(s) * 1e-6,
    "constant": lambda s: np.full(s, 3.0),
    "large": lambda s: RNG.standard_normal(s) * 1e4,
}


SCHEMES = ["per_tensor", "per_channel", "affine", "per_channel_affine", "reduce_range"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "in_features, out_features, bias", [(37, 19, True), (1100, 6, False), (1, 3, True)]
)
def test_random_linears_match_torch(scheme, in_features, out_features, bias):
    torch = _torch()
    gain = float(RNG.uniform(0.1, 10))

    def build(lib):
        model = lib.nn.Sequential(lib.nn.Linear(in_features, out_features, bias=bias))
        with lib.no_grad():
            model[0].weight.mul_(gain)
        return model

    mine, theirs = twins(torch, build)
    tq_config, mq_config = torch_qconfigs(torch)[scheme]
    tq = torch.ao.quantization.quantize_dynamic(theirs, {torch.nn.Linear: tq_config})
    mq = Q.quantize_dynamic(mine, {nn.Linear: mq_config})
    assert_same_weights(torch, tq[0], mq[0], scheme)
    for name, make in INPUTS.items():
        x = make((2, 3, in_features)).astype(np.float32)
        torch.testing.assert_close(
            torch.tensor(numpy_of(mq(minitorch.tensor(x)))), tq(torch.tensor(x)), msg=name
        )


def test_rounding_ties_match_torch():
    """Values exactly halfway between two steps, with odd zero points: where the order of
    rounding and adding the zero point shows."""
    torch = _torch()
    scales = (RNG.uniform(0.5, 1, 32) * 2.0 ** -RNG.integers(3, 9, 32)).astype(np.float32)
    zero_points = RNG.integers(-20, 20, 32) | 1
    x = ((RNG.integers(-100, 100, (32, 29)) + 0.5) * scales[:, None]).astype(np.float32)
    x = np.nextafter(x, x + RNG.choice([-1, 0, 1], x.shape).astype(np.float32))
    theirs = torch.quantize_per_channel(
        torch.tensor(x), torch.tensor(scales).double(), torch.tensor(zero_points), 0, torch.qint8
    )
    mine = Q.quantize_per_channel(
        minitorch.tensor(x), minitorch.tensor(scales), minitorch.tensor(zero_points), 0, Q.qint8
    )
    np.testing.assert_array_equal(numpy_of(mine.int_repr()), theirs.int_repr().numpy())
    for zero_point, dtype, qdtype in ((3, torch.qint8, Q.qint8), (131, torch.quint8, Q.quint8)):
        theirs = torch.quantize_per_tensor(torch.tensor(x), float(scales[0]), zero_point, dtype)
        mine = Q.quantize_per_tensor(minitorch.tensor(x), float(scales[0]), zero_point, qdtype)
        np.testing.assert_array_equal(numpy_of(mine.int_repr()), theirs.int_repr().numpy())
        torch.testing.assert_close(torch.tensor(numpy_of(mine.dequantize())), theirs.dequantize())
    # the same for activations, quantized inside the dynamic Linear
    mine_model, theirs_model = twins(torch, lambda lib: lib.nn.Sequential(lib.nn.Linear(29, 8)))
    tq = torch.ao.quantization.quantize_dynamic(theirs_model, {torch.nn.Linear})
    mq = Q.quantize_dynamic(mine_model)
    step, _ = choose_qparams(-2.0, 3.0)
    acts = np.clip(((RNG.integers(-60, 90, (40, 29)) + 0.5) * step).astype(np.float32), -2, 3)
    acts[0, :2] = (-2.0, 3.0)
    torch.testing.assert_close(
        torch.tensor(numpy_of(mq(minitorch.tensor(acts)))), tq(torch.tensor(acts)), rtol=0, atol=0
    )


@pytest.mark.parametrize("make", [
    lambda lib, q: lib.MinMaxObserver(dtype=q.quint8),
    lambda lib, q: lib.MinMaxObserver(dtype=q.qint8, qscheme=q.per_tensor_symmetric),
    lambda lib, q: lib.MinMaxObserver(dtype=q.quint8, qscheme=q.per_tensor_symmetric),
    lambda lib, q: lib.MinMaxObserver(dtype=q.quint8, reduce_range=True),
    lambda lib, q: lib.MinMaxObserver(dtype=q.qint8, quant_min=-15, quant_max=15),
    lambda lib, q: lib.MinMaxObserver(
        dtype=q.quint8, quant_min=0, quant_max=15, qscheme=q.per_tensor_symmetric
    ),
    lambda lib, q: lib.PerChannelMinMaxObserver(dtype=q.qint8, qscheme=q.per_channel_symmetric),
    lambda lib, q: lib.PerChannelMinMaxObserver(ch_axis=1, dtype=q.quint8),
])  # fmt: skip
def test_observers_match_torch(make):
    torch = _torch()
    TQ = torch.ao.quantization
    theirs = make(TQ, torch)
    mine = make(Q, Q)
    for _ in range(2):  # running min/max over two calls
        x = (RNG.standard_normal((6, 5, 4)) * 2 + RNG.uniform(-1, 3)).astype(np.float32)
        theirs(torch.tensor(x))
        mine(minitorch.tensor(x))
    (ts, tz), (ms, mz) = theirs.calculate_qparams(), mine.calculate_qparams()
    np.testing.assert_array_equal(numpy_of(ms), ts.numpy())
    np.testing.assert_array_equal(numpy_of(mz), tz.numpy())
    assert (mine.quant_min, mine.quant_max) == (theirs.quant_min, theirs.quant_max)


def test_float16_dynamic_matches_torch():
    torch = _torch()
    mine, theirs = twins(torch, lambda lib: lib.nn.Sequential(
        lib.nn.Linear(40, 12), lib.nn.ReLU(), lib.nn.Linear(12, 3)
    ))  # fmt: skip
    tq = torch.ao.quantization.quantize_dynamic(theirs, dtype=torch.float16)
    mq = Q.quantize_dynamic(mine, dtype=minitorch.float16)
    assert repr(mq) == repr(tq).replace("torch.", "minitorch.")
    x = RNG.standard_normal((9, 40)).astype(np.float32)
    with torch.no_grad(), minitorch.no_grad():
        torch.testing.assert_close(
            torch.tensor(numpy_of(mq(minitorch.tensor(x)))), tq(torch.tensor(x))
        )


def test_a_quantized_tensor_refuses_arithmetic_by_name():
    # catches: qt + 1 failing with Python's "unsupported operand type(s) for +" and
    # qt.sum() with a bare AttributeError (PyTorch refuses ops on quantized tensors by name)
    qt = Q.quantize_per_tensor(minitorch.ones(3), 0.1, 0, minitorch.qint8)
    for call, op in [
        (lambda: qt + 1, "add"),
        (lambda: 2 * qt, "mul"),
        (lambda: qt.sum(), "sum"),
        (lambda: qt[0], "getitem"),
    ]:
        with pytest.raises(RuntimeError, match=rf"^{op}: not supported on a quantized tensor"):
            call()
    assert (qt.dequantize() + 1).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(AttributeError):
        qt.not_a_tensor_method  # noqa: B018
