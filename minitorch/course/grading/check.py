"""``check("01.3")``: run one exercise's tests inside the notebook, for quick feedback."""

from __future__ import annotations

import html
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minitorch.course import manifest
from minitorch.course.grading.errors import GradingError
from minitorch.course.grading.namespace import Namespace
from minitorch.course.grading.notebook import is_loading
from minitorch.course.grading.probes import LocalRunner
from minitorch.course.grading.registry import collect
from minitorch.course.grading.results import (
    ERROR,
    NOT_IMPLEMENTED,
    PASSED,
    ExerciseResult,
    format_points,
)
from minitorch.course.grading.runner import run_exercise

#: Seconds ``check`` lets an exercise's tests run (on the kernel's main thread).
CHECK_TIMEOUT = 60.0

_COLOURS = {PASSED: "#1a7f37", NOT_IMPLEMENTED: "#6e7781"}
_FAILED_COLOUR = "#cf222e"
_LINE_WIDTH = 100


@dataclass
class CheckResult:
    """What ``check`` found; shows as one or two plain lines (deterministic, for nbval),
    and for a kernel exercise one more per kernel: how it compiles for a real GPU."""

    result: ExerciseResult
    compiled: tuple[str, ...] = ()
    #: A line under the result: the hint levels opened, or that a hint exists.
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.result.status == PASSED

    def _parts(self) -> tuple[str, str, str]:
        """(``"01.1 Title"``, the status words, the reason) for both renderings."""
        r = self.result
        head = f"{r.id} {r.title}"
        n, passed = len(r.tests), r.tests_passed
        if r.status == PASSED:
            points = f"{format_points(r.score)}/{format_points(r.max_score)} points"
            return head, f"passed ({passed}/{n} tests, {points})", ""
        if r.status == NOT_IMPLEMENTED:
            return head, "not implemented yet", r.reason
        counts = f" ({passed}/{n} tests)" if n else ""
        return head, f"{r.status}{counts}", r.reason

    def __repr__(self) -> str:
        head, status, reason = self._parts()
        line = f"{head}: {status}"
        if reason and len(line) + 2 + len(reason) <= _LINE_WIDTH:
            line = f"{line}: {reason}"
        elif reason:
            line = f"{line}:\n    {reason}"
        note = [f"    {self.note}"] if self.note else []
        return "\n".join([line, *(f"    {c}" for c in self.compiled), *note])

    def _repr_html_(self) -> str:
        head, status, reason = self._parts()
        colour = _COLOURS.get(self.result.status, _FAILED_COLOUR)
        text = f'{html.escape(head)}: <span style="color: {colour}; font-weight: bold">'
        text += f"{html.escape(status)}</span>"
        if reason:
            text += f": {html.escape(reason)}"
        below = [*self.compiled, *([self.note] if self.note else [])]
        text += "".join(f"<br>&nbsp;&nbsp;&nbsp;&nbsp;{html.escape(c)}" for c in below)
        return f'<div style="font-family: monospace">{text}</div>'


def check(
    exercise_id: str,
    timeout: float | None = CHECK_TIMEOUT,
    test_file: str | Path | None = None,
) -> CheckResult | None:
    """Run exercise ``exercise_id``'s tests against the definitions of the calling notebook.

    The tests come from the chapter's test module (or ``test_file``): the same probes
    and judges the grader uses, here all in the notebook's own process. Returns a
    :class:`CheckResult` (the notebook shows it), or None while the grader loads the
    notebook: grading runs the tests itself.
    """
    if is_loading():
        return None
    chapter, ex = manifest.locate(exercise_id)
    caller = sys._getframe(1).f_globals
    nb = Namespace(caller, origin="this notebook", live=True)
    try:
        found = collect([test_file or chapter.tests], chapter.exercises)
    except GradingError as exc:
        reason = f"could not load the tests (not your fault; tell your instructor): {exc}"
        return CheckResult(ExerciseResult(ex.id, ex.title, 0.0, ex.points, ERROR, reason))
    tests = next(t for t in found if t.id == exercise_id)
    with kernel_launches(caller) as launched:
        result = run_exercise(tests, LocalRunner(nb), timeout)
    compiled = compile_lines(launched) if result.status == PASSED else ()
    return CheckResult(result, compiled, hint_note(exercise_id, result.status == PASSED))


#: Checks of each exercise that did not pass, in this process.
_not_passed: dict[str, int] = {}


def hint_note(exercise_id: str, passed: bool) -> str:
    """After the second check of an exercise that did not pass: that hints exist (and how
    many levels were opened); once it passes: the levels opened, if any."""
    from minitorch.course import hints

    levels = hints.hints_for(exercise_id)
    if not levels:
        return ""
    opened = hints.shown(exercise_id)
    record = f"hints opened: {hints.levels_text(opened)}"
    if passed:
        return record if opened else ""
    _not_passed[exercise_id] = _not_passed.get(exercise_id, 0) + 1
    if _not_passed[exercise_id] < 2:
        return record if opened else ""
    if len(opened) >= len(levels):
        return f"{record} (all {len(levels)})"
    return f'stuck? hint("{exercise_id}") shows a hint, one level at a time' + (
        f" ({record})" if opened else f" ({len(levels)} levels)"
    )


@contextmanager
def kernel_launches(namespace: dict) -> Iterator[dict]:
    """Within the block, the first launch of each kernel the notebook (``namespace``)
    defines: name -> (kernel, block, argument types), for :func:`compile_lines`."""
    launched: dict = {}
    jit = sys.modules.get("minitorch.cuda.jit")
    if jit is None:  # no kernel exercise imported the kernel language
        yield launched
        return
    original = jit.RawKernel.launch

    def launch(kernel: Any, grid: Any, block: Any, args: tuple) -> None:
        name = getattr(kernel, "__name__", "")
        if namespace.get(name) is kernel:  # a kernel the notebook defines (not the package's)
            if name not in launched:
                launched[name] = (kernel, block, tuple(_argument_type(a) for a in args))
        return original(kernel, grid, block, args)

    jit.RawKernel.launch = launch
    try:
        yield launched
    finally:
        jit.RawKernel.launch = original


def _argument_type(value: Any) -> Any:
    """What compiling needs of a launch argument: an array's dtype and rank, or a number."""
    import numpy as np

    if isinstance(value, np.ndarray):
        from minitorch.cuda.launches import Array

        return Array(str(value.dtype), value.ndim)
    return value


def compile_lines(launched: dict) -> tuple[str, ...]:
    """One line per kernel the exercise launched: how it compiles for sm_90 (registers,
    shared memory, occupancy) or why it does not; nothing where the toolchain is missing."""
    if not launched:
        return ()
    try:
        from minitorch.cuda import cross_compile, toolchain
    except ImportError:
        return ()
    if toolchain.missing() is not None:
        return ()
    lines = []
    for name, (kernel, block, args) in launched.items():
        try:
            line = cross_compile.report(kernel, *args, block=block).summary()
        except Exception as exc:  # the simulator ran it; say what compiling said
            line = f"could not be compiled for sm_90 ({type(exc).__name__}: {exc})"
        lines.append(f"`{name}` {line}")
    return tuple(lines)
