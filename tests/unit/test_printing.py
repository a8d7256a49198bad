"""Printing tensors: the same text as PyTorch's repr, set_printoptions, and what repr reads."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import minitorch
from minitorch import printing

RNG = np.random.default_rng(0)
INF, NAN = float("inf"), float("nan")


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def default_options():
    """Every test starts and ends with the default options, in both libraries."""
    minitorch.set_printoptions(profile="default")
    yield
    minitorch.set_printoptions(profile="default")
    if sys.modules.get("torch") is not None:  # imported by a test (the torch fixture)
        sys.modules["torch"].set_printoptions(profile="default")


def assert_same_repr(torch, values, requires_grad: bool = False, **options) -> str:
    """repr of ``values`` in minitorch equals PyTorch's (dtype names aside); returns ours."""
    values = np.asarray(values)
    minitorch.set_printoptions(**options)
    torch.set_printoptions(**options)
    ours = minitorch.from_numpy(values.copy()).requires_grad_(requires_grad)
    theirs = torch.from_numpy(values.copy()).requires_grad_(requires_grad)
    text = repr(ours)
    assert text.replace("minitorch.", "torch.") == repr(theirs)
    assert str(ours) == text
    return text


# --- the same text as PyTorch, default options ------------------------------------------------
SMALL = {
    "float": [1.5, 2.25],
    "negative": [-1.0, 2.0, -3.5],
    "integer-valued": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "spread over 1000x": [1.0, 2000.0],
    "spread, not integer": [0.001, 10.5],
    "tiny": [1e-5, 1.0],
    "huge": [1e9, 2.0],
    "exponent of 3 digits": [1e-100, 1.0],
    "inf": [1.0, INF],
    "nan": [1.5, NAN],
    "all nan": [NAN, NAN],
    "-inf and zero": [-3.25, 0.0, -INF],
    "zeros": [0.0, 0.0],
    "negative zero": [-0.0, 1.0],
    "wide enough to wrap": list(RNG.standard_normal(30) * 1e5),
    "size-1 dims": [[[1.5], [2.5]]],
    "one element": [[0.1]],
}


@pytest.mark.parametrize("values", SMALL.values(), ids=SMALL.keys())
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floats_print_like_pytorch(torch, values, dtype):
    assert_same_repr(torch, np.array(values, dtype=dtype))


@pytest.mark.parametrize(
    "values",
    [
        np.array([1, -2, 300]),
        np.array([1, 2], dtype=np.int32),
        np.array([1, 2], dtype=np.uint8),
        np.array([True, False]),
        np.arange(30).reshape(3, 10),
        RNG.integers(0, 2, (4, 5)).astype(bool),
        np.array([1.5, 2.0], dtype=np.float16),
    ],
    ids=["int64", "int32", "uint8", "bool", "2-d int", "2-d bool", "float16"],
)
def test_other_dtypes_print_like_pytorch(torch, values):
    assert_same_repr(torch, values)


@pytest.mark.parametrize(
    "value", [np.float32(3.5), np.float32(-2.0), np.float32(NAN), np.int64(7), np.bool_(True)]
)
def test_zero_dim_prints_like_pytorch(torch, value):
    assert_same_repr(torch, np.array(value))


def test_leaf_suffix_wraps_like_pytorch(torch):
    for n in range(5, 10):  # the suffix fits on the last line, then no longer does
        assert_same_repr(torch, RNG.standard_normal(n).astype(np.float32), requires_grad=True)


def test_empty_tensors():
    assert repr(minitorch.zeros(0)) == "tensor([])"
    assert repr(minitorch.zeros(2, 0)) == "tensor([], size=(2, 0))"
    assert repr(minitorch.zeros(1, 0, 2, dtype=minitorch.float64)) == (
        "tensor([], size=(1, 0, 2), dtype=minitorch.float64)"
    )
    # PyTorch adds dtype=torch.int64 to an empty int64 tensor; minitorch does not (yet).
    assert repr(minitorch.zeros(0, dtype=minitorch.int64)) == "tensor([])"


def test_empty_float_tensors_print_like_pytorch(torch):
    for shape in [(0,), (2, 0), (0, 3)]:
        assert_same_repr(torch, np.zeros(shape, dtype=np.float32))


# --- summarised (more than 1000 elements) ------------------------------------------------------
LARGE = {
    "1-d int": np.arange(5000),
    "1-d float": RNG.standard_normal(5000).astype(np.float32),
    "2-d": RNG.standard_normal((40, 40)).astype(np.float32),
    "2-d, one dim short": RNG.standard_normal((200, 7)).astype(np.float32),
    "2-d, scientific": (RNG.standard_normal((7, 200)) * 1e-6).astype(np.float32),
    "3-d": RNG.standard_normal((12, 12, 12)).astype(np.float32),
    "3-d, size-1 dims": np.arange(2000.0).reshape(1, 1, 2000),
    "3-d, long first dim": np.arange(2000.0).reshape(2000, 1, 1),
    "4-d": RNG.standard_normal((8, 8, 8, 8)).astype(np.float32),
    "bool": RNG.integers(0, 2, (40, 40)).astype(bool),
    "negative ints": np.arange(-3000, 3000).reshape(60, 100),
}


@pytest.mark.parametrize("values", LARGE.values(), ids=LARGE.keys())
def test_summarised_tensors_print_like_pytorch(torch, values):
    text = assert_same_repr(torch, values)
    assert "..." in text


def test_format_is_chosen_from_the_shown_items_only(torch):
    ones = np.ones((100, 100), dtype=np.float32)
    ones[50, 50] = 0.5  # hidden: the shown items are all whole
    assert assert_same_repr(torch, ones).startswith("tensor([[1., 1., 1.,  ..., 1., 1., 1.],")
    spread = RNG.standard_normal(5000).astype(np.float32)
    spread[2000] = 1e9  # hidden: no scientific notation
    assert "e+" not in assert_same_repr(torch, spread)


def test_repr_formats_only_the_edge_items(monkeypatch):
    seen = []
    cells = printing._cells
    monkeypatch.setattr(printing, "_cells", lambda v, o: seen.append(v.shape) or cells(v, o))
    repr(minitorch.zeros(1000, 1000))
    repr(minitorch.zeros(1).expand(10**9))  # a stride-0 view: nothing to gather but 6 items
    repr(minitorch.zeros(10, 10, 10).transpose(0, 2)[::2])
    assert seen == [(6, 6), (6,), (5, 10, 10)]


# --- set_printoptions, like torch.set_printoptions ---------------------------------------------
OPTIONS = {
    "precision=2": {"precision": 2},
    "precision=0": {"precision": 0},
    "precision=8": {"precision": 8},
    "sci_mode=True": {"sci_mode": True},
    "sci_mode=False": {"sci_mode": False},
    "sci_mode=True, precision=1": {"sci_mode": True, "precision": 1},
    "threshold=10": {"threshold": 10},
    "edgeitems=1": {"threshold": 10, "edgeitems": 1},
    "edgeitems=0": {"threshold": 10, "edgeitems": 0},
    "linewidth=40": {"linewidth": 40},
    "linewidth=1": {"linewidth": 1},
    "profile=short": {"profile": "short"},
    "profile=full": {"profile": "full"},
    "profile=short, precision=6": {"profile": "short", "precision": 6},
}
VALUES = {
    "floats": RNG.standard_normal((4, 5)).astype(np.float32) * 3,
    "spread": np.array([1e-5, 1.0, -123.456], dtype=np.float32),
    "whole": np.array([1.0, -2.0, 300.0], dtype=np.float32),
    "zeros": np.zeros(3, dtype=np.float32),
    "inf and nan": np.array([0.25, INF, NAN], dtype=np.float32),
    "ints": np.arange(24).reshape(2, 3, 4),
    "0-d": np.array(0.123456789, dtype=np.float32),
    "long": RNG.standard_normal(2000).astype(np.float32),
    "3-d, long": np.arange(3000.0, dtype=np.float32).reshape(10, 15, 20),
}


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_printoptions_change_the_text_like_pytorch(torch, values, options):
    assert_same_repr(torch, values, **options)


def test_precision_and_sci_mode_change_the_text():
    x = minitorch.tensor([1.23456, 100.0])
    minitorch.set_printoptions(precision=2)
    assert repr(x) == "tensor([  1.23, 100.00])"
    minitorch.set_printoptions(precision=2, sci_mode=True)
    assert repr(x) == "tensor([1.23e+00, 1.00e+02])"
    minitorch.set_printoptions(precision=2)  # leaving out sci_mode resets it, as in PyTorch
    assert minitorch.get_printoptions()["sci_mode"] is None
    minitorch.set_printoptions(threshold=3, edgeitems=1)
    assert repr(minitorch.arange(10)) == "tensor([0,  ..., 9])"


def test_options_reset_sci_mode_like_pytorch(torch):
    values = np.array([1e-5, 1.0], dtype=np.float32)
    for lib in (minitorch, torch):
        lib.set_printoptions(sci_mode=False)
        lib.set_printoptions(precision=3)  # sci_mode back to None: scientific again
    assert repr(minitorch.from_numpy(values)) == repr(torch.from_numpy(values))
    assert "e-05" in repr(minitorch.from_numpy(values))


def test_get_printoptions_round_trip():
    defaults = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
    assert minitorch.get_printoptions() == {**defaults, "sci_mode": None}
    minitorch.set_printoptions(precision=6, threshold=50, edgeitems=2, linewidth=60, sci_mode=True)
    changed = minitorch.get_printoptions()
    assert changed == {
        "precision": 6,
        "threshold": 50,
        "edgeitems": 2,
        "linewidth": 60,
        "sci_mode": True,
    }
    text = repr(minitorch.arange(100.0))
    minitorch.set_printoptions(profile="default")
    assert minitorch.get_printoptions() == {**defaults, "sci_mode": None}
    minitorch.set_printoptions(**changed)
    assert minitorch.get_printoptions() == changed and repr(minitorch.arange(100.0)) == text
    minitorch.set_printoptions(profile="full")
    assert minitorch.get_printoptions()["threshold"] == float("inf")
    minitorch.set_printoptions(**minitorch.get_printoptions())  # inf is a valid threshold
    assert "..." not in repr(minitorch.arange(5000))


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"precision": -1}, ValueError, "precision must be >= 0; got -1"),
        ({"precision": 2.5}, TypeError, "precision must be an int; got 2.5"),
        ({"profile": "long"}, ValueError, "profile must be one of .*; got 'long'"),
        ({"profile": 3}, ValueError, "profile must be one of .*; got 3"),
        ({"threshold": "1000"}, TypeError, r"threshold must be an int \(or math.inf\); got '1000'"),
        ({"threshold": 10.5}, TypeError, "threshold must be an int .*; got 10.5"),
        ({"threshold": -1}, ValueError, "threshold must be >= 0; got -1"),
        ({"edgeitems": -2}, ValueError, "edgeitems must be >= 0; got -2"),
        ({"edgeitems": True}, TypeError, "edgeitems must be an int; got True"),
        ({"linewidth": 0}, ValueError, "linewidth must be >= 1; got 0"),
        ({"sci_mode": "yes"}, TypeError, "sci_mode must be True, False or None; got 'yes'"),
    ],
)
def test_bad_options_are_refused_and_change_nothing(options, error, message):
    minitorch.set_printoptions(precision=6)
    before = minitorch.get_printoptions()
    with pytest.raises(error, match="^set_printoptions: " + message):
        minitorch.set_printoptions(**{"linewidth": 50, **options})  # 50 is not kept either
    assert minitorch.get_printoptions() == before


# --- on the GPU ---------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_gpu_repr_gathers_the_edges_on_the_device():
    values = RNG.standard_normal((2000, 3000)).astype(np.float32)
    cpu = minitorch.from_numpy(values)
    gpu = cpu.to("cuda")
    assert repr(gpu) == repr(cpu)[:-1] + ", device='cuda:0')"
    shown = printing._edges(gpu._data, (True, True), 3)
    assert type(shown) is type(gpu._data) and shown.shape == (6, 6)  # still on the device
    np.testing.assert_array_equal(shown.get(), printing._edges(values, (True, True), 3))
    small = minitorch.tensor([1.5, -2.0], device="cuda")
    assert repr(small) == "tensor([ 1.5000, -2.0000], device='cuda:0')"
