"""minitorch.jit against torch.jit: the same warnings, the same scripted control flow."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit

torch = pytest.importorskip("torch")


def _branchy(lib):
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    return f


def test_both_tracers_warn_about_the_data_dependent_branch_and_bake_it_in():
    x = np.ones(3, np.float32)
    with pytest.warns(torch.jit.TracerWarning):
        theirs = torch.jit.trace(_branchy(torch), torch.tensor(x))
    with pytest.warns(jit.TracerWarning):
        ours = jit.trace(_branchy(mt), mt.tensor(x))
    np.testing.assert_allclose(ours(mt.tensor(-x)).numpy(), theirs(torch.tensor(-x)).numpy())


def loop_and_branch(x, n: int):
    y = x
    for i in range(n):
        if y.sum() > 4:
            y = y - i
        else:
            y = y * 2
    return y


def test_scripted_control_flow_matches_torch_jit_script():
    theirs = torch.jit.script(loop_and_branch)
    ours = jit.script(loop_and_branch)
    rng = np.random.default_rng(0)
    for n in (0, 1, 4, 7):
        x = rng.standard_normal(3).astype(np.float32)
        np.testing.assert_allclose(
            ours(mt.tensor(x), n).numpy(), theirs(torch.tensor(x), n).numpy(), rtol=1e-6
        )


def test_traced_and_compiled_mlp_match_torch():
    mt.manual_seed(0)
    ours = mt.nn.Sequential(mt.nn.Linear(6, 8), mt.nn.Tanh(), mt.nn.Linear(8, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, q in zip(theirs.parameters(), ours.parameters(), strict=True):
            p.copy_(torch.tensor(q.detach().numpy()))
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    expected = theirs(torch.tensor(x)).detach().numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for compiled in (jit.optimize(jit.trace(ours, mt.tensor(x))), mt.compile(ours)):
            got = compiled(mt.tensor(x)).detach().numpy()
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
