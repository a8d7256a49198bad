"""check() on a kernel exercise also compiles the learner's kernel for a real GPU (sm_90),
when the toolchain is installed (issue 23, item 3)."""

from __future__ import annotations

import pytest

from minitorch.course import manifest
from minitorch.course.grading.notebook import load_notebook

toolchain = pytest.importorskip("minitorch.cuda.toolchain")
if toolchain.missing() is not None:
    pytest.skip(f"no compile toolchain: {toolchain.missing()}", allow_module_level=True)


@pytest.fixture(scope="module")
def solutions_07():
    return load_notebook(manifest.chapter("07").solution)._globals


def test_a_passing_kernel_exercise_says_how_it_compiles(solutions_07):
    # catches: check() that stops at the simulator, or compiles the package's kernel
    # check reads the caller's globals, which must be the kernels' own: 07.3's tests set BLOCK
    # there to try other block sizes (a copy of the dict would leave the kernel's BLOCK as it is)
    namespace = solutions_07
    exec("from minitorch.course.grading import check\nresult = check('07.3')", namespace)
    text = repr(namespace["result"])
    assert text.startswith("07.3") and "passed" in text
    (line,) = [ln for ln in text.splitlines() if "sm_90" in ln]
    assert line.strip().startswith("`block_sum_kernel` compiles for sm_90:")
    assert "registers" in line and "occupancy" in line
    assert "sm_90" in namespace["result"]._repr_html_()


def test_a_failing_exercise_gets_no_compile_line(solutions_07):
    namespace = dict(solutions_07)
    exec(
        "from minitorch.course.grading import check\n"
        "def block_sum_kernel(x, partial, n):\n    raise NotImplementedError\n"
        "result = check('07.3')",
        namespace,
    )
    assert "sm_90" not in repr(namespace["result"])
