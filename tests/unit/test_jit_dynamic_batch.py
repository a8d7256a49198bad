"""A saved trace whose code read the batch size runs other batch sizes (jit.dynamic_batch):
the sizes that move with the batch become graph ops; anything else keeps the traced sizes
and is refused clearly, never run wrong."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit, nn


def _reload(traced):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        jit.save(traced, buffer)
    buffer.seek(0)
    return jit.load(buffer)


def _cnn():
    mt.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 10)
    ).eval()


def test_a_saved_cnn_trace_runs_every_batch_size_as_eager_does() -> None:
    # catches: conv2d's padding constants and flatten's view holding the traced batch of 1,
    # so that the loaded module refuses (or miscomputes) a batch of 3 (PyTorch's runs it)
    model = _cnn()
    loaded = _reload(jit.trace(model, mt.zeros(1, 3, 4, 4)))
    assert "Tensor.size" in loaded.graph.op_counts()
    for batch in (1, 3, 7):
        x = mt.randn(batch, 3, 4, 4)
        with mt.no_grad():
            np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_sizes_that_move_with_the_batch_are_computed_from_it() -> None:
    # catches: a size that is a multiple of the batch (a*N + k) baked in, or an int argument
    # (x / x.shape[0]) kept at its traced value
    def fn(x):
        return x.reshape(x.shape[0] * 3, -1) / x.shape[0]

    loaded = _reload(jit.trace(fn, mt.ones(2, 3, 4)))
    x = mt.randn(5, 3, 4)
    np.testing.assert_allclose(loaded(x).numpy(), fn(x).numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * (1.0 / x.shape[0]),  # a float that moves
        lambda x: x + mt.arange(x.shape[0]).float().view(-1, 1),  # a tensor of moving values
        lambda x: x[: x.shape[0] // 2 + 1],  # a moving slice bound
        lambda x: x.view(x.shape[0] ** 2 // x.shape[0], -1)[:, : x.shape[0] ** 2 % 7],
    ],
    ids=["float", "arange", "slice", "nonlinear"],
)
def test_what_cannot_be_written_from_the_batch_keeps_the_traced_sizes(fn) -> None:
    # catches: a graph generalized although a constant moves in a way it can't express,
    # running other batches silently wrong; it must refuse them and run the traced one
    x = mt.randn(3, 4)
    loaded = _reload(jit.trace(fn, x))
    np.testing.assert_allclose(loaded(x).numpy(), fn(x).numpy(), rtol=1e-6)
    with pytest.raises(
        RuntimeError, match=r"holds the input sizes it was traced at, \(\(3, 4\),\)"
    ):
        loaded(mt.randn(5, 4))


def test_other_dims_than_the_batch_are_still_refused_by_name() -> None:
    # catches: a general batch taken for general shapes: a 5x4 image run through a graph
    # whose reshapes hold 4x4
    loaded = _reload(jit.trace(_cnn(), mt.zeros(1, 3, 4, 4)))
    with pytest.raises(RuntimeError, match=r"\(\(N, 3, 4, 4\),\) \(N: any batch size"):
        loaded(mt.zeros(2, 3, 5, 4))


def test_inputs_must_share_the_batch_they_are_given() -> None:
    # catches: two inputs of a batch-general graph given different batch sizes, the graph
    # reading the first input's
    def fn(x, y):
        return x.view(x.shape[0], -1) + y.view(y.shape[0], -1)

    loaded = _reload(jit.trace(fn, (mt.ones(2, 2, 2), mt.ones(2, 2, 2))))
    got = loaded(mt.ones(4, 2, 2), mt.ones(4, 2, 2))
    assert got.shape == (4, 4)
    with pytest.raises(RuntimeError, match="N: any batch size, the same for every input"):
        loaded(mt.ones(4, 2, 2), mt.ones(3, 2, 2))


def test_saving_probes_the_function_without_changing_its_state() -> None:
    # catches: the extra traces saving runs updating BatchNorm's running statistics or
    # drawing from the generator
    mt.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    traced = jit.trace(lambda x: bn(x).view(x.shape[0], -1), mt.randn(4, 3))
    mean, var = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    state = mt.random.default_generator.get_state()
    _reload(traced)
    np.testing.assert_array_equal(bn.running_mean.numpy(), mean)
    np.testing.assert_array_equal(bn.running_var.numpy(), var)
    assert np.array_equal(mt.random.default_generator.get_state(), state)
