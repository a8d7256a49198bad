"""Chapter 06's graded tests have teeth: every wrong answer in ``mutants_06.py`` loses
points, every delegating one gets none, and the correct alternatives keep full marks
(see ``mutants.py``, the harness every chapter shares)."""

from mutants import alternative_tests, mutant_tests  # (tests/exercises is on sys.path)
from mutants_06 import CORRECT, MUTANTS

test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests("06", MUTANTS)
test_correct_alternatives_keep_full_marks = alternative_tests("06", CORRECT)
