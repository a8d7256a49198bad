"""Lazy modules (LazyLinear, LazyConv2d, LazyBatchNorm1d/2d) and init.orthogonal_,
against PyTorch (issue 40): the same lifecycle (uninitialised parameters, materialised by
the first call, the module becoming the plain layer), the same reprs and init ranges, and
an optimizer built before the first call stepping the real weights."""

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn, optim

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

LAZY = [
    ("LazyLinear", (3,), dict(), (2, 5)),
    ("LazyLinear", (3,), dict(bias=False), (2, 4, 5)),
    ("LazyConv2d", (4, 3), dict(padding=1, groups=2), (2, 2, 5, 5)),
    ("LazyConv2d", (4, 2), dict(), (3, 6, 6)),  # unbatched
    ("LazyBatchNorm1d", (), dict(), (4, 3)),
    ("LazyBatchNorm1d", (), dict(affine=False), (4, 3, 2)),
    ("LazyBatchNorm2d", (), dict(momentum=0.5), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=[f"{c[0]}{c[2]}" for c in LAZY])
def test_lazy_module_lifecycle_matches_torch(name, args, kwargs, shape):
    # catches: parameters sized before the input is seen, a module that stays "Lazy" after
    # its first call, a reset that skips the layer's own init, state names that differ from
    # the plain layer's, and a result that differs from the plain layer with these weights
    mine, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(mine) == repr(theirs)
    assert mine.has_uninitialized_params() and theirs.has_uninitialized_params()
    kinds = [type(p).__name__ for p in mine.parameters()]
    assert kinds == [type(p).__name__ for p in theirs.parameters()]
    x = np.random.default_rng(0).standard_normal(shape)
    out = mine(mt.tensor(x, dtype=mt.float32))
    tout = theirs(torch.tensor(x, dtype=torch.float32))
    assert type(mine).__name__ == type(theirs).__name__ == name.replace("Lazy", "")
    assert repr(mine) == repr(theirs)
    assert not any(isinstance(p, nn.parameter.UninitializedParameter) for p in mine.parameters())
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert tuple(mine.state_dict()[key].shape) == tuple(value.shape), key
    if "BatchNorm" in name:  # no weights drawn: the outputs and running stats must agree
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-5)
        for key in ("running_mean", "running_var") if mine.track_running_stats else ():
            np.testing.assert_allclose(
                mine.state_dict()[key].numpy(), theirs.state_dict()[key].numpy(), atol=1e-6
            )
    else:  # the default init's bound 1/sqrt(fan_in), and the same output with torch's weights
        fan_in = int(np.prod(mine.weight.shape[1:]))
        assert np.abs(mine.weight.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
        mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        np.testing.assert_allclose(
            mine(mt.tensor(x, dtype=mt.float32)).detach().numpy(),
            tout.detach().numpy(),
            atol=1e-5,
        )


@pytest.mark.parametrize("make_optimizer", [optim.SGD, optim.Adam])
def test_optimizer_built_before_the_first_call_steps_the_weights(make_optimizer):
    # catches: materialize replacing the Parameter object (the optimizer would keep the
    # empty one and never move the real weights)
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    opt = make_optimizer(model.parameters(), lr=0.1)
    held = [p for group in opt.param_groups for p in group["params"]]
    x = mt.randn(8, 3)
    loss = (model(x) ** 2).mean()
    assert all(a is b for a, b in zip(held, model.parameters(), strict=True))
    before = [p.detach().clone() for p in model.parameters()]
    loss.backward()
    opt.step()
    assert all((p != b).any().item() for p, b in zip(model.parameters(), before, strict=True))


def test_state_dict_loads_into_lazy_modules_before_the_first_call():
    # catches: a checkpoint refused (size mismatch with the empty parameters) or copied
    # into tensors that keep their empty shape, nested lazy modules and buffers included
    theirs = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.LazyBatchNorm1d())
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    theirs(torch.tensor(x))
    theirs.eval()
    mine = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d())
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert not any(isinstance(p, nn.parameter.UninitializedParameter) for p in mine.parameters())
    mine.eval()
    np.testing.assert_allclose(
        mine(mt.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-5
    )
    assert [type(m).__name__ for m in mine] == ["Linear", "BatchNorm1d"]


@pytest.mark.parametrize("shape,gain", [((3, 5), 1.0), ((6, 2), 2.0), ((4, 2, 3), 0.5)])
def test_orthogonal_init_is_orthogonal_like_torch(shape, gain):
    # catches: a Q that is not orthogonal (R used, or the transpose for wide matrices
    # missed), the gain applied twice or not at all, trailing dims not flattened
    mine = nn.init.orthogonal_(mt.empty(*shape), gain=gain).numpy().reshape(shape[0], -1)
    theirs = torch.nn.init.orthogonal_(torch.empty(*shape), gain=gain).numpy().reshape(shape[0], -1)
    for w, who in ((mine, "minitorch"), (theirs, "torch")):
        small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, gain**2 * np.eye(len(small)), atol=1e-5, err_msg=who)
    assert not np.allclose(mine, theirs)  # (random: the property, not the values)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        nn.init.orthogonal_(mt.empty(3))
