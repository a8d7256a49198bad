"""Chapter 05's graded tests have teeth: every wrong answer in ``mutants_05.py`` loses
points and every delegating one gets none, while the solution and the correct
alternatives keep full marks (see ``mutants.py``, the harness every chapter shares)."""

from mutants import alternative_tests, mutant_tests  # (tests/exercises is on sys.path)
from mutants_05 import CORRECT, MUTANTS

test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests("05", MUTANTS)
test_correct_alternatives_keep_full_marks = alternative_tests("05", CORRECT)
