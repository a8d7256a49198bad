"""Differential tests against PyTorch of the convolution-family layers of issue 40:
ConvTranspose2d, Conv2d(groups=), PixelShuffle/PixelUnshuffle, GroupNorm (outputs and
gradients, torch's initialised weights loaded into ours) and Dropout2d (its statistics)."""

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn import functional as F

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

RNG = np.random.default_rng(11)


def both(shape, requires_grad=True):
    array = RNG.standard_normal(shape)
    return (
        mt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def close(mine, theirs, what, rtol=1e-7, atol=1e-9):
    a, b = mine.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def check_layer(name, args, kwargs, shape, **call):
    """Torch's layer and ours with its weights: output, input grad and parameter grads."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    mine = getattr(nn, name)(*args, **kwargs).to(mt.float64)
    assert list(mine.state_dict()) == list(theirs.state_dict()), f"{name}: parameter names"
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x, tx = both(shape)
    out, tout = mine(x, **call), theirs(tx, **call)
    what = f"{name}{args} {kwargs} on {shape}"
    close(out, tout, what)
    w = RNG.standard_normal(tuple(tout.shape))
    (out * mt.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    close(x.grad, tx.grad, f"{what}: input grad")
    for (pname, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        close(p.grad, tp.grad, f"{what}: grad of {pname}")
    return mine, theirs


CONV_TRANSPOSE = [
    ((2, 3, 3), dict(), (2, 2, 4, 5)),
    ((2, 3, 4), dict(stride=2, padding=1), (1, 2, 3, 3)),  # DCGAN's upsampling block
    ((2, 3, (3, 2)), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2)), (2, 2, 3, 4)),
    ((4, 6, 3), dict(groups=2, dilation=2, bias=False), (1, 4, 3, 3)),
    ((2, 2, 3), dict(stride=2, output_padding=1, dilation=2), (1, 2, 3, 2)),
    ((3, 2, 2), dict(stride=2), (3, 4, 4)),  # unbatched
]


@pytest.mark.parametrize(
    "args,kwargs,shape", CONV_TRANSPOSE, ids=[str(c[1]) for c in CONV_TRANSPOSE]
)
def test_conv_transpose2d_matches_torch(args, kwargs, shape):
    # catches: the weight read as (out, in) instead of (in, out/groups), overlapping windows
    # not summed, padding added instead of cropped, output_padding on the wrong side,
    # groups mixing channels, and dilation/stride swapped in the scatter
    check_layer("ConvTranspose2d", args, kwargs, shape)


def test_conv_transpose2d_output_size_and_errors():
    # catches: output_size not turned into the output_padding that gives it
    check_layer(
        "ConvTranspose2d", (2, 1, 3), dict(stride=2, padding=1), (1, 2, 3, 3), output_size=(6, 6)
    )
    layer = nn.ConvTranspose2d(2, 1, 3, stride=2)
    with pytest.raises(ValueError, match="valid sizes range from 7 to 8"):
        layer(mt.zeros(1, 2, 3, 3), output_size=(10, 10))
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(mt.zeros(1, 2, 3, 3), mt.zeros(2, 1, 3, 3), output_padding=1)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.ConvTranspose2d(3, 2, 3, groups=2)
    with pytest.raises(RuntimeError, match="input has 3 channels"):
        layer(mt.zeros(1, 3, 3, 3))


@pytest.mark.parametrize(
    "args,kwargs",
    [((4, 6, 3), dict(groups=2, padding=1)), ((4, 4, 3), dict(groups=4, dilation=2, stride=2))],
)
def test_conv2d_groups_matches_torch(args, kwargs):
    # catches: groups seeing every input channel, and filters paired with the wrong group
    mine, _ = check_layer("Conv2d", args, kwargs, (2, 4, 7, 7))
    assert mine.weight.shape == (args[1], args[0] // kwargs["groups"], 3, 3)
    assert repr(mine) == repr(torch.nn.Conv2d(*args, **kwargs))


@pytest.mark.parametrize("factor,shape", [(2, (2, 8, 3, 2)), (3, (9, 2, 2)), (2, (1, 2, 4, 2, 3))])
def test_pixel_shuffle_round_trip_matches_torch(factor, shape):
    # catches: the r x r block laid out transposed (r_w before r_h) or taken from the wrong
    # channels; unshuffle is the exact inverse
    x, tx = both(shape)
    y, ty = F.pixel_shuffle(x, factor), torch.nn.functional.pixel_shuffle(tx, factor)
    close(y, ty, f"pixel_shuffle {shape}")
    z = nn.PixelUnshuffle(factor)(y)
    close(z, torch.nn.PixelUnshuffle(factor)(ty), f"pixel_unshuffle {tuple(ty.shape)}")
    close(z, x, "unshuffle(shuffle(x)) == x")
    with pytest.raises(RuntimeError, match="divisible"):
        F.pixel_shuffle(mt.zeros(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="divisible"):
        F.pixel_unshuffle(mt.zeros(1, 3, 3, 2), 2)


@pytest.mark.parametrize(
    "args,kwargs,shape",
    [
        ((2, 4), dict(), (3, 4, 2, 3)),
        ((4, 4), dict(eps=1e-3), (2, 4, 5)),
        ((1, 6), dict(affine=False), (2, 6)),
        ((3, 6), dict(bias=False), (2, 6, 2)),
    ],
)
def test_group_norm_matches_torch(args, kwargs, shape):
    # catches: statistics over the whole sample or per channel instead of per group, the
    # unbiased variance, and the affine scale applied per group instead of per channel
    mine, theirs = check_layer("GroupNorm", args, kwargs, shape)
    assert repr(mine) == repr(theirs)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)


def test_dropout2d_drops_whole_channels():
    # catches: single elements dropped (not whole maps), no 1/(1-p) scaling, dropping in
    # eval mode, and a gradient that does not follow the mask
    mt.manual_seed(0)
    layer = nn.Dropout2d(p=0.4)
    x = mt.ones(50, 40, 3, 3, requires_grad=True)
    y = layer(x)
    maps = y.detach().numpy().reshape(50, 40, 9)
    assert np.all(maps == maps[..., :1]), "a channel map was partly dropped"
    values = np.unique(maps)
    assert len(values) == 2 and values[0] == 0.0, values
    np.testing.assert_allclose(values[1], 1 / 0.6, rtol=1e-6)
    kept = (maps[..., 0] > 0).mean()
    assert 0.55 < kept < 0.65, kept
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    layer.eval()
    assert layer(x) is x
    assert repr(layer) == repr(torch.nn.Dropout2d(p=0.4))
    three_d = F.dropout2d(mt.ones(4, 30, 5), 0.5)  # PyTorch's (N, C, L) reading of 3-d input
    rows = three_d.numpy()
    assert np.all(rows == rows[..., :1])
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)


def test_conv2d_takes_an_unbatched_image():
    # catches: a (C, H, W) input refused or read as (N, C, H) as PyTorch's conv2d does not
    check_layer("Conv2d", (3, 2, 3), dict(padding=1, groups=1), (3, 5, 4))
    check_layer("Conv2d", (4, 2, 3), dict(groups=2), (4, 5, 4))
