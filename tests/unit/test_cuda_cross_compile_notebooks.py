"""Reading a notebook's kernels without running it: each decorated ``def``, with the argument
types and block of the notebook's own launch, worked out from what the cells assign."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from minitorch.cuda import jit
from minitorch.cuda.cross_compile import Array
from minitorch.cuda.errors import KernelLanguageError
from minitorch.cuda.notebook_kernels import notebook_kernels

ROOT = Path(__file__).resolve().parents[2]


def write_notebook(path: Path, cells: list[str]) -> Path:
    code = [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells]
    path.write_text(json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_the_solutions_kernels_get_the_types_of_their_launches():
    found = notebook_kernels(ROOT / "solutions" / "07_gpu_solutions.ipynb")
    launches = {launch.name: launch for launch in found.launches}
    assert set(launches) == {
        "axpy_kernel", "strided_mul_kernel", "block_sum_kernel", "softmax_kernel",
        "matmul_tiled_kernel", "conv1d_kernel",
    }  # fmt: skip
    assert not found.assumed and not found.not_written
    f32 = Array("float32")
    # axpy_kernel[3, 4](2.0, x, y, out, 10), x = np.arange(10, dtype=np.float32), ...
    assert launches["axpy_kernel"].args == (2.0, f32, f32, f32, 10)
    assert launches["axpy_kernel"].block == (4, 1, 1)
    # shape = np.array([3, 2]); strides_a, strides_b = np.array([1, 3]), np.array([0, 1])
    strided = launches["strided_mul_kernel"].args
    assert strided[:6] == (f32, f32, f32, Array("int64"), Array("int64"), Array("int64"))
    assert strided[6:] == (0, 0, 2, 6)
    # matmul_tiled_kernel[(1, 1), (TILE, TILE)](a.reshape(-1), ...) with TILE = 8
    assert launches["matmul_tiled_kernel"].block == (8, 8, 1)
    assert launches["matmul_tiled_kernel"].args[:3] == (f32, f32, f32)
    assert launches["block_sum_kernel"].block == (64, 1, 1)  # BLOCK = 64


def test_the_lesson_kernels_are_all_found():
    found = notebook_kernels(ROOT / "chapters" / "07_gpu.ipynb")
    names = [launch.name for launch in found.launches]
    assert {"whose_element", "diff_kernel", "shift_right", "shuffle_down"} <= set(names)
    whose = next(launch for launch in found.launches if launch.name == "whose_element")
    # block_of, thread_of = np.full(n, -1), np.full(n, -1): int64 arrays
    assert whose.args == (Array("int64"), Array("int64"), 10) and whose.block == (4, 1, 1)


def test_exercise_placeholders_are_listed_not_compiled():
    found = notebook_kernels(ROOT / "exercises" / "07_gpu_exercises.ipynb")
    assert found.launches == []
    assert [entry.split(" ")[0] for entry in found.not_written] == [
        "axpy_kernel", "strided_mul_kernel", "block_sum_kernel", "softmax_kernel",
        "matmul_tiled_kernel", "conv1d_kernel",
    ]  # fmt: skip


def test_reading_runs_no_cell_and_types_what_it_cannot_see_from_the_body(tmp_path):
    path = write_notebook(
        tmp_path / "nb.ipynb",
        [
            "%matplotlib inline\nimport numpy as np\nfrom minitorch.cuda import jit\nBLOCK = 32",
            "raise SystemExit('a cell ran')",
            "@jit.rawkernel(device=True)\ndef twice(v):\n    return v * 2.0",
            "@jit.rawkernel()\ndef scale(alpha, x, out, n):\n"
            "    buf = jit.shared_memory(jit.float32, BLOCK)\n    i = jit.grid(1)\n"
            "    if i < n:\n        out[i] = twice(alpha * x[i])",
            "@jit.rawkernel()\ndef grid2d(m, out, rows):\n    r, c = jit.grid(2)\n"
            "    if r < rows:\n        out[r, c] = m[r, c]",
            "rng = np.random.default_rng(0)\n"
            "x, n = rng.standard_normal((4, 8)).astype(np.float32).reshape(-1), 32\n"
            "scale[1, BLOCK](np.float32(0.5), x, np.empty_like(x), n)\n"
            "grid2d[(1, 1), (8, 8)](load_from_disk(), np.zeros((8, 8)), 8)",
        ],
    )
    found = notebook_kernels(path)
    launches = {launch.name: launch for launch in found.launches}
    assert set(launches) == {"scale", "grid2d"}  # a device function is compiled with its caller
    assert launches["scale"].args == (np.float32(0.5), Array("float32"), Array("float32"), 32)
    assert launches["scale"].block == (32, 1, 1) and "scale" not in found.assumed
    # load_from_disk() cannot be worked out: the body says m is indexed with two indices
    assert launches["grid2d"].args == (Array("float32", 2), Array("float64", 2), 8)
    assert found.assumed == {"grid2d"}
    out = np.zeros(32, np.float32)  # the kernel made from the cell runs in the simulator
    launches["scale"].kernel[1, 32](0.5, np.ones(32, np.float32), out, 32)
    np.testing.assert_allclose(out, 1.0)


def test_a_kernel_never_launched_is_typed_from_its_body(tmp_path):
    path = write_notebook(
        tmp_path / "nb.ipynb",
        [
            "from minitorch.cuda import jit\n\n\n@jit.rawkernel()\ndef axpy(alpha, x, out, n):\n"
            "    i = jit.grid(1)\n    if i < n:\n        out[i] = alpha * x[i]",
        ],
    )
    (launch,) = notebook_kernels(path).launches
    assert launch.args == (1.0, Array("float32"), Array("float32"), 1024)
    assert launch.block == (256, 1, 1)


def test_defaults_are_not_evaluated_and_are_refused(tmp_path):
    path = write_notebook(
        tmp_path / "nb.ipynb",
        ["from minitorch.cuda import jit\n@jit.rawkernel()\ndef k(x, n=1 / 0):\n    x[0] = n"],
    )
    (launch,) = notebook_kernels(path).launches
    with pytest.raises(KernelLanguageError, match=r"line 3: a parameter with a default"):
        jit.check_language(launch.kernel.func)


def test_an_unreadable_notebook_is_named(tmp_path):
    (tmp_path / "broken.ipynb").write_text("{not json")
    with pytest.raises(ValueError, match=r"compile: cannot read the notebook .*broken\.ipynb"):
        notebook_kernels(tmp_path / "broken.ipynb")
