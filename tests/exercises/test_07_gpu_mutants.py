"""Chapter 07's graded tests have teeth: every wrong answer in ``mutants_07.py`` loses
points and every delegating one gets none, while the solution and the correct
alternatives keep full marks (see ``mutants.py``, the harness every chapter shares)."""

from mutants import alternative_tests, mutant_tests  # (tests/exercises is on sys.path)
from mutants_07 import CORRECT, MUTANTS

# a kernel that calls numpy is refused by the kernel language itself (KernelLanguageError)
test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests(
    "07", MUTANTS, other_refusals=("KernelLanguageError",)
)
test_correct_alternatives_keep_full_marks = alternative_tests("07", CORRECT)
