"""Differential tests of the optimizers real programs need (issue 40, round 2): Adadelta
over its hyper-parameters and LBFGS with and without its strong-Wolfe line search, step
by step against PyTorch, and their state dicts."""

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 1))
W0, B0 = RNG.standard_normal((3, 1)), RNG.standard_normal(1)


def problem(m):
    """A least-squares fit plus a bumpy term (so curvature varies), float64, for m."""
    w = m.tensor(W0.copy(), requires_grad=True)
    b = m.tensor(B0.copy(), requires_grad=True)
    x, y = m.tensor(X), m.tensor(Y)

    def loss_fn():
        pred = x @ w + b
        return ((pred - y) ** 2).mean() + 0.1 * (w**4).sum()

    return [w, b], loss_fn


def assert_params_close(mine, theirs, what, rtol=1e-9):
    for k, (p, tp) in enumerate(zip(mine, theirs, strict=True)):
        np.testing.assert_allclose(
            p.detach().numpy(), tp.detach().numpy(), rtol=rtol, atol=1e-12, err_msg=f"{what} p{k}"
        )


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"lr": 0.5, "rho": 0.5, "eps": 1e-3}, {"weight_decay": 0.1}, {"maximize": True},
     {"lr": 2.0, "weight_decay": 0.01, "maximize": True}],
)  # fmt: skip
def test_adadelta_steps_match_torch(kwargs):
    # catches: rho applied to the wrong average, eps outside the roots, the update's own
    # running average missing (then it is RMSprop), weight_decay or maximize ignored
    (params, loss_fn), (tparams, tloss_fn) = problem(mt), problem(torch)
    opt, topt = mt.optim.Adadelta(params, **kwargs), torch.optim.Adadelta(tparams, **kwargs)
    for step in range(4):
        for o, f in ((opt, loss_fn), (topt, tloss_fn)):
            o.zero_grad()
            f().backward()
            o.step()
        assert_params_close(params, tparams, f"Adadelta{kwargs} step {step}")
    assert opt.state_dict()["param_groups"][0]["rho"] == topt.state_dict()["param_groups"][0]["rho"]


def test_adadelta_closure_and_state_dict_round_trip():
    # catches: step(closure) refused or its loss not returned, state lost on reload
    (params, loss_fn), (tparams, tloss_fn) = problem(mt), problem(torch)
    opt, topt = mt.optim.Adadelta(params, lr=0.7), torch.optim.Adadelta(tparams, lr=0.7)

    def closure(o, f):
        def run():
            o.zero_grad()
            loss = f()
            loss.backward()
            return loss

        return run

    loss, tloss = opt.step(closure(opt, loss_fn)), topt.step(closure(topt, tloss_fn))
    assert abs(loss.item() - tloss.item()) < 1e-12
    again = mt.optim.Adadelta(params, lr=0.1)
    again.load_state_dict(opt.state_dict())
    again.step(closure(again, loss_fn))
    topt.step(closure(topt, tloss_fn))
    assert_params_close(params, tparams, "Adadelta after load_state_dict")
    with pytest.raises(ValueError):
        mt.optim.Adadelta(params, rho=1.5)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [100, 2])
def test_lbfgs_steps_match_torch(line_search, history_size):
    # catches: the two-loop recursion's order or signs wrong, the first step not scaled by
    # 1/|g|_1, the memory not dropping its oldest pair, the line search's bracketing or
    # zoom differing (different evaluations, different iterates), the first loss not returned
    (params, loss_fn), (tparams, tloss_fn) = problem(mt), problem(torch)
    kwargs = dict(lr=1, max_iter=5, history_size=history_size, line_search_fn=line_search)
    opt, topt = mt.optim.LBFGS(params, **kwargs), torch.optim.LBFGS(tparams, **kwargs)
    calls = {"mt": 0, "torch": 0}

    def closure(o, f, key):
        def run():
            calls[key] += 1
            o.zero_grad()
            loss = f()
            loss.backward()
            return loss

        return run

    for step in range(3):
        loss = opt.step(closure(opt, loss_fn, "mt"))
        tloss = topt.step(closure(topt, tloss_fn, "torch"))
        assert abs(loss.item() - tloss.item()) < 1e-9 * max(1.0, abs(tloss.item())), step
        assert_params_close(params, tparams, f"LBFGS {line_search} step {step}", rtol=1e-7)
    assert calls["mt"] == calls["torch"]
    state, tstate = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert (state["func_evals"], state["n_iter"]) == (tstate["func_evals"], tstate["n_iter"])
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])


def test_lbfgs_state_dict_resumes_the_same_run():
    # catches: flat state vectors refused by load_state_dict (they are not shaped as a
    # parameter), the memory not carried over (the resumed run would restart its history)
    (params, loss_fn), (tparams, tloss_fn) = problem(mt), problem(torch)

    def closure(o, f):
        def run():
            o.zero_grad()
            loss = f()
            loss.backward()
            return loss

        return run

    opt, topt = mt.optim.LBFGS(params, max_iter=3), torch.optim.LBFGS(tparams, max_iter=3)
    opt.step(closure(opt, loss_fn))
    topt.step(closure(topt, tloss_fn))
    resumed = mt.optim.LBFGS(params, max_iter=3)
    resumed.load_state_dict(opt.state_dict())
    resumed.step(closure(resumed, loss_fn))
    topt.step(closure(topt, tloss_fn))
    assert_params_close(params, tparams, "LBFGS resumed", rtol=1e-7)
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        mt.optim.LBFGS(params, line_search_fn="armijo")
    with pytest.raises(ValueError, match="parameter groups"):
        mt.optim.LBFGS([{"params": [params[0]]}, {"params": [params[1]]}])
