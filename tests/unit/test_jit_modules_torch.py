"""Traced and scripted modules as PyTorch's (issue 25 items 1 and 3), side by side with
torch: the hybrid of scripting and tracing keeps the scripted control flow, traced modules
have the original's submodule tree, ``jit.save``/``jit.load`` take paths and file objects,
``freeze``, ``optimize_for_inference`` and ``export`` behave as torch's."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")


def _models(T):
    """The same three modules written against minitorch or torch (``T``)."""
    nn = T.nn

    class Gate(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                y = x * 2
            else:
                y = x + 3
            return y

    class Hybrid(nn.Module):
        def __init__(self, gate):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.gate = gate

        def forward(self, x):
            return self.gate(self.fc(x)) + 1

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    return Gate, Hybrid, MLP


def _same_weights(mine, theirs):
    with torch.no_grad():
        for (name, p), (tname, q) in zip(
            mine.named_parameters(), theirs.named_parameters(), strict=True
        ):
            assert name == tname
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))


def _trace(T, model, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if T is torch:
            return torch.jit.trace(model, x, check_trace=False)
        return mt.jit.trace(model, x)


# catches: tracing a model that holds a scripted submodule baking in the branch the example
# took (a negative input gave [1, 1, 1, 1]; torch keeps the scripted if), and scripting such
# a model crashing with a GraphLintError
@pytest.mark.parametrize("how", ["trace", "script"])
def test_a_scripted_submodule_keeps_its_if_inside_a_trace_or_a_script(how):
    results = []
    for T in (mt, torch):
        Gate, Hybrid, _ = _models(T)
        T.manual_seed(0)
        model = Hybrid(T.jit.script(Gate()))
        with T.no_grad():
            model.fc.weight.copy_(T.eye(4))
            model.fc.bias.fill_(0.0)
        compiled = _trace(T, model, T.ones(4)) if how == "trace" else T.jit.script(model)
        results.append([compiled(s * T.ones(4)).tolist() for s in (1.0, -1.0)])
    assert results[0] == results[1] == [[3.0] * 4, [3.0] * 4]
    traced = _trace(mt, _models(mt)[1](mt.jit.script(_models(mt)[0]())), mt.ones(4))
    assert "If" in traced.graph.op_counts()


# catches: a traced module with only the submodules that hold parameters (ReLU missing),
# submodules of class Module instead of traced modules, the training flag not kept, a
# submodule call failing with "Module has no forward() method"
def test_a_traced_module_has_the_originals_submodule_tree():
    shapes = []
    for T in (mt, torch):
        MLP = _models(T)[2]
        model = MLP().eval()
        traced = _trace(T, model, T.ones(2, 4))
        assert [n for n, _ in traced.named_modules()] == ["", "fc1", "act", "fc2"]
        assert traced.fc1.original_name == "Linear" and traced.training is False
        assert traced.fc1.weight is model.fc1.weight  # the same Parameter, trained together
        shapes.append({k: tuple(v.shape) for k, v in traced.state_dict().items()})
        with pytest.raises(RuntimeError, match="Trace submodules cannot be called"):
            traced.fc1(T.ones(2, 4))
    assert shapes[0] == shapes[1]


# catches: jit.save missing, or only paths taken (torch takes file objects and paths; the
# loaded module has the submodule tree and runs without the Python class)
@pytest.mark.parametrize("where", ["bytesio", "str", "path", "open-file"])
def test_save_and_load_take_paths_and_file_objects(tmp_path, where):
    for T in (mt, torch):
        MLP = _models(T)[2]
        traced = _trace(T, MLP(), T.ones(2, 4))
        target = tmp_path / f"model_{T.__name__}.pt"
        if where == "bytesio":
            buffer = io.BytesIO()
            T.jit.save(traced, buffer)
            buffer.seek(0)
            loaded = T.jit.load(buffer)
        elif where == "open-file":
            with open(target, "wb") as f:
                T.jit.save(traced, f)
            with open(target, "rb") as f:
                loaded = T.jit.load(f)
        else:
            name = str(target) if where == "str" else target
            T.jit.save(traced, name)
            loaded = T.jit.load(name)
        x = T.arange(8.0).reshape(2, 4)
        np.testing.assert_allclose(loaded(x).detach().numpy(), traced(x).detach().numpy())
        assert [n for n, _ in loaded.named_modules()] == ["", "fc1", "act", "fc2"]
    with pytest.raises(TypeError, match="jit.save: expected a ScriptModule .* got MLP"):
        mt.jit.save(_models(mt)[2](), tmp_path / "plain.pt")


# catches: freeze / optimize_for_inference missing, or keeping the parameters, or accepting a
# module in training mode or a plain Module (torch refuses both)
def test_freeze_and_optimize_for_inference_as_torch():
    for T in (mt, torch):
        MLP = _models(T)[2]
        T.manual_seed(0)
        model = MLP()
        traced = _trace(T, model, T.ones(2, 4))
        with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
            T.jit.freeze(traced)
        with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule as input"):
            T.jit.freeze(model)
        with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
            T.jit.optimize_for_inference(model)
        frozen = T.jit.freeze(traced.eval())
        x = T.arange(8.0).reshape(2, 4)
        assert list(frozen.parameters()) == []
        np.testing.assert_allclose(
            frozen(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6, atol=1e-6
        )
        fresh = _trace(T, MLP(), T.ones(2, 4))
        fast = T.jit.optimize_for_inference(fresh)
        assert fresh.training is False and list(fast.parameters()) == []


# catches: @jit.export missing; a scripted module's eval() ignored; keyword and default
# arguments refused where TorchScript takes them
def test_export_eval_and_defaults_as_torchscript():
    results = []
    for T in (mt, torch):
        nn = T.nn

        class Model(nn.Module):
            def forward(self, x, n: int = 2):
                if self.training:
                    return x * n
                return x * 10

            @T.jit.export
            def triple(self, x):
                return x * 3

        scripted = T.jit.script(Model())
        one = T.ones(1)
        got = [scripted(one), scripted(one, n=5), scripted(x=one), scripted.triple(one)]
        scripted.eval()
        got.append(scripted(one))
        results.append([g.tolist() for g in got])
    assert results[0] == results[1]
