"""Grading one notebook: the learner's code in a sandbox, every verdict here.

The notebook runs in a sandboxed worker process (:mod:`minitorch.course.grading.sandbox`),
which only runs the learner's cells and the tests' probes on inputs sent from here, and
returns plain data. The judges, the points (from the manifest), the clock and the report
all stay in this process, out of the learner's reach:

- each exercise has ``timeout`` seconds and the whole run ``total_timeout``, by this
  process's clock; nothing the worker sends extends them;
- a worker that hangs or dies is stopped with everything it started; what it was running
  is reported, and a fresh worker (which skips a cell that killed or hung the last one)
  carries on with the rest.
"""

from __future__ import annotations

import base64
import dataclasses
import marshal
import math
import os
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from minitorch.course import hints, manifest
from minitorch.course.grading.closure import shipped_code
from minitorch.course.grading.errors import GradingError, NotebookError
from minitorch.course.grading.namespace import CellFailure
from minitorch.course.grading.notebook import CELL_TIMEOUT, code_cells, notebook_chapter
from minitorch.course.grading.plain import one_line
from minitorch.course.grading.probes import Runner, is_probe, timed_out_message
from minitorch.course.grading.registry import ExerciseTests, Registration, Suite, collect_suite
from minitorch.course.grading.report import GradeReport
from minitorch.course.grading.results import (
    ERROR,
    TIMED_OUT,
    ExerciseResult,
    TestOutcome,
    format_points,
)
from minitorch.course.grading.review import MAX_FLAGS, Flag, review_cells
from minitorch.course.grading.runner import EXERCISE_TIMEOUT, run_exercise, summarize
from minitorch.course.grading.sandbox import Limits, Sandbox, SandboxLost

#: Seconds a worker may take to start (import minitorch and the probes).
STARTUP_TIMEOUT = 60.0
#: Seconds the whole grading run may take, unless told otherwise.
TOTAL_TIMEOUT = 600.0
#: Extra seconds the worker gets to stop the learner's code itself.
GRACE = 1.0
#: The most cell failures kept from a worker.
MAX_CELL_FAILURES = 200
#: Frames a worker may send that answer nothing before it counts as broken.
MAX_STRAY_FRAMES = 1000


class _OutOfTime(Exception):
    """The total time limit ran out."""


class _Session:
    """One grading run: sandboxes started as needed, exercises judged here."""

    def __init__(
        self,
        notebook: Path,
        cells: list[tuple[int, str]],
        chapter: manifest.Chapter,
        suite: Suite,
        timeout: float | None,
        cell_timeout: float | None,
        total_timeout: float | None,
        seed: int | None,
        limits: Limits,
    ) -> None:
        self.notebook = notebook
        self.cells = cells
        self.chapter = chapter
        self.suite = suite
        self.timeout = timeout
        self.cell_timeout = cell_timeout
        self.total = total_timeout
        self.seed = secrets.randbits(32) if seed is None else int(seed)
        self.limits = limits
        self.only: set[str] | None = None  # grade only these exercises (a regrade)
        self.notices: list[str] = []
        #: what the grader itself saw the worker do that an instructor should look at
        self.flags: list[Flag] = []
        self.started = time.monotonic()
        self.total_deadline = self.started + total_timeout if total_timeout else math.inf
        self.sandbox: Sandbox | None = None
        self.sandboxes = 0
        self.skip_cells: dict[int, str] = {}
        self.cell_failures: list[CellFailure] = []
        self.module_index = {name: i for i, (name, _, _) in enumerate(suite.modules)}
        self.helpers: list[list[str]] = []
        self.modules: list[list[str]] = []
        for index, (_, path, private) in enumerate(suite.modules):
            self._ship(index, path, private)
        test_dirs = {str(path.parent) for _, path, _ in suite.modules}
        self.hide = sorted(
            {str(manifest.ROOT / "tests"), str(manifest.ROOT / "solutions"), *test_dirs}
        )

    def _ship(self, index: int, path: Path, private: bool) -> None:
        """Add what the worker runs for a test module: its probes' closure, after the
        helper modules beside it that the probes use. Private modules go under neutral
        names, so the worker never learns a private test's file name."""
        filename = f"<private tests {index}>" if private else f"<tests {path.name}>"
        for name, code, where in shipped_code(path, filename):
            if private and where.startswith("<test helper"):
                where = f"<private test helper {len(self.helpers)}>"
            data = base64.b64encode(marshal.dumps(compile(code, where, "exec"))).decode()
            if name:
                if name not in {n for n, _ in self.helpers}:
                    self.helpers.append([name, data])
            else:
                self.modules.append([f"_minitorch_tests_{index}", data])

    # -- the run -------------------------------------------------------------------------

    def _warm_up(self) -> None:
        """Run the test modules' ``grader_warm_up()`` (loading a data set the judges
        need, say) while the worker loads the notebook."""
        for name, _, _ in self.suite.modules:
            hook = getattr(sys.modules.get(name), "grader_warm_up", None)
            if callable(hook):
                try:
                    hook()
                except Exception:
                    pass  # the judge that needs it will say what is wrong

    def run(self) -> GradeReport:
        threading.Thread(target=self._warm_up, daemon=True).start()
        results = []
        with tempfile.TemporaryDirectory(prefix="minitorch-grade-", dir=_temp_root()) as folder:
            os.chmod(folder, 0o711)  # the worker (another user) reaches only its own folder
            self.folder = Path(folder)
            try:
                for exercise in self.suite.exercises:
                    if self.only is None or exercise.id in self.only:
                        results.append(self._grade(exercise))
            finally:
                self._stop()
        return GradeReport(
            notebook=one_line(self.notebook.name, 200),
            chapter=self.chapter.id,
            chapter_title=self.chapter.title,
            results=results,
            cell_failures=self.cell_failures,
            seed=self.seed,
            notices=self.notices,
            execution_time=round(time.monotonic() - self.started, 2),
            review=[*review_cells(self.cells, self.chapter), *self.flags][:MAX_FLAGS],
        )

    def _grade(self, exercise: ExerciseTests) -> ExerciseResult:
        names = [t.name for t in exercise.tests]
        if not exercise.tests:
            return summarize(exercise.id, exercise.title, exercise.points, names, [])
        try:
            self._ready()
        except _OutOfTime:
            return self._out_of_time(exercise)
        run = _RemoteRunner(self, self.seed)

        def on_lost(
            lost: SandboxLost, test: Registration, done: Sequence[TestOutcome]
        ) -> TestOutcome:
            return self._lost(lost, exercise, test)

        return run_exercise(exercise, run, self.timeout, on_lost)

    def _out_of_time(self, exercise: ExerciseTests) -> ExerciseResult:
        message = f"not graded: the grading time limit ({self.total:g} s) ran out"
        result = summarize(exercise.id, exercise.title, exercise.points, [], [])
        result.status, result.reason = TIMED_OUT, message
        result.tests = [TestOutcome(t.name, TIMED_OUT, message) for t in exercise.tests]
        return result

    def _forged(self, cell: int | None, exercise: str | None = None) -> None:
        seen = "the notebook's code wrote a frame to the grader's result channel (forged)"
        self.flags.append(Flag(exercise, seen, cell or 0, 0))

    def _lost(self, lost: SandboxLost, exercise: ExerciseTests, test: Registration) -> TestOutcome:
        where = f"exercise {exercise.id}, test `{test.name}`"
        stderr = self.sandbox.stderr_tail() if self.sandbox else ""
        if self.sandbox is not None and self.sandbox.forged:
            self._forged(None, exercise.id)
        self._stop()
        if lost.kind == "timeout":
            if time.monotonic() >= self.total_deadline:
                message = f"the grading time limit ({self.total:g} s) ran out in {where}"
                return TestOutcome(test.name, TIMED_OUT, message)
            message = timed_out_message(
                self.timeout or 0, f"the grader stopped your code in {where}"
            )
            return TestOutcome(test.name, TIMED_OUT, message)
        if lost.kind == "died":
            message = (
                f"the worker process died ({lost.detail}) while running {where}: the code "
                "ended Python (os._exit(), os.abort(), a crash or a resource limit)"
            )
        else:
            message = f"the worker process broke the grading protocol ({lost.detail}) in {where}"
        if stderr and lost.kind == "died":
            message += f"; its last words: {stderr}"
        return TestOutcome(test.name, ERROR, message)

    # -- the sandbox ---------------------------------------------------------------------

    def _stop(self) -> None:
        if self.sandbox is not None:
            sandbox, self.sandbox = self.sandbox, None
            sandbox.stop()

    def _ready(self) -> Sandbox:
        """A worker that has loaded the notebook (skipping cells that killed earlier ones)."""
        attempts = 0
        while self.sandbox is None:
            attempts += 1
            if attempts > len(self.cells) + 2 + STARTUP_RETRIES:
                raise GradingError("the notebook could not be loaded (too many restarts)")
            if time.monotonic() >= self.total_deadline:
                raise _OutOfTime
            self._start()
        return self.sandbox

    _startup_retries = 0

    def _start(self) -> None:
        self.sandboxes += 1
        cpu = None
        if self.total_deadline != math.inf:
            cpu = int(self.total_deadline - time.monotonic()) + 10
        limits = dataclasses.replace(self.limits, cpu_seconds=cpu)
        sandbox = Sandbox(self.folder, self.sandboxes, self.hide, limits)
        try:
            sandbox.start()
        except BlockingIOError:  # fork failed with EAGAIN: retried like a failed startup
            sandbox.stop()
            if self._startup_retries >= STARTUP_RETRIES:
                raise
            self._startup_retries += 1
            time.sleep(0.5 * self._startup_retries)
            return
        current: int | None = None
        phase = "startup"
        try:
            key = sandbox.authenticate()
            sandbox.send(
                {
                    "key": key,
                    "helpers": self.helpers,
                    "modules": self.modules,
                    "cells": self.cells,
                    "skip": {str(k): v for k, v in self.skip_cells.items()},
                    "cell_timeout": self.cell_timeout,
                    "origin": self.notebook.name,
                }
            )
            ready = sandbox.receive(min(time.monotonic() + STARTUP_TIMEOUT, self.total_deadline))
            if ready != {"ready": True}:
                raise SandboxLost("protocol", "it did not start properly")
            phase = "load"
            to_run = [n for n, _ in self.cells if n not in self.skip_cells]
            per_cell = (self.cell_timeout or 60.0) + GRACE
            load_deadline = min(time.monotonic() + per_cell * len(to_run) + 5, self.total_deadline)
            cell_deadline = load_deadline
            while True:
                message = sandbox.receive(min(cell_deadline, load_deadline))
                if isinstance(message, dict) and type(message.get("cell")) is int:
                    if message["cell"] in to_run:
                        current = message["cell"]
                        cell_deadline = time.monotonic() + per_cell
                elif isinstance(message, dict) and isinstance(message.get("loaded"), list):
                    self.cell_failures = _failures(message["loaded"])
                    self.sandbox = sandbox
                    return
        except SandboxLost as lost:
            stderr = sandbox.stderr_tail()
            sandbox.stop()
            if phase == "startup":
                if time.monotonic() >= self.total_deadline:
                    raise _OutOfTime from None
                if self._startup_retries < STARTUP_RETRIES and _transient(lost, stderr):
                    # the machine was briefly out of processes or threads (EAGAIN), e.g.
                    # while a previous sandbox's processes are still being reaped: wait, retry
                    self._startup_retries += 1
                    time.sleep(0.5 * self._startup_retries)
                    return
                detail = f" ({lost.detail})" if lost.detail else ""
                words = f": {stderr}" if stderr else ""
                raise GradingError(f"the grading worker did not start{detail}{words}") from None
            if time.monotonic() >= self.total_deadline:
                raise _OutOfTime from None
            cell = current if current is not None else self._first_unskipped()
            if sandbox.forged:
                self._forged(cell)
            if lost.kind == "died":
                problem = f"killed the worker process ({lost.detail})"
            elif lost.kind == "timeout":
                problem = f"timed out after {self.cell_timeout or 0:g} s (the grader stopped it)"
            else:
                problem = f"broke the grading protocol ({lost.detail})"
            self.skip_cells[cell] = problem

    def _first_unskipped(self) -> int:
        for number, _ in self.cells:
            if number not in self.skip_cells:
                return number
        return self.cells[-1][0] if self.cells else 0

    def call(
        self, func: Callable[..., Any], args: Any, deadline: float | None, limit: float | None
    ) -> Any:
        """Run a probe in the worker; its reply, or SandboxLost."""
        key = self._probe_key(func)
        sandbox = self._ready_or_lost()
        nonce = secrets.token_hex(8)
        now = time.monotonic()
        wait_until = min(
            (deadline if deadline is not None else math.inf) + GRACE, self.total_deadline
        )
        timeout = None if deadline is None else max(deadline - now, 0.001)
        request = {"op": "call", "id": nonce, "module": key[0], "probe": key[1], "args": args}
        request["timeout"], request["limit"] = timeout, limit
        sandbox.send(request)
        for _ in range(MAX_STRAY_FRAMES):
            reply = sandbox.receive(wait_until)
            if isinstance(reply, dict) and reply.get("id") == nonce:
                return reply
        raise SandboxLost("protocol", "it sent too many messages that answer nothing")

    def _ready_or_lost(self) -> Sandbox:
        try:
            return self._ready()
        except _OutOfTime:
            raise SandboxLost("timeout") from None

    def _probe_key(self, func: Callable[..., Any]) -> tuple[int, str]:
        module = getattr(func, "__module__", None)
        if not is_probe(func) or module not in self.module_index:
            raise TypeError(f"{func!r} is not a @probe of the tests being graded")
        if "<locals>" in func.__qualname__:
            raise TypeError(f"probe {func.__qualname__} must be defined at a module's top level")
        return self.module_index[module], func.__name__


def _temp_root() -> str | None:
    """Where the grader's folder goes: the temporary folder, unless other users cannot
    enter it (the worker runs as another user when the grader runs as root)."""
    root = tempfile.gettempdir()
    if os.name != "posix" or os.geteuid() != 0:
        return None
    path = "/"
    for part in Path(root).parts[1:]:
        path = os.path.join(path, part)
        if not os.stat(path).st_mode & 0o001:
            return "/tmp" if os.stat("/tmp").st_mode & 0o001 else None
    return None


class _RemoteRunner(Runner):
    def __init__(self, session: _Session, seed: int) -> None:
        super().__init__(seed)
        self.session = session

    def call(self, func: Callable[..., Any], args: Any) -> Any:
        return self.session.call(func, args, self.deadline, self.limit)


def _failures(data: list[Any]) -> list[CellFailure]:
    failures = []
    for item in data[:MAX_CELL_FAILURES]:
        if not isinstance(item, dict) or type(item.get("cell")) is not int:
            continue
        problem = one_line(item.get("problem"), 300) or "failed"
        error_type = one_line(item.get("error_type"), 80)
        failures.append(CellFailure(item["cell"], problem, error_type))
    return failures


def chapter_test_files(
    chapter: manifest.Chapter,
    test_files: Iterable[str | Path] | None = None,
    extra_test_dirs: Iterable[str | Path] = (),
) -> tuple[list[Path], list[Path]]:
    """The chapter's test module (or ``test_files``), and every test_*.py of the extra
    (private) dirs."""
    files = [Path(p) for p in (test_files if test_files is not None else [chapter.tests])]
    private: list[Path] = []
    for folder in map(Path, extra_test_dirs):
        if not folder.is_dir():
            raise NotebookError(f"no test folder {folder}")
        private.extend(sorted(folder.glob("test_*.py")))
    return files, private


def find_chapter(path: Path) -> manifest.Chapter:
    """The chapter from the notebook's metadata, else from its file name."""
    named = notebook_chapter(path)
    if named is not None:
        try:
            return manifest.chapter(named)
        except KeyError:
            raise NotebookError(
                f"{path.name}'s metadata names chapter {named[:20]!r}, which is not in the "
                "course: pass --chapter ID"
            ) from None
    try:
        return manifest.chapter_for_notebook(path)
    except KeyError as exc:
        raise NotebookError(f"{exc.args[0]}, or pass --chapter ID") from None


def grade(
    notebook: str | Path,
    extra_test_dirs: Iterable[str | Path] = (),
    timeout: float | None = EXERCISE_TIMEOUT,
    chapter: manifest.Chapter | None = None,
    test_files: Iterable[str | Path] | None = None,
    cell_timeout: float | None = CELL_TIMEOUT,
    total_timeout: float | None = TOTAL_TIMEOUT,
    seed: int | None = None,
    limits: Limits | None = None,
    exercises: Iterable[str] | None = None,
    hint_cost: float = 0.0,
) -> GradeReport:
    """Grade a notebook: its code in a sandboxed worker, each exercise's judges here.

    The chapter comes from ``chapter``, else the notebook's metadata, else its file name;
    its tests from the chapter's test module (or ``test_files``) plus every ``test_*.py``
    in ``extra_test_dirs`` (private tests). Each exercise gets ``timeout`` seconds, each
    cell ``cell_timeout`` seconds while the notebook loads, and all of it
    ``total_timeout``; ``seed`` fixes the inputs the judges draw; ``exercises`` (ids)
    grades only those (a regrade). A notebook whose metadata names another chapter than
    ``chapter`` is graded as ``chapter``, and the report says so first. The hint levels
    the notebook records having shown are reported; each costs ``hint_cost`` points of its
    exercise (none by default, never below 0). Raises
    :class:`NotebookError` for a missing or invalid notebook or an unknown chapter,
    :class:`GradingError` when the tests cannot be loaded.
    """
    path = Path(notebook)
    if path.is_symlink():  # a submission that links to the solutions, or to another's
        raise NotebookError(f"{path} is a symbolic link: grade the notebook file itself")
    cells = code_cells(path)  # a missing or invalid notebook fails here, with a clear message
    notices = []
    if chapter is None:
        chapter = find_chapter(path)
    else:
        named = notebook_chapter(path)
        if named is not None and named != chapter.id:
            notices.append(wrong_chapter_notice(named, chapter))
    only = None
    if exercises is not None:
        only = set(exercises)
        unknown = sorted(only - {e.id for e in chapter.exercises})
        if unknown:
            raise NotebookError(
                f"chapter {chapter.id} has no exercise {', '.join(unknown)}; its exercises are "
                f"{', '.join(e.id for e in chapter.exercises)}"
            )
    files, private = chapter_test_files(chapter, test_files, extra_test_dirs)
    suite = collect_suite(files, chapter.exercises, private)
    session = _Session(
        path, cells, chapter, suite, timeout, cell_timeout, total_timeout, seed, limits or Limits()
    )
    session.only, session.notices = only, notices
    report = session.run()
    ids = {e.id for e in chapter.exercises}
    report.hints = {k: v for k, v in hints.opened_in(path).items() if k in ids}
    charge_hints(report, hint_cost)
    return report


def charge_hints(report: GradeReport, cost: float) -> None:
    """Take ``cost`` points per hint level opened off that exercise's score (not below 0)."""
    report.hint_cost = cost
    if cost <= 0:
        return
    for r in report.results:
        levels = report.hints.get(r.id, [])
        if levels and r.score > 0:
            charged = min(r.score, round(cost * len(levels), 2))
            r.score = round(r.score - charged, 2)
            note = f"hints {hints.levels_text(levels)}: -{format_points(charged)}"
            r.reason = f"{r.reason}; {note}" if r.reason else note


def wrong_chapter_notice(named: str, chapter: manifest.Chapter) -> str:
    """What the report says first when the notebook is of another chapter."""
    try:
        title = f" ({manifest.chapter(named).title})"
    except KeyError:
        title = ""
    return (
        f"WRONG CHAPTER: this notebook's metadata says chapter {one_line(named, 20)}{title}, "
        f"but it was graded as chapter {chapter.id} ({chapter.title}); was the right file "
        "uploaded?"
    )


STARTUP_RETRIES = 3


def _transient(lost: SandboxLost, stderr: str) -> bool:
    """A startup failure that says the system was briefly out of processes or threads."""
    text = f"{lost.detail or ''} {stderr or ''}"
    return "BlockingIOError" in text or "Resource temporarily unavailable" in text
