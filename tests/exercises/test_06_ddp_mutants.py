"""Chapter 06's graded tests have teeth: every wrong answer in ``mutants_06.py`` loses
points, every delegating one gets none, and the correct alternatives keep full marks
(see ``mutants.py``, the harness every chapter shares)."""

from mutants import alternative_tests, mutant_tests  # (tests/exercises is on sys.path)
from mutants_06 import CORRECT, MUTANTS

test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests("06", MUTANTS)
test_correct_alternatives_keep_full_marks = alternative_tests("06", CORRECT)


def test_a_wrong_06_1_costs_points_once_not_again_in_06_3():
    """06.3 is graded with minitorch's reduce-scatter and all-gather: a learner's wrong 06.1
    fails 06.1 only, while their right 06.3 keeps its points."""
    from mutants import first_failure, mutant_namespace

    nb = mutant_namespace("06", MUTANTS, "06.1", "replaces_instead_of_adding")
    assert first_failure("06", "06.1", nb) is not None
    assert first_failure("06", "06.3", nb) is None
