"""Running an exercise's judges, into a result.

A judge (an ``@exercise`` test) runs in the process that grades: here. It calls the
learner's code only through ``run(probe, ...)`` (see :mod:`minitorch.course.grading.probes`),
which runs the probe in the learner's process, or in this one for ``check()`` and pytest.
"""

from __future__ import annotations

import linecache
import time
from collections.abc import Callable, Sequence

from minitorch.course.grading.delegation import is_delegation
from minitorch.course.grading.numpy_messages import rephrase
from minitorch.course.grading.plain import one_line
from minitorch.course.grading.probes import LOOP_HINT, LearnerError, Runner, timed_out_message
from minitorch.course.grading.registry import ExerciseTests, Registration
from minitorch.course.grading.results import (
    ERROR,
    FAILED,
    NOT_RUN,
    PASSED,
    STATUS_PRIORITY,
    TIMED_OUT,
    ExerciseResult,
    TestOutcome,
)
from minitorch.course.grading.sandbox import SandboxLost
from minitorch.course.grading.tracebacks import describe_exception, file_location

#: Seconds an exercise's tests may run, all together, when the grader runs them.
EXERCISE_TIMEOUT = 30.0
#: The most characters of messages kept for one exercise (all its tests together).
EXERCISE_OUTPUT_LIMIT = 64 * 1024
#: The most characters of one test's message.
MESSAGE_LIMIT = 1000

__all__ = [
    "EXERCISE_TIMEOUT",
    "LOOP_HINT",
    "outcome_for",
    "run_exercise",
    "run_test",
    "summarize",
    "timed_out_message",
]


def _assertion_message(exc: AssertionError, test: Registration) -> str:
    try:
        text = str(exc).strip()
    except Exception:
        text = ""
    if text:
        return rephrase(text) or text.splitlines()[0]
    where = file_location(exc, test.file)
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if test.private:  # a private test's source is never shown
        return f"assertion failed ({where})" if where else "assertion failed"
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip() if tb else ""
    statement = f": `{line}`" if line else ""
    return f"assertion failed{statement} ({where})" if where else f"assertion failed{statement}"


def outcome_for(exc: BaseException, test: Registration) -> TestOutcome:
    """Classify the exception a judge raised into a status and a one-line message."""
    if isinstance(exc, LearnerError):
        return TestOutcome(test.name, exc.status, exc.message)
    if isinstance(exc, AssertionError):
        return TestOutcome(test.name, FAILED, _assertion_message(exc, test))
    where = file_location(exc, test.file)
    message = describe_exception(exc) + (f" ({where})" if where else "")
    return TestOutcome(test.name, ERROR, message)


def run_test(test: Registration, run: Runner) -> TestOutcome:
    """Run one judge; a :class:`SandboxLost` is left to the caller."""
    try:
        test.func(run)
    except SandboxLost:
        raise
    except BaseException as exc:
        return outcome_for(exc, test)
    return TestOutcome(test.name, PASSED)


LostHandler = Callable[[SandboxLost, Registration, Sequence[TestOutcome]], TestOutcome]


def run_exercise(
    exercise: ExerciseTests,
    run: Runner,
    timeout: float | None = EXERCISE_TIMEOUT,
    on_lost: LostHandler | None = None,
) -> ExerciseResult:
    """Run the exercise's judges in turn, all within ``timeout`` seconds.

    When the learner's code runs out of time the running test is "timed out" and the
    tests after it "not run"; when the learner's process is lost (:class:`SandboxLost`),
    ``on_lost`` says what the running test's outcome is, and the rest are not run.
    """
    run.deadline = time.monotonic() + timeout if timeout else None
    run.limit = timeout
    outcomes: list[TestOutcome] = []
    for test in exercise.tests:
        try:
            outcome = run_test(test, run)
        except SandboxLost as lost:
            if on_lost is None:
                raise
            outcomes.append(on_lost(lost, test, outcomes))
            break
        outcomes.append(outcome)
        if outcome.status == TIMED_OUT:
            break
    names = [t.name for t in exercise.tests]
    private = {t.name for t in exercise.tests if t.private}
    return summarize(exercise.id, exercise.title, exercise.points, names, outcomes, private)


def summarize(
    exercise_id: str,
    title: str,
    points: float,
    test_names: Sequence[str],
    outcomes: Sequence[TestOutcome],
    private: set[str] | frozenset[str] = frozenset(),
) -> ExerciseResult:
    """The exercise's result from its tests' outcomes; missing tests count as not run.

    Partial credit: points x (tests passed / tests of the exercise), to 2 decimals.
    Messages are cleaned and cut, to at most 64 KB for the whole exercise. The tests
    named in ``private`` are marked so, and the exercise's reason (which students see)
    never quotes them: it says how many private tests failed.
    """
    done = {o.name for o in outcomes}
    outcomes = list(outcomes) + [
        TestOutcome(name, NOT_RUN, "not run: the exercise stopped before this test")
        for name in test_names
        if name not in done
    ]
    budget = EXERCISE_OUTPUT_LIMIT
    kept = []
    for o in outcomes:
        message = one_line(o.message, min(MESSAGE_LIMIT, max(budget, 0))) if budget > 0 else ""
        budget -= len(message) + len(o.name)
        kept.append(TestOutcome(o.name, o.status, message, o.name in private))
    outcomes = kept
    if not outcomes:
        return ExerciseResult(exercise_id, title, 0.0, points, ERROR, "no tests for this exercise")
    passed = sum(o.status == PASSED for o in outcomes)
    score = round(points * passed / len(outcomes), 2)
    delegated = next((o.message for o in outcomes if is_delegation(o.message)), None)
    if delegated is not None:  # an answer that hands the piece to a ready-made one: no points
        return ExerciseResult(exercise_id, title, 0.0, points, FAILED, delegated, outcomes)
    if passed == len(outcomes):
        status, reason = PASSED, ""
    else:
        status = next(s for s in STATUS_PRIORITY if any(o.status == s for o in outcomes))
        reason = private_safe_reason(outcomes, status)
    return ExerciseResult(exercise_id, title, score, points, status, reason, outcomes)


def private_safe_reason(outcomes: Sequence[TestOutcome], status: str) -> str:
    """The first public test's message with ``status``; for private tests only a count."""
    for o in outcomes:
        if o.status == status and not o.private:
            return o.message
    failed = sum(o.status != PASSED for o in outcomes if o.private)
    total = sum(o.private for o in outcomes)
    return f"{failed} of {total} private test{'s' if total != 1 else ''} did not pass"
