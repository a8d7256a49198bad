"""Bad input to chapter 04-07 APIs gets an error naming the call, the argument and the value
(issue 19's vague messages), and nothing is half done."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch import jit, nn
from minitorch.cuda import kernels


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
    with pytest.raises(ValueError, match=r"the input shapes \(3,\) and \(4,\) do not broadcast"):
        kernels.elementwise.zip_op("add", np.ones(3, np.float32), np.ones(4, np.float32))
