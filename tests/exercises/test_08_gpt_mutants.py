"""Chapter 08's graded tests have teeth: every wrong answer in ``mutants_08.py`` loses
points, every delegating one gets none, and the correct alternatives keep full marks
(see ``mutants.py``, the harness every chapter shares)."""

from mutants import alternative_tests, mutant_tests  # (tests/exercises is on sys.path)
from mutants_08 import CORRECT, MUTANTS

test_every_mutant_loses_points, test_the_solution_keeps_full_marks = mutant_tests("08", MUTANTS)
test_correct_alternatives_keep_full_marks = alternative_tests("08", CORRECT)


def test_a_wrong_08_5_costs_points_once_not_again_in_08_6():
    """08.6 is graded with the package's sampler: a learner's wrong 08.5 fails 08.5 only,
    while their right decoding loop keeps its points."""
    from mutants import first_failure, mutant_namespace

    nb = mutant_namespace("08", MUTANTS, "08.5", "temperature_multiplies")
    assert first_failure("08", "08.5", nb) is not None
    assert first_failure("08", "08.6", nb) is None
