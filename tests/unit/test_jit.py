"""minitorch.jit: trace, script, the interpreter, passes, save/load, compile (chapter 05)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import minitorch as mt
from minitorch import jit, nn
from minitorch.jit import passes
from minitorch.nn import functional as F


# --- the chapter 03 models ----------------------------------------------------------------
class Leaky(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.out_weight = (mt.randn(10, 32) * 0.1).requires_grad_()

    def forward(self, x):
        return self.hidden(x.flatten(1)).relu() @ self.out_weight.T


def chapter3_models():
    mt.manual_seed(0)
    mlp_bn = nn.Sequential(
        nn.Flatten(), nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(32, 10),
    )  # fmt: skip
    tanh_mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.Tanh(), nn.Linear(16, 10))
    cnn = nn.Sequential(
        nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, kernel_size=3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 2 * 2, 10),
    )  # fmt: skip
    for m in (mlp_bn, cnn):  # give the running statistics non-trivial values
        with mt.no_grad():
            m(mt.randn(16, 1, 8, 8))
    return {"leaky": Leaky(), "mlp_bn": mlp_bn.eval(), "tanh_mlp": tanh_mlp, "cnn": cnn.eval()}


MODELS = chapter3_models()


def _grads(model, x):
    model.zero_grad()
    x = x.detach().requires_grad_()
    out = model(x)
    out.sum().backward()
    return out.detach().numpy().copy(), x.grad.numpy().copy()


def _param_grads(model, compiled, x):
    model.zero_grad()
    model(x).pow(2).sum().backward()
    eager = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.zero_grad()
    compiled(x).pow(2).sum().backward()
    return eager, {n: p.grad.numpy().copy() for n, p in model.named_parameters()}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("how", ["trace", "script", "optimized", "compile"])
def test_compiled_chapter3_models_match_eager(name, how):
    model = MODELS[name]
    mt.manual_seed(1)
    x = mt.randn(5, 1, 8, 8)
    if how == "trace":
        compiled = jit.trace(model, x)
    elif how == "script":
        compiled = jit.script(model)
    elif how == "optimized":
        compiled = jit.optimize(jit.trace(model, x))
    else:
        compiled = mt.compile(model)
    out_e, gx_e = _grads(model, x)
    out_c, gx_c = _grads(compiled, x)
    np.testing.assert_allclose(out_c, out_e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx_c, gx_e, rtol=1e-4, atol=1e-6)
    eager, got = _param_grads(model, compiled, x)
    for key in eager:
        np.testing.assert_allclose(got[key], eager[key], rtol=1e-4, atol=1e-6, err_msg=key)


# --- tracing --------------------------------------------------------------------------------
def branchy(x):
    if x.sum() > 0:  # the data-dependent line
        return x * 2
    return x - 1


def test_trace_warns_at_the_data_dependent_line():
    with pytest.warns(jit.TracerWarning, match="Python boolean") as record:
        traced = jit.trace(branchy, mt.ones(3))
    (w,) = [r for r in record if issubclass(r.category, jit.TracerWarning)]
    assert w.filename == __file__
    assert "if x.sum() > 0" in open(__file__).read().splitlines()[w.lineno - 1]
    # the trace baked in the branch it saw
    np.testing.assert_allclose(traced(-mt.ones(3)).numpy(), [-2, -2, -2])


def test_check_inputs_catches_a_branch_the_trace_baked_in():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        with pytest.raises(jit.TracingCheckError, match="Graphs differed"):
            jit.trace(branchy, mt.ones(3), check_inputs=[(-mt.ones(3),)])
        jit.trace(branchy, mt.ones(3), check_inputs=[(mt.ones(3) * 2,)])


def test_trace_records_get_attr_for_parameters_and_constants_for_captures():
    model = MODELS["leaky"]
    traced = jit.trace(model, mt.randn(2, 64))
    ops = [n.op for n in traced.graph.nodes]
    assert ops.count("get_attr") == 2 and ops.count("constant") == 1
    assert "%self.hidden.weight" in str(traced.graph)
    assert "def forward(self, x)" in traced.code
    assert dict(traced.named_parameters())["hidden.weight"] is model.hidden.weight


def test_trace_rejects_non_tensor_inputs_and_outputs():
    with pytest.raises(TypeError, match="example inputs must be tensors"):
        jit.trace(lambda x, n: x * n, (mt.ones(2), 3))
    with pytest.raises(TypeError, match="must return tensors"):
        jit.trace(lambda x: x.shape, mt.ones(2))


# --- the linter -------------------------------------------------------------------------------
def test_lint_finds_use_before_definition_and_double_definitions():
    g = jit.trace(lambda x: (x * 2).exp(), mt.ones(2)).graph
    jit.lint(g)
    g.nodes.reverse()  # exp now reads the mul's output before it exists
    with pytest.raises(jit.GraphLintError, match="not defined"):
        jit.lint(g)
    g.nodes.reverse()
    g.nodes[1].outputs[0] = g.nodes[0].outputs[0]
    assert any("more than once" in p for p in jit.lint.__globals__["problems"](g))


# --- passes -----------------------------------------------------------------------------------
def test_dce_cse_and_folding_do_what_they_say():
    c = mt.tensor([1.0, 2.0])

    def f(x):
        unused = x.exp()  # noqa: F841 - dead code
        a = x * 3
        b = x * 3  # the same as a
        k = (c + 1) * 2  # constants only
        return a + b + k

    x = mt.randn(2)
    g = jit.trace(f, x).graph
    assert g.op_counts()["exp"] == 1
    assert "exp" not in passes.eliminate_dead_code(g).op_counts()
    assert passes.eliminate_common_subexpressions(g).op_counts()["mul"] == 2  # one x*3 left
    folded = passes.fold_constants(g)
    assert folded.op_counts()["mul"] == 2 and folded.op_counts()["add"] == 2
    for p in (passes.eliminate_dead_code, passes.eliminate_common_subexpressions,
              passes.fold_constants, jit.fuse_elementwise, jit.optimize):  # fmt: skip
        out = jit.run_graph(p(g), [x])
        np.testing.assert_allclose(out.numpy(), f(x).numpy(), rtol=1e-6)


def test_folding_never_folds_through_a_tensor_that_requires_grad():
    w = mt.ones(2, requires_grad=True)
    g = jit.trace(lambda x: x * (w * 2), mt.ones(2)).graph
    assert passes.fold_constants(g).op_counts()["mul"] == 2


_UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "abs"]
_BINARY = ["add", "sub", "mul", "maximum"]


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.booleans()):
            steps.append(("unary", draw(st.sampled_from(_UNARY)), draw(st.integers(0, 20))))
        else:
            op = draw(st.sampled_from(_BINARY))
            steps.append(("binary", op, draw(st.integers(0, 20)), draw(st.integers(0, 20))))
    outputs = draw(st.lists(st.integers(0, 20), min_size=1, max_size=3))
    return steps, outputs


def _program(steps, outputs, bias):
    def f(x, y):
        values = [x, y, bias]
        for step in steps:
            pick = lambda i: values[i % len(values)]  # noqa: E731
            if step[0] == "unary":
                values.append(getattr(mt, step[1])(pick(step[2])))
            else:
                values.append(getattr(mt, step[1])(pick(step[2]), pick(step[3]) * 0.5))
            values.append(values[-1] * 1.0 if len(values) % 3 else values[-1])  # duplicates
        return tuple(values[i % len(values)] for i in outputs)

    return f


@settings(max_examples=25, deadline=None)
@given(programs(), st.sampled_from(["dce", "cse", "fold", "fuse", "all"]))
def test_passes_preserve_semantics_on_random_graphs(program, which):
    steps, outputs = program
    bias = mt.tensor([0.5, -0.25, 1.0])
    f = _program(steps, outputs, bias)
    x, y = mt.tensor([[0.3, -1.2, 2.0]]), mt.tensor([[1.5, 0.1, -0.7], [0.2, 0.4, -2.0]])
    g = jit.trace(f, (x, y)).graph
    p = {
        "dce": passes.eliminate_dead_code,
        "cse": passes.eliminate_common_subexpressions,
        "fold": passes.fold_constants,
        "fuse": jit.fuse_elementwise,
        "all": jit.optimize,
    }[which]
    new = p(g)
    jit.lint(new)
    assert len(new.nodes) <= len(g.nodes)
    for a, b in zip(jit.run_graph(new, [x, y]), f(x, y), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


@st.composite
def mixed_programs(draw):
    """Elementwise chains with reductions in between (a sum broadcast back): the graphs
    where fusing a node into the wrong group feeds a group's own result back into it."""
    steps = []
    for _ in range(draw(st.integers(2, 10))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce"]))
        a, b = draw(st.integers(0, 6)), draw(st.integers(0, 6))  # mostly early values, reused
        op = draw(st.sampled_from(_UNARY if kind == "unary" else _BINARY))
        steps.append((kind, op, a, b))
    return steps, draw(st.lists(st.integers(0, 30), min_size=1, max_size=2))


def _mixed_program(steps, outputs):
    def f(x):
        values = [x]
        for kind, op, a, b in steps:
            pick = lambda i: values[i % len(values)]  # noqa: E731
            if kind == "unary":
                values.append(getattr(mt, op)(pick(a)) * 0.5)
            elif kind == "binary":
                values.append(getattr(mt, op)(pick(a), pick(b)) * 0.5)
            else:
                values.append(pick(a).sum() * 0.01 + pick(b))  # a reduction, broadcast back
        return tuple(values[i % len(values)] for i in outputs)

    return f


# catches: fusion that fails ("a cycle") or changes the result on a graph eager runs, such
# as a = x*2; b = a.exp(); c = a.sum() + b; a * c (issue 19)
@settings(max_examples=150, deadline=None)
@given(mixed_programs())
@example(  # issue 19's graph: a = x*x; b = exp(a); c = sum(a) + b; a * c
    ([("binary", "mul", 0, 0), ("unary", "exp", 1, 0), ("reduce", "exp", 1, 2),
      ("binary", "mul", 1, 3)], [4])
)  # fmt: skip
def test_compile_with_fusion_matches_eager_forward_and_backward(program):
    f = _mixed_program(*program)
    x = mt.tensor([[0.3, -1.2, 2.0], [0.5, 0.25, -0.75]], dtype=mt.float64, requires_grad=True)
    compiled = mt.compile(f)
    got, want = compiled(x), f(x)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)
    grads = [mt.autograd.grad(sum(o.sum() for o in outs), [x]) for outs in (got, want)]
    np.testing.assert_allclose(grads[0][0].numpy(), grads[1][0].numpy(), rtol=1e-9, atol=1e-12)


def test_the_fusion_cycle_of_issue_19_is_gone():
    def f(x):
        a = x * 2
        b = a.exp()
        c = a.sum() + b
        return a * c

    x = mt.randn(3, 4, dtype=mt.float64)
    np.testing.assert_allclose(mt.compile(f)(x).numpy(), f(x).numpy(), rtol=1e-12)


class MLPBlock(nn.Module):
    """The elementwise-heavy block of the benchmark and the lesson."""

    def __init__(self, width=32):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x)), approximate="tanh"))


def test_fusion_reduces_node_count_and_keeps_outputs_and_gradients():
    mt.manual_seed(0)
    block = MLPBlock()
    x = mt.randn(8, 32)
    traced = jit.trace(block, x)
    fused = jit.optimize(traced)
    counts = fused.graph.op_counts()
    # LayerNorm (its two means included: row-local fusion) and the GELU chain
    assert counts["fused"] >= 2 and "mean" not in counts
    assert len(fused.graph.nodes) < len(traced.graph.nodes) - 10
    out_e, gx_e = _grads(block, x)
    out_f, gx_f = _grads(fused, x)
    np.testing.assert_allclose(out_f, out_e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx_f, gx_e, rtol=1e-4, atol=1e-6)


def test_fused_kernel_is_a_documented_list_of_elementwise_ops():
    g = jit.optimize(
        jit.trace(lambda x, y: (x * y + 1.0).tanh(), (mt.ones(2, 3), mt.ones(3))).graph
    )
    (node,) = [n for n in g.nodes if n.op == "fused"]
    k = node.target
    assert [op.op for op in k.ops] == ["mul", "add", "tanh"]
    assert k.ops[0].args == (("input", 0), ("input", 1)) and k.ops[1].args == (("op", 0), 1.0)
    assert k.outputs == (2,) and k.shape == (2, 3) and k.dtype == "float32"
    assert k.inputs == (("float32", (2, 3)), ("float32", (3,)))
    assert "out=" in k.numpy_source()


# --- the interpreter --------------------------------------------------------------------------
def test_interpreter_names_the_failing_node_and_its_line():
    traced = jit.trace(lambda x: x @ x, mt.ones(2, 2))
    with pytest.raises(jit.InterpreterError, match="node matmul .*test_jit.py"):
        traced(mt.ones(2, 3))


# --- save / load ------------------------------------------------------------------------------
def test_save_then_load_in_a_fresh_process_that_never_imports_the_model(tmp_path):
    model = MODELS["cnn"]
    x = mt.randn(3, 1, 8, 8)
    path = tmp_path / "cnn.mtjit"
    jit.optimize(jit.trace(model, x)).save(path)
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "y.npy", model(x).detach().numpy())
    code = textwrap.dedent(
        f"""
        import sys, numpy as np, minitorch as mt
        m = mt.jit.load({str(path)!r})
        y = m(mt.from_numpy(np.load({str(tmp_path / "x.npy")!r}))).detach().numpy()
        assert (y == np.load({str(tmp_path / "y.npy")!r})).all(), "outputs differ"
        assert not any("test_jit" in k for k in sys.modules)
        print("ok", sorted(n for n, _ in m.named_parameters())[:2])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "ok ['0.bias', '0.weight']" in done.stdout


def test_scripted_control_flow_survives_save_and_load(tmp_path):
    def f(x, n: int):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        for i in range(n):
            y = y + i
        return y

    s = jit.script(f)
    s.save(tmp_path / "f.mtjit")
    loaded = jit.load(tmp_path / "f.mtjit")
    for sign in (1.0, -1.0):
        x = mt.tensor([1.0, 2.0]) * sign
        np.testing.assert_allclose(loaded(x, 3).numpy(), f(x, 3).numpy())


def test_damaged_files_give_clear_errors(tmp_path):
    path = tmp_path / "m.mtjit"
    jit.trace(MODELS["tanh_mlp"], mt.randn(2, 64)).save(path)
    data = path.read_bytes()
    (tmp_path / "cut").write_bytes(data[: len(data) // 2])
    with pytest.raises(mt.SerializationError, match="truncated"):
        jit.load(tmp_path / "cut")
    flipped = bytearray(data)
    flipped[len(data) - 40] ^= 0xFF
    (tmp_path / "flip").write_bytes(bytes(flipped))
    with pytest.raises(mt.SerializationError, match="corrupt"):
        jit.load(tmp_path / "flip")
    mt.save({"weight": mt.ones(2)}, tmp_path / "ckpt")
    with pytest.raises(jit.JitLoadError, match="not a saved ScriptModule"):
        jit.load(tmp_path / "ckpt")
    obj = mt.load(path)
    obj["graph"]["nodes"][0]["op"] = "os.system"
    mt.save(obj, tmp_path / "evil")
    with pytest.raises(jit.JitLoadError, match="unknown op 'os.system'"):
        jit.load(tmp_path / "evil")
    obj = mt.load(path)
    obj["graph"]["outputs"] = ["nowhere"]
    mt.save(obj, tmp_path / "dangling")
    with pytest.raises(jit.JitLoadError, match="nowhere"):
        jit.load(tmp_path / "dangling")


def test_saving_a_graph_with_a_custom_function_is_refused(tmp_path):
    class Double(mt.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    traced = jit.trace(lambda x: Double.apply(x), mt.ones(2))
    np.testing.assert_allclose(traced(mt.ones(2)).numpy(), [2, 2])
    with pytest.raises(mt.SerializationError, match="not one of minitorch's own ops"):
        traced.save(tmp_path / "custom")


# --- scripting --------------------------------------------------------------------------------
def test_script_keeps_control_flow_that_tracing_loses():
    def f(x, n: int):
        y = x
        k = 0
        while k < n:
            k = k + 1
            if y.sum() > 10:
                y = y - 1
            else:
                y = y * 2
        return y

    s = jit.script(f)
    assert {"If", "Loop"} <= set(s.graph.op_counts())
    for n in (0, 1, 5):
        x = mt.tensor([1.0, 3.0])
        np.testing.assert_allclose(s(x, n).numpy(), f(x, n).numpy())
    assert "while" in s.code and "if" in s.code


def test_script_calls_other_functions_and_submodules():
    def double(x):
        return x * 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return double(self.fc(x)).relu()

    net = Net()
    s = jit.script(net)
    x = mt.randn(2, 3)
    np.testing.assert_allclose(s(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    assert dict(s.named_parameters())["fc.weight"] is net.fc.weight


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(x):\n    with mt.no_grad():\n        y = x\n    return y\n", "'with' statement"),
        ("def f(x):\n    return [x * i for i in range(3)]\n", "list comprehension"),
        (
            "def f(x):\n    for i in range(3):\n        return x\n    return -x\n",
            "return inside a loop is not supported",
        ),
        ("def f(x):\n    return x < 1 < 2\n", "chained comparisons"),
    ],
)
def test_script_errors_point_at_the_line(tmp_path, source, message):
    path = tmp_path / "bad_script.py"
    path.write_text("import minitorch as mt\n" + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(jit.ScriptError, match=message) as info:
        jit.script(namespace["f"])
    assert "bad_script.py" in str(info.value) and "<--- HERE" in str(info.value)


# --- minitorch.compile ------------------------------------------------------------------------
def test_compile_recompiles_on_a_broken_guard_and_names_it():
    def f(x, scale):
        return x * scale

    cf = mt.compile(f)
    cf(mt.ones(2, 3), 2.0)
    cf(mt.ones(2, 3), 2.0)
    assert cf.frame_count == 1  # the second call ran the cached graph
    cf(mt.ones(4, 3), 2.0)
    assert "size mismatch at index 0. expected 2, actual 4" in cf.recompile_reasons[-1]
    cf(mt.ones(4, 3), 3.0)
    assert "scale == 2.0 failed" in cf.recompile_reasons[-1]
    cf(mt.ones(4, 3, dtype=mt.float64), 3.0)
    assert "dtype mismatch" in cf.recompile_reasons[-1]
    np.testing.assert_allclose(cf(mt.ones(4, 3), 3.0).numpy(), 3.0)


def test_compile_falls_back_to_eager_at_the_recompile_limit():
    cf = mt.compile(lambda x: x + 1, cache_size_limit=2)
    cf(mt.ones(1))
    cf(mt.ones(2))
    with pytest.warns(RuntimeWarning, match="recompile limit"):
        out = cf(mt.ones(3))
    np.testing.assert_allclose(out.numpy(), [2, 2, 2])
    assert len(cf.entries) == 2


def test_compile_graph_break_runs_both_branches_correctly():
    def f(x):
        y = x * 2
        if y.sum() > 0:
            y = y.tanh()
        else:
            y = y.exp()
        return y + 1

    cf = mt.compile(f)
    for sign in (1, -1, 1, -1):
        x = mt.tensor([0.5, 1.0]) * sign
        np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-6)
    assert cf.frame_count == 2 and len(cf.entries) == 1  # one trace per branch, no recompiles
    assert len(cf.graph_breaks) == 1 and "test_jit.py" in cf.graph_breaks[0]
    assert "graph breaks: 1" in cf.explain()
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        mt.compile(f, fullgraph=True)(mt.ones(2))


def test_compile_guards_on_captured_tensors_being_written():
    scale = mt.tensor([2.0])
    cf = mt.compile(lambda x: x * scale)
    cf(mt.ones(1))
    scale.mul_(5)
    np.testing.assert_allclose(cf(mt.ones(1)).numpy(), [10.0])
    assert "modified in place" in cf.recompile_reasons[-1]


# catches: compile options checked only at the first recompile (cache_size_limit="x"), or a
# limit of -1 accepted and silently running eagerly
@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"cache_size_limit": -1}, ValueError, "cache_size_limit must be >= 1"),
        ({"cache_size_limit": "x"}, TypeError, "cache_size_limit must be an int, but got str"),
        ({"cache_size_limit": 2.5}, TypeError, "cache_size_limit must be an int"),
        ({"fullgraph": "yes"}, TypeError, "fullgraph"),
    ],
)
def test_bad_compile_options_fail_at_compile(options, error, message):
    with pytest.raises(error, match=message):
        mt.compile(lambda t: t * 2, **options)
    with pytest.raises(error, match=message):
        mt.compile(**options)
