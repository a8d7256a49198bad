"""Bad input to chapter 04-07 APIs gets an error naming the call, the argument and the value
(issue 19's vague messages), and nothing is half done."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit, nn
from minitorch.cuda import kernels
from minitorch.cuda.errors import LaunchConfigError


def test_memory_report_names_what_it_was_given():
    # catches: "missing 1 required positional argument" or an AttributeError deep inside
    model = nn.Linear(2, 2)
    loss = model(mt.ones(1, 2)).sum()
    with pytest.raises(TypeError, match=r"memory_report: parameters must be .*model.parameters"):
        mt.amp.memory_report(model, loss)
    with pytest.raises(TypeError, match="memory_report: parameter 0 is str 'x', not a Tensor"):
        mt.amp.memory_report("x", loss)
    with pytest.raises(TypeError, match="memory_report: loss must be the Tensor"):
        mt.amp.memory_report(model.parameters(), "loss")
    assert mt.amp.memory_report(model.parameters(), loss).parameters == 24


@pytest.mark.parametrize(
    "run, name",
    [
        (jit.fold_constants, "fold_constants"),
        (jit.eliminate_dead_code, "eliminate_dead_code"),
        (jit.eliminate_common_subexpressions, "eliminate_common_subexpressions"),
        (jit.fuse_elementwise, "fuse_elementwise"),
        (jit.optimize, "optimize"),
    ],
)
def test_jit_passes_refuse_what_is_no_graph(run, name):
    # catches: "'int' object has no attribute 'copy'" for a pass given an int or a module
    with pytest.raises(TypeError, match=f"{name}: expected a jit Graph"):
        run(3)
    module = jit.trace(nn.Linear(2, 2), mt.ones(1, 2))
    if name != "optimize":  # optimize takes a ScriptModule too
        with pytest.raises(TypeError, match=r"pass module.graph"):
            run(module)


def test_saving_to_a_directory_names_the_directory(tmp_path):
    # catches: an IsADirectoryError naming an internal temporary file
    module = jit.trace(nn.Linear(2, 2), mt.ones(1, 2))
    with pytest.raises(IsADirectoryError, match=f"save: '{tmp_path}' is a directory"):
        module.save(tmp_path)
    with pytest.raises(IsADirectoryError, match="is a directory; give a file name in it"):
        mt.save({"w": mt.ones(2)}, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_onnx_opset_must_be_an_int(tmp_path):
    pytest.importorskip("onnx")
    with pytest.raises(TypeError, match="onnx.export: opset_version must be an int, but got float"):
        mt.onnx.export(nn.Linear(2, 2), mt.ones(1, 2), tmp_path / "m.onnx", opset_version=13.0)
    assert not (tmp_path / "m.onnx").exists()


def test_kernel_launch_options_and_shapes_are_named():
    # catches: ZeroDivisionError for tile=0, numpy's broadcast message for a fused kernel
    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="matmul_tiled: tile must be >= 1, but got tile=0"):
        kernels.matmul.matmul_tiled(a, a, tile=0)
    with pytest.raises(ValueError, match="tile .* must be a multiple of r"):
        kernels.matmul.matmul_register_blocked(a, a, tile=6, r=4)
    with pytest.raises(TypeError, match="matmul_naive: block must be an int"):
        kernels.matmul.matmul_naive(a, a, block=2.5)
    with pytest.raises(ValueError, match=r"^zip_op: the input shapes \(3,\) and \(4,\) do not"):
        kernels.elementwise.zip_op("add", np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"^zip_op: no elementwise op 'frobnicate'"):
        kernels.elementwise.zip_op("frobnicate", a, a)
    with pytest.raises(ValueError, match=r"^map_op: no elementwise op 'frobnicate'"):
        kernels.elementwise.map_op("frobnicate", a)


def test_saved_tensor_bytes_and_scale_name_what_they_were_given():
    # catches: "'str' object has no attribute 'grad_fn'", "'int' object is not iterable", and
    # scale(ndarray) naming one of the array's elements instead of the array
    loss = nn.Linear(2, 1)(mt.ones(1, 2)).sum()
    with pytest.raises(TypeError, match="saved_tensor_bytes: output must be the Tensor .* str"):
        mt.amp.saved_tensor_bytes("x")
    with pytest.raises(TypeError, match="saved_tensor_bytes: exclude must be an iterable .* int"):
        mt.amp.saved_tensor_bytes(loss, exclude=3)
    with pytest.raises(TypeError, match=r"exclude\[0\] is str"):
        mt.amp.saved_tensor_bytes(loss, exclude=["w"])
    with pytest.raises(ValueError, match="GradScaler.scale: outputs must be .* got ndarray"):
        mt.amp.GradScaler().scale(np.ones(2))
    with pytest.raises(ValueError, match=r"got list \[.*\] \(it holds str 'x'\)"):
        mt.amp.GradScaler().scale([mt.ones(1), "x"])


def test_jit_helpers_name_bad_arguments(tmp_path):
    # catches: lint(3) failing with an AttributeError, optimize(fuse="x") taken as true,
    # jit.load(3) / map_location="tpu" with messages that name neither jit.load nor the argument
    graph = jit.trace(nn.Linear(2, 2), mt.ones(1, 2)).graph
    with pytest.raises(TypeError, match="lint: expected a jit Graph, but got int 3"):
        jit.lint(3)
    with pytest.raises(TypeError, match="optimize: fuse must be a bool, but got str 'x'"):
        jit.optimize(graph, fuse="x")
    with pytest.raises(TypeError, match="jit.load: f must be a file name .* int"):
        jit.load(3)
    with pytest.raises(ValueError, match=r"jit.load\(map_location=...\): unknown device 'tpu'"):
        jit.load(tmp_path / "m.pt", map_location="tpu")


def test_compile_handles_a_numpy_graph_break():
    # catches: "unhashable type: 'numpy.ndarray'" when a compiled function reads its input
    # through .numpy() (a graph break keyed by the array's contents)
    def f(x):
        return x * float(x.numpy().sum())

    compiled = mt.compile(f)
    for scale in (1.0, 3.0, 1.0):
        assert compiled(mt.ones(2) * scale).tolist() == f(mt.ones(2) * scale).tolist()


def test_onnx_export_names_bad_arguments(tmp_path):
    pytest.importorskip("onnx")
    model, x, out = nn.Linear(2, 2), mt.ones(1, 2), tmp_path / "m.onnx"
    # catches: input_names="a" read letter by letter, output_names=[3] failing in protobuf,
    # a directory named by an internal temp file, a non-tensor input reported by "trace"
    with pytest.raises(TypeError, match="onnx.export: input_names must be a list of str, but"):
        mt.onnx.export(model, x, out, input_names="a")
    with pytest.raises(
        TypeError, match=r"onnx.export: output_names\[0\] must be a str, but got int 3"
    ):
        mt.onnx.export(model, x, out, output_names=[3])
    with pytest.raises(IsADirectoryError, match=f"onnx.export: '{tmp_path}' is a directory"):
        mt.onnx.export(model, x, tmp_path)
    with pytest.raises(TypeError, match="onnx.export: example_inputs must be a Tensor .* int 3"):
        mt.onnx.export(model, 3, out)
    assert list(tmp_path.iterdir()) == []

    class Gated(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gate = jit.script(_Gate())

        def forward(self, x):
            return self.gate(x)

    # catches: a scripted submodule's if baked into the exported graph
    with pytest.raises(mt.onnx.OnnxExportError, match=r"scripted control flow .* \(If\)"):
        mt.onnx.export(Gated(), mt.ones(2), out)
    import io

    buffer = io.BytesIO()  # a file object, as PyTorch takes
    mt.onnx.export(model, x, buffer)
    assert buffer.getvalue()[:2] and not out.exists()


class _Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x + 3
        return y


def test_kernels_name_what_they_were_given(tmp_path):
    # catches: "'list' object has no attribute 'ndim'", "Cannot interpret 'minitorch.float32'
    # as a data type", a launch message that names no kernel
    with pytest.raises(TypeError, match="matmul kernels: a must be a numpy or cupy array"):
        kernels.matmul_naive([[1.0]], [[1.0]])
    source = (
        "from minitorch.cuda import jit\n"
        "@jit.rawkernel()\n"
        "def copy(x, out, n):\n"
        "    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x\n"
        "    if i < n:\n"
        "        out[i] = x[i]\n"
    )
    path = tmp_path / "copy_kernel.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    copy = namespace["copy"]
    with pytest.raises(TypeError, match=r"parameter 'x' got a minitorch Tensor; .* x\.numpy\(\)"):
        copy[1, 4](mt.ones(4), np.zeros(4, np.float32), 4)
    with pytest.raises(TypeError, match=r"kernel copy: launch it as copy\[grid, block\]"):
        copy[4]
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(LaunchConfigError, match=r"grid must be .* got \(1, 1, 1, 1\) \(4 dims\)"):
        copy[(1, 1, 1, 1), 4](x, out, 4)
    with pytest.raises(LaunchConfigError, match=r"grid \(2147483648, 1, 1\) x block \(1, 1, 1\)"):
        copy[2**31, 1](x, out, 4)
    with pytest.raises(TypeError, match=r"argument `n` is a str \('4'\)"):
        copy[1, 4](x, out, "4")
