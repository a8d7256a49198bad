"""Chapter 07's graded tests have teeth: every wrong answer in ``mutants_07.py`` loses
points and every delegating one gets none, while the solution and the correct
alternatives keep full marks (see ``mutants.py``, the harness every chapter shares)."""

import pytest
from mutants import alternative_tests, grade, mutant_tests, solution
from mutants_07 import CORRECT, MUTANTS

from minitorch.course.grading import Namespace
from minitorch.course.grading.delegation import is_delegation

# a kernel that calls numpy is refused by the kernel language itself (KernelLanguageError)
test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests(
    "07", MUTANTS, other_refusals=("KernelLanguageError",)
)
test_correct_alternatives_keep_full_marks = alternative_tests("07", CORRECT)


def _minitorch_kernels() -> dict:
    from minitorch.cuda.kernels import matmul, reduce, softmax

    return {
        "07.3": ("block_sum_kernel", reduce.block_sum_kernel(64, "float32")),
        "07.4": ("softmax_kernel", softmax.softmax_kernel(32, "float32")),
        "07.5": ("matmul_tiled_kernel", matmul.tiled_kernel(8)),
    }


@pytest.mark.parametrize("exercise_id", ["07.3", "07.4", "07.5"])
def test_delegates_by_binding_the_name_to_a_minitorch_kernel(exercise_id: str) -> None:
    """``softmax_kernel = kernels.softmax.softmax_kernel(32, "float32")`` under the cell: a
    delegating answer that no region of the kernel's body can express."""
    name, kernel = _minitorch_kernels()[exercise_id]
    definitions = {**solution("07")._globals, name: kernel}
    result = grade("07", exercise_id, Namespace(definitions, origin=f"{name} rebound"))
    assert result.score == 0 and is_delegation(result.reason), (
        f"{exercise_id} with {name} bound to minitorch's own kernel got {result.score} points "
        f"({result.reason!r}); it should get none, with 'your answer used ...'"
    )


# --- What the texts of 07.3-07.5 promise of the simulator's reports (issue 35) -------------
def test_a_float_divided_by_zero_is_inf_or_nan_as_on_a_gpu() -> None:
    # catches: 07.4's text says a row of exps that all underflow becomes nan, not an error
    import numpy as np

    from minitorch.cuda import jit
    from minitorch.cuda.errors import KernelArithmeticError

    @jit.rawkernel()
    def divide(x, out):
        t = jit.threadIdx.x
        out[t] = x[t] / 0.0

    out = np.zeros(3, dtype=np.float32)
    divide[1, 3](np.array([1.0, -2.0, 0.0], dtype=np.float32), out)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]), out

    @jit.rawkernel()
    def integer_divide(out):
        t = jit.threadIdx.x
        out[t] = 7 // (t - 1)

    with pytest.raises(KernelArithmeticError, match="thread 1 of block 0 in kernel `integer_"):
        integer_divide[1, 3](np.zeros(3, dtype=np.int64))


def test_a_race_names_the_line_of_each_access_and_a_missing_barrier_leads() -> None:
    # catches: a race that names only the reading line; a read of a cell another thread
    # writes later in the same phase reported as "fill every cell" instead of the barrier
    import numpy as np

    from minitorch.cuda import jit
    from minitorch.cuda.errors import SharedMemoryRaceError

    @jit.rawkernel()
    def racy(x, out):
        buf = jit.shared_memory(jit.float32, 8)
        t = jit.threadIdx.x
        buf[t] = x[t]
        out[t] = buf[(t + 7) % 8]  # thread 1 reads cell 0, which thread 0 wrote

    @jit.rawkernel()
    def ahead(x, out):
        buf = jit.shared_memory(jit.float32, 8)
        t = jit.threadIdx.x
        buf[t] = x[t]
        out[t] = buf[min(t + 1, 7)]  # thread 0 reads cell 1 before thread 1 writes it

    args = (np.ones(8, dtype=np.float32), np.zeros(8, dtype=np.float32))
    first = racy.func.__code__.co_firstlineno
    with pytest.raises(SharedMemoryRaceError) as caught:
        racy[1, 8](*args)
    message = str(caught.value)
    assert message.startswith("thread 1 of block 0 in kernel `racy` read cell 0"), message
    assert f"write (line {first + 4}) and the read (line {first + 5})" in message, message
    first = ahead.func.__code__.co_firstlineno
    with pytest.raises(SharedMemoryRaceError) as caught:
        ahead[1, 8](*args)
    message = str(caught.value)
    assert message.startswith("thread 0 of block 0 in kernel `ahead` read cell 1"), message
    assert f"line {first + 5}" in message and f"line {first + 4}" in message, message
    assert "missing barrier" in message and "fill every cell" not in message, message
