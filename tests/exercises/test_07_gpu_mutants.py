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
