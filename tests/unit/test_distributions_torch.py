"""Differential tests of torch.distributions' Categorical and Normal (issue 40: the
policy-gradient examples): log_prob, entropy and their gradients against PyTorch,
shapes of draws, their statistics, and the argument checks PyTorch makes."""

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def same(mine, theirs, what, atol=1e-9):
    a, b = np.asarray(mine.detach().numpy()), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=atol, err_msg=what)


def pair(values, dtype=np.float64):
    array = np.asarray(values, dtype=dtype)
    return mt.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


@pytest.mark.parametrize("kind", ["probs", "logits"])
@pytest.mark.parametrize(
    "params,value",
    [([0.2, 0.3, 0.5], [2, 0, 1, 1]), ([[0.2, 0.0, 0.8], [1.0, 1.0, 2.0]], [0, 2]),
     ([[1.0, 3.0], [2.0, 2.0]], [[1], [0]])],
)  # fmt: skip
def test_categorical_log_prob_and_entropy_match_torch(kind, params, value):
    # catches: probs not normalised, logits not normalised (log_softmax), a zero probability
    # making the entropy NaN (0 log 0 is 0), log_prob not broadcasting value with the batch,
    # gradients that do not reach the parameters
    p, tp = pair(params)
    dist = mt.distributions.Categorical(**{kind: p})
    tdist = torch.distributions.Categorical(**{kind: tp})
    v, tv = mt.tensor(value), torch.tensor(value)
    same(dist.log_prob(v), tdist.log_prob(tv), f"log_prob {kind}")
    same(dist.entropy(), tdist.entropy(), f"entropy {kind}")
    same(dist.probs, tdist.probs, "probs")
    if kind == "logits":
        same(dist.logits, tdist.logits, "logits")
    (dist.log_prob(v).sum() + dist.entropy().sum()).backward()
    (tdist.log_prob(tv).sum() + tdist.entropy().sum()).backward()
    same(p.grad, tp.grad, f"grad {kind}")
    assert tuple(dist.batch_shape) == tuple(tdist.batch_shape)
    assert tuple(dist.sample((5,)).shape) == tuple(tdist.sample((5,)).shape)
    assert tuple(dist.sample().shape) == tuple(tdist.sample().shape)


def test_categorical_samples_follow_probs_and_the_seed():
    # catches: draws ignoring probs, not int64, not repeating under manual_seed
    dist = mt.distributions.Categorical(probs=mt.tensor([0.1, 0.0, 0.9]))
    mt.manual_seed(1)
    draws = dist.sample((4000,))
    mt.manual_seed(1)
    assert draws.tolist() == dist.sample((4000,)).tolist()
    assert draws.dtype == mt.int64 and 1 not in draws.tolist()
    assert abs((draws == 2).float().mean().item() - 0.9) < 0.03


def test_categorical_refuses_what_torch_refuses():
    # catches: both or neither parameter accepted, negative probabilities accepted, a value
    # outside the support scored
    for m in (mt, torch):
        with pytest.raises(ValueError):
            m.distributions.Categorical(probs=m.tensor([0.5, 0.5]), logits=m.tensor([0.0, 0.0]))
        with pytest.raises(ValueError):
            m.distributions.Categorical()
        with pytest.raises(ValueError):
            m.distributions.Categorical(probs=m.tensor([-0.5, 1.5]))
        with pytest.raises(ValueError):
            m.distributions.Categorical(probs=m.tensor([0.5, 0.5])).log_prob(m.tensor(2))


@pytest.mark.parametrize(
    "loc,scale,value",
    [(0.0, 1.0, [0.5, -2.0]), ([0.0, 1.0], 2.0, [0.5, 0.5]), ([[1.0], [2.0]], [0.5, 3.0], 1.5)],
)
def test_normal_log_prob_entropy_and_rsample_match_torch(loc, scale, value):
    # catches: scale used as a variance, the log(sqrt(2 pi)) term missing, loc/scale/value
    # not broadcast, rsample cut from the graph (no reparameterised gradient)
    (mu, tmu), (s, ts) = pair(loc), pair(scale)
    dist, tdist = mt.distributions.Normal(mu, s), torch.distributions.Normal(tmu, ts)
    v, tv = mt.tensor(np.asarray(value)), torch.tensor(np.asarray(value))
    same(dist.log_prob(v), tdist.log_prob(tv), "log_prob")
    same(dist.entropy(), tdist.entropy(), "entropy")
    same(dist.cdf(v), tdist.cdf(tv), "cdf", atol=1e-6)  # (minitorch's erf: to ~1e-7)
    assert tuple(dist.batch_shape) == tuple(tdist.batch_shape)
    (dist.log_prob(v).sum() + dist.entropy().sum()).backward()
    (tdist.log_prob(tv).sum() + tdist.entropy().sum()).backward()
    same(mu.grad, tmu.grad, "d/dloc")
    same(s.grad, ts.grad, "d/dscale")
    draw = dist.rsample((3,))
    assert tuple(draw.shape) == tuple(tdist.rsample((3,)).shape)
    assert draw.requires_grad and not dist.sample((3,)).requires_grad
    mu.grad = s.grad = None
    draw.sum().backward()  # d/dloc of loc + scale * eps is 1 per draw
    np.testing.assert_allclose(
        mu.grad.numpy(), np.full(mu.shape, 3.0 * draw[0].numel() / mu.numel())
    )


def test_normal_samples_have_its_moments_and_bad_scale_is_refused():
    dist = mt.distributions.Normal(mt.tensor([2.0]), mt.tensor([3.0]))
    draws = dist.sample((20000,))
    assert abs(draws.mean().item() - 2.0) < 0.1 and abs(draws.std().item() - 3.0) < 0.1
    for m in (mt, torch):
        with pytest.raises(ValueError):
            m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0]))
        m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0]), validate_args=False)
