"""Running an exercise's tests against a notebook's definitions, into a result."""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from typing import Any

from minitorch.grading.namespace import MissingDefinition
from minitorch.grading.registry import ExerciseTests, Registration
from minitorch.grading.results import (
    ERROR,
    FAILED,
    NOT_IMPLEMENTED,
    NOT_RUN,
    PASSED,
    STATUS_PRIORITY,
    TIMED_OUT,
    ExerciseResult,
    TestOutcome,
)
from minitorch.grading.timelimit import TimeLimitExceeded, time_limit
from minitorch.grading.tracebacks import (
    describe_exception,
    file_location,
    notebook_function,
    notebook_location,
)

#: Seconds an exercise's tests may run, all together, when the grader runs them.
EXERCISE_TIMEOUT = 30.0

LOOP_HINT = "look for a loop that never ends"


def _where(exc: BaseException, nb: Any, test: Registration) -> str:
    return notebook_location(exc, nb) or file_location(exc, test.file)


def _assertion_message(exc: AssertionError, test: Registration) -> str:
    text = str(exc).strip()
    if text:
        return text.splitlines()[0]
    where = file_location(exc, test.file)
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip() if tb else ""
    statement = f": `{line}`" if line else ""
    return f"assertion failed{statement} ({where})" if where else f"assertion failed{statement}"


def timed_out_message(seconds: float, where: str = "") -> str:
    """``"timed out after 2 s (in `f`, line 3 of notebook cell 4): look for a loop ..."``."""
    place = f" ({where})" if where else ""
    return f"timed out after {seconds:g} s{place}: {LOOP_HINT}"


def outcome_for(exc: BaseException, nb: Any, test: Registration) -> TestOutcome:
    """Classify the exception a test raised into a status and a one-line message."""
    if isinstance(exc, TimeLimitExceeded):
        message = timed_out_message(exc.seconds, _where(exc, nb, test))
        return TestOutcome(test.name, TIMED_OUT, message)
    if isinstance(exc, MissingDefinition):
        if exc.not_implemented:
            numbers = [str(f.cell) for f in exc.failures]
            if len(numbers) == 1:
                cells, verb, raises = f"cell {numbers[0]}", "raises", "that raise"
            else:
                listed = ", ".join(numbers[:-1]) + " and " + numbers[-1]
                cells, verb, raises = f"cells {listed}", "raise", "those raises"
            message = (
                f"`{exc.name}` is not defined: {cells} still {verb} NotImplementedError; "
                f"replace {raises} with your code"
            )
            return TestOutcome(test.name, NOT_IMPLEMENTED, message)
        return TestOutcome(test.name, ERROR, str(exc))
    if isinstance(exc, NotImplementedError):
        function = notebook_function(exc, nb)
        if function is not None:
            message = (
                f"`{function}` still raises NotImplementedError: replace that raise with your code"
            )
        else:
            where = _where(exc, nb, test)
            message = describe_exception(exc) + (f" ({where})" if where else "")
        return TestOutcome(test.name, NOT_IMPLEMENTED, message)
    if isinstance(exc, AssertionError):
        return TestOutcome(test.name, FAILED, _assertion_message(exc, test))
    where = _where(exc, nb, test)
    message = describe_exception(exc) + (f" ({where})" if where else "")
    return TestOutcome(test.name, ERROR, message)


def run_test(test: Registration, nb: Any) -> TestOutcome:
    """Run one test; a :class:`TimeLimitExceeded` is left to the caller."""
    try:
        test.func(nb)
    except TimeLimitExceeded:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: the learner's code did it
        return outcome_for(exc, nb, test)
    return TestOutcome(test.name, PASSED)


def run_exercise(
    exercise: ExerciseTests,
    nb: Any,
    timeout: float | None = EXERCISE_TIMEOUT,
    on_test: Callable[[str], None] | None = None,
    on_outcome: Callable[[TestOutcome], None] | None = None,
) -> ExerciseResult:
    """Run the exercise's tests in turn, all within ``timeout`` seconds.

    ``on_test(name)`` is called before each test and ``on_outcome(outcome)`` after it
    (the worker streams them to the grader). When time runs out, the running test is
    "timed out" and the tests after it are "not run".
    """
    outcomes: list[TestOutcome] = []
    current: Registration | None = None
    try:
        with time_limit(timeout):
            for test in exercise.tests:
                current = test
                if on_test is not None:
                    on_test(test.name)
                outcome = run_test(test, nb)
                outcomes.append(outcome)
                current = None
                if on_outcome is not None:
                    on_outcome(outcome)
    except TimeLimitExceeded as exc:
        if current is not None:
            outcome = outcome_for(exc, nb, current)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    names = [t.name for t in exercise.tests]
    return summarize(exercise.id, exercise.title, exercise.points, names, outcomes)


def summarize(
    exercise_id: str,
    title: str,
    points: float,
    test_names: Sequence[str],
    outcomes: Sequence[TestOutcome],
) -> ExerciseResult:
    """The exercise's result from its tests' outcomes; missing tests count as not run.

    Partial credit: points x (tests passed / tests of the exercise), to 2 decimals.
    """
    done = {o.name for o in outcomes}
    outcomes = list(outcomes) + [
        TestOutcome(name, NOT_RUN, "not run: the exercise stopped before this test")
        for name in test_names
        if name not in done
    ]
    if not outcomes:
        return ExerciseResult(exercise_id, title, 0.0, points, ERROR, "no tests for this exercise")
    passed = sum(o.status == PASSED for o in outcomes)
    score = round(points * passed / len(outcomes), 2)
    if passed == len(outcomes):
        status, reason = PASSED, ""
    else:
        status = next(s for s in STATUS_PRIORITY if any(o.status == s for o in outcomes))
        reason = next(o.message for o in outcomes if o.status == status)
    return ExerciseResult(exercise_id, title, score, points, status, reason, outcomes)
