"""minitorch.onnx.export: the exported file, run by onnxruntime, gives minitorch's outputs.

Needs the optional ``onnx`` extra (onnx + onnxruntime; ``make test`` installs it); skipped
with the reason where it is missing.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit, nn
from minitorch import onnx as mt_onnx
from minitorch.function import Context, Function
from minitorch.nn import functional as F

from .test_jit import chapter3_models

onnx = pytest.importorskip("onnx", reason="onnx is an optional extra: pip install '.[onnx]'")
ort = pytest.importorskip(
    "onnxruntime", reason="onnxruntime is an optional extra: pip install '.[onnx]'"
)

MODELS = chapter3_models()


def run_onnx(path, *inputs) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {n: x.numpy() for n, x in zip(names, inputs, strict=True)})


def eager(fn, *inputs) -> list[np.ndarray]:
    with mt.no_grad():
        out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in outs]


def assert_round_trip(fn, inputs, path, atol=1e-5, **kwargs):
    """Export, run in onnxruntime, compare with eager minitorch; the ops written."""
    proto = mt_onnx.export(fn, inputs, path, **kwargs)
    got, want = run_onnx(path, *inputs), eager(fn, *inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)
    return [n.op_type for n in proto.graph.node]


# --- the chapter 03 models ----------------------------------------------------------------
EXPECTED_OPS = {
    "leaky": ["Flatten", "Gemm", "Relu", "Transpose", "MatMul"],
    "mlp_bn": ["Flatten", "Gemm", "BatchNormalization", "Relu", "Gemm"],
    "tanh_mlp": ["Flatten", "Gemm", "Tanh", "Gemm"],
    "cnn": ["Conv", "BatchNormalization", "Relu", "MaxPool"] * 2 + ["Flatten", "Gemm"],
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_chapter3_models_match_onnxruntime(name, tmp_path):
    model = MODELS[name]
    mt.manual_seed(1)
    x = mt.randn(5, 1, 8, 8)
    ops = assert_round_trip(model, (x,), tmp_path / f"{name}.onnx")
    assert ops == EXPECTED_OPS[name]  # conv and batch norm raised back to one op each


def test_parameters_are_initializers_under_their_names_and_the_ends_are_named(tmp_path):
    model = MODELS["mlp_bn"]
    proto = mt_onnx.export(
        model, mt.randn(2, 64), tmp_path / "m.onnx", input_names=["pixels"], output_names=["logits"]
    )
    stored = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        if name.endswith("num_batches_tracked"):  # not read in eval mode: not stored
            assert name not in stored
            continue
        np.testing.assert_array_equal(stored[name], t.detach().numpy())
    assert [i.name for i in proto.graph.input] == ["pixels"]
    assert [o.name for o in proto.graph.output] == ["logits"]
    assert list(onnx.load(str(tmp_path / "m.onnx")).graph.node) == list(proto.graph.node)


def test_a_training_module_is_exported_in_eval_mode_and_left_training(tmp_path):
    model = MODELS["mlp_bn"].train()
    try:
        x = mt.randn(4, 64)
        proto = mt_onnx.export(model, x, tmp_path / "m.onnx")
        assert model.training and all(m.training for m in model.modules())
        model.eval()
        np.testing.assert_allclose(
            run_onnx(tmp_path / "m.onnx", x)[0], eager(model, x)[0], atol=1e-5
        )
        assert "BatchNormalization" in [n.op_type for n in proto.graph.node]
    finally:
        model.eval()


# --- op by op -----------------------------------------------------------------------------
def _elementwise(x, y):
    z = (x - y) * 2.0 / (y.abs() + 1.0)
    return ((z.exp().sqrt() + z.sigmoid() - -(1.0 - x).tanh() + (x**2.0)).relu() + 1.0).log()


def _softmaxes(x):
    return F.softmax(x, 1), F.log_softmax(x, -1)


def _views(x):
    return (x.permute(2, 0, 1)[1:, ::2, -1] + x.T.sum()).unsqueeze(0).expand(3, 3, 2)


def _joins(x, y):
    return mt.cat([x, y * 2], dim=1), mt.stack([x, y], dim=-1)


def _selects(x, y):
    return mt.where((x > y) & (y != 0.5), x, y - 1.0), mt.maximum(x, y) - mt.minimum(x, 0.0)


mt.manual_seed(3)
TABLE = nn.Embedding(7, 4, padding_idx=0)
FC = nn.Linear(6, 6)
CONV = nn.Conv2d(2, 3, kernel_size=3, stride=2, bias=False)


def _embedding_bag(tokens):
    return TABLE(tokens).mean(1)


def _gelu_mlp(x):
    return F.gelu(FC(x)) + F.gelu(x, approximate="tanh")


def _strided_conv_pool(x):
    return F.max_pool2d(CONV(x), kernel_size=2, stride=1)  # overlapping windows: im2col


def _cast_and_argmax(x):
    biggest = x.max(dim=0)
    return x.argmax(1), (x > 0).to(mt.float32).sum(0), biggest.values, biggest.indices


g = mt.Generator().manual_seed(2)
CASES = {
    "elementwise": (_elementwise, (mt.rand(3, 4, generator=g), mt.rand(3, 4, generator=g))),
    "softmax": (_softmaxes, (mt.randn(3, 5, generator=g),)),
    "views": (_views, (mt.randn(2, 3, 4, generator=g),)),
    "joins": (_joins, (mt.randn(2, 3, generator=g), mt.randn(2, 3, generator=g))),
    "selects": (_selects, (mt.rand(3, 3, generator=g), mt.rand(3, 3, generator=g))),
    "embedding": (_embedding_bag, (mt.tensor([[1, 0, 6], [2, 2, 5]]),)),
    "gelu_linear_3d": (_gelu_mlp, (mt.randn(2, 3, 6, generator=g),)),
    "conv_stride_pool": (_strided_conv_pool, (mt.randn(2, 2, 9, 9, generator=g),)),
    "cast_argmax": (_cast_and_argmax, (mt.randn(4, 5, generator=g),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ops_match_onnxruntime(case, tmp_path):
    fn, inputs = CASES[case]
    ops = assert_round_trip(fn, inputs, tmp_path / f"{case}.onnx")
    if case == "embedding":
        assert "Gather" in ops
    if case == "conv_stride_pool":
        assert ops.count("Conv") == 1


@pytest.mark.parametrize("opset", [13, 17, 18])
def test_reductions_in_every_supported_opset(opset, tmp_path):
    def f(x):
        return x.sum((0, 2)), x.mean(1, keepdim=True), x.max(), x.min()

    x = mt.randn(2, 3, 4)
    proto = mt_onnx.export(f, x, tmp_path / "r.onnx", opset_version=opset)
    assert proto.opset_import[0].version == opset
    for got, want in zip(run_onnx(tmp_path / "r.onnx", x), eager(f, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# --- what cannot be exported --------------------------------------------------------------
class Triple(Function):
    @staticmethod
    def forward(ctx: Context, x):
        return x * 3

    @staticmethod
    def backward(ctx: Context, grad):
        return grad * 3


def test_an_op_without_mapping_is_named_with_its_node_and_line(tmp_path):
    def f(x):
        return Triple.apply(x.relu())

    with pytest.raises(mt_onnx.UnsupportedOperatorError) as info:
        mt_onnx.export(f, mt.randn(3), tmp_path / "f.onnx")
    message = str(info.value)
    assert "'triple'" in message and "triple(%" in message and "test_onnx.py:" in message
    assert not (tmp_path / "f.onnx").exists()


def test_in_place_ops_are_refused(tmp_path):
    def f(x):
        y = x * 2
        y.add_(1.0)
        return y

    with pytest.raises(mt_onnx.UnsupportedOperatorError, match="in-place op 'add_'"):
        mt_onnx.export(f, mt.randn(3), tmp_path / "f.onnx")


def test_data_dependent_python_control_flow_is_refused_at_its_line(tmp_path):
    def f(x):
        if x.sum() > 0:  # a Python if on a tensor: the trace would bake in one branch
            return x * 2
        return -x

    with pytest.raises(mt_onnx.OnnxExportError, match=r"\(bool\) at test_onnx.py:\d+"):
        mt_onnx.export(f, mt.ones(3), tmp_path / "f.onnx")


def test_scripted_control_flow_on_a_tensor_is_refused_and_names_the_if(tmp_path):
    def f(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = -x
        return y

    scripted = jit.script(f)
    with pytest.raises(mt_onnx.OnnxExportError, match=r"\(If\).*node `.*If\("):
        mt_onnx.export(scripted, mt.ones(3), tmp_path / "f.onnx")


def test_a_traced_script_module_exports_like_the_module(tmp_path):
    traced = jit.trace(MODELS["tanh_mlp"], mt.randn(2, 64))
    x = mt.randn(2, 64)
    assert assert_round_trip(traced, (x,), tmp_path / "t.onnx") == ["Gemm", "Tanh", "Gemm"]


def test_bad_arguments_are_clear_errors(tmp_path):
    model = MODELS["tanh_mlp"]
    with pytest.raises(ValueError, match="opset_version must be between 13 and"):
        mt_onnx.export(model, mt.randn(2, 64), tmp_path / "m.onnx", opset_version=9)
    with pytest.raises(ValueError, match="2 input_names given for 1 inputs"):
        mt_onnx.export(model, mt.randn(2, 64), tmp_path / "m.onnx", input_names=["a", "b"])


def test_a_missing_onnx_package_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"minitorch\[onnx\]"):
        mt_onnx.export(MODELS["tanh_mlp"], mt.randn(2, 64), tmp_path / "m.onnx")


def test_every_converted_op_name_is_a_real_op():
    from minitorch.jit.ops import function_for

    raised = {"Conv", "BatchNormalization"}  # formed by the pattern pass, not traced
    unknown = [op for op in mt_onnx.CONVERTERS if op not in raised and function_for(op) is None]
    assert unknown == [], f"converters for ops minitorch does not have: {unknown}"


def test_every_elementwise_op_exports():
    # catches: an op given a scalar formula (so the fusers take it) that ONNX export misses
    from minitorch.ops.registry import elementwise

    missing = [name for name in elementwise() if name not in mt_onnx.CONVERTERS]
    assert missing == [], f"elementwise ops without an ONNX converter: {missing}"


# --- dynamic axes ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_dynamic_batch_runs_at_other_batch_sizes(tmp_path, name):
    model, example = MODELS[name], mt.randn(5, 1, 8, 8)
    path = tmp_path / f"{name}.onnx"
    axes = {"input": {0: "batch"}, "output": {0: "batch"}}
    proto = mt_onnx.export(model, example, path, dynamic_axes=axes)
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and all(d.dim_value > 0 for d in dims[1:])
    for batch in (1, example.shape[0] + 5):
        mt.manual_seed(batch)
        x = mt.randn(batch, *example.shape[1:])
        (got,) = run_onnx(path, x)
        (want,) = eager(model, x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dynamic_axes_given_as_a_list_are_named_as_pytorch_names_them(tmp_path):
    model, example = MODELS["tanh_mlp"], mt.randn(5, 1, 8, 8)
    proto = mt_onnx.export(model, example, tmp_path / "m.onnx", dynamic_axes={"input": [0]})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "input_dynamic_axes_1"


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.view(4, -1).tanh(),  # fails at another batch size
        lambda x: x.view(x.shape[0] * 3).tanh(),  # runs, but the Reshape holds the size
        lambda x: x.unsqueeze(0).tanh(),  # a Reshape to the traced shape
    ],
    ids=["fixed-view", "size-read-in-python", "unsqueeze"],
)
def test_a_size_baked_into_the_graph_refuses_a_dynamic_dim(tmp_path, fn):
    path = tmp_path / "fixed.onnx"
    with pytest.raises(mt_onnx.OnnxExportError, match="depends on the size of the dynamic dims"):
        mt_onnx.export(fn, mt.randn(4, 3), path, dynamic_axes={"input": {0: "n"}})
    assert not path.exists()
    mt_onnx.export(fn, mt.randn(4, 3), path)  # static: fine


@pytest.mark.parametrize(
    ("axes", "error", "match"),
    [
        ({"nope": {0: "b"}}, ValueError, "'nope', which is not an input or output"),
        ({"input": {5: "b"}}, ValueError, "axis 5, but 'input' has 2 dims"),
        ({"input": {0: 3}}, TypeError, "must name the dim with a non-empty str"),
        ({"input": 0}, TypeError, "must be a dict {axis: name} or a list of axes"),
        ([("input", 0)], TypeError, "dynamic_axes must be a dict"),
    ],
)
def test_bad_dynamic_axes_name_the_problem(tmp_path, axes, error, match):
    model, example = MODELS["tanh_mlp"], mt.randn(5, 64)
    with pytest.raises(error, match=match):
        mt_onnx.export(model, example, tmp_path / "m.onnx", dynamic_axes=axes)
