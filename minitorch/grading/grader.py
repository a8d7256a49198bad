"""Grading one notebook: run its exercises in worker processes, never in this one.

A worker (:mod:`minitorch.grading.worker`) loads the notebook once and runs the
exercises in turn, reporting each step as a line in an events file. This side enforces
the time limits: when an exercise (or a cell while loading) runs too long, or the worker
dies, it records what was running, and a fresh worker carries on with what is left.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from minitorch import manifest
from minitorch.grading.errors import GradingError, NotebookError
from minitorch.grading.namespace import CellFailure
from minitorch.grading.notebook import CELL_TIMEOUT, code_cells
from minitorch.grading.report import GradeReport
from minitorch.grading.results import ERROR, TIMED_OUT, ExerciseResult, TestOutcome
from minitorch.grading.runner import EXERCISE_TIMEOUT, summarize, timed_out_message

#: Seconds a worker may take to start (import the tests) before it is given up on.
STARTUP_TIMEOUT = 60.0
#: Seconds between two steps of a worker that runs no learner code.
STEP_TIMEOUT = 10.0
#: Extra seconds the worker gets to stop itself before it is killed.
GRACE = 1.0
_POLL = 0.02


def _exit_description(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


class _EventReader:
    """Reads the complete lines a worker has appended to its events file so far."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def read(self) -> list[dict[str, Any]]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        events = []
        for line in data[:end].splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # not ours: the worker writes only whole JSON lines
            if isinstance(event, dict) and "event" in event:
                events.append(event)
        return events


class _Plan:
    """An exercise as the worker reported it: id, title, points and test names."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.id: str = data["id"]
        self.title: str = data["title"]
        self.points: float = data["points"]
        self.tests: list[str] = list(data["tests"])


class _Session:
    """Runs workers until every exercise has a result."""

    def __init__(
        self,
        notebook: Path,
        chapter: manifest.Chapter,
        test_files: Sequence[Path],
        timeout: float | None,
        cell_timeout: float | None,
    ) -> None:
        self.notebook = notebook
        self.chapter = chapter
        self.test_files = test_files
        self.timeout = timeout
        self.cell_timeout = cell_timeout
        self.plan: dict[str, _Plan] = {}
        self.pending: list[str] | None = None
        self.results: dict[str, ExerciseResult] = {}
        self.skip_cells: dict[int, str] = {}
        self.cell_failures: list[CellFailure] = []
        # What the current worker is doing: ("startup",), ("cell", n), ("step",) or
        # ("exercise", id); the tests it finished and the one it runs.
        self.phase: tuple[Any, ...] = ("startup",)
        self.deadline = 0.0
        self.outcomes: list[TestOutcome] = []
        self.current_test: str | None = None

    def run(self) -> GradeReport:
        with tempfile.TemporaryDirectory(prefix="minitorch-grade-") as tmp:
            attempt = 0
            finished = False
            while not finished:
                attempt += 1
                finished = self._run_worker(Path(tmp), attempt)
        results = [self.results[i] for i in self.plan if i in self.results]
        return GradeReport(
            notebook=self.notebook.name,
            chapter=self.chapter.id,
            chapter_title=self.chapter.title,
            results=results,
            cell_failures=self.cell_failures,
        )

    # -- one worker ---------------------------------------------------------------

    def _config(self, folder: Path, attempt: int) -> Path:
        config = {
            "notebook": str(self.notebook.resolve()),
            "events": str(folder / f"events-{attempt}.jsonl"),
            "test_files": [str(Path(p).resolve()) for p in self.test_files],
            "exercises": [
                {"id": e.id, "title": e.title, "points": e.points} for e in self.chapter.exercises
            ],
            "run": self.pending,
            "skip_cells": {str(cell): problem for cell, problem in self.skip_cells.items()},
            "timeout": self.timeout,
            "cell_timeout": self.cell_timeout,
        }
        path = folder / f"config-{attempt}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        Path(config["events"]).touch()
        return path

    def _run_worker(self, folder: Path, attempt: int) -> bool:
        """Start a worker and follow it; True when grading is complete."""
        config = self._config(folder, attempt)
        events = _EventReader(folder / f"events-{attempt}.jsonl")
        stderr_path = folder / f"stderr-{attempt}.txt"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(manifest.ROOT), env.get("PYTHONPATH", "")) if p
        )
        env.setdefault("MPLBACKEND", "Agg")  # plt.show() must not open a window
        self._enter(("startup",), STARTUP_TIMEOUT)
        with open(stderr_path, "wb") as stderr:
            worker = subprocess.Popen(
                [sys.executable, "-m", "minitorch.grading.worker", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=env,
                start_new_session=(os.name == "posix"),
            )
        try:
            while True:
                for event in events.read():
                    if self._handle(event):
                        self._wait_or_kill(worker)
                        return True
                if worker.poll() is not None:
                    for event in events.read():
                        if self._handle(event):
                            return True
                    return self._worker_lost(_exit_description(worker.returncode), stderr_path)
                if time.monotonic() > self.deadline:
                    self._kill(worker)
                    return self._worker_lost(None, stderr_path)
                time.sleep(_POLL)
        finally:
            self._kill(worker)

    def _enter(self, phase: tuple[Any, ...], seconds: float | None) -> None:
        self.phase = phase
        self.deadline = time.monotonic() + (seconds + GRACE if seconds else math.inf)

    def _handle(self, event: dict[str, Any]) -> bool:
        """Follow one event; True when the worker reports it is done."""
        kind = event["event"]
        if kind == "fatal":
            raise GradingError(event["message"])
        if kind == "plan":
            if not self.plan:
                self.plan = {e["id"]: _Plan(e) for e in event["exercises"]}
                self.pending = list(self.plan)
        elif kind == "cell":
            self._enter(("cell", event["cell"]), self.cell_timeout)
        elif kind == "loaded":
            self.cell_failures = [CellFailure.from_dict(f) for f in event["failures"]]
            self._enter(("step",), STEP_TIMEOUT)
        elif kind == "exercise":
            self._enter(("exercise", event["id"]), self.timeout)
            self.outcomes, self.current_test = [], None
        elif kind == "test":
            self.current_test = event["test"]
        elif kind == "outcome":
            self.outcomes.append(TestOutcome.from_dict(event["outcome"]))
            self.current_test = None
        elif kind == "result":
            self._finish(ExerciseResult.from_dict(event["result"]))
            self._enter(("step",), STEP_TIMEOUT)
        elif kind == "done":
            return True
        return False

    def _finish(self, result: ExerciseResult) -> None:
        self.results[result.id] = result
        if self.pending is not None and result.id in self.pending:
            self.pending.remove(result.id)

    # -- when a worker dies or hangs ------------------------------------------------

    def _worker_lost(self, died: str | None, stderr_path: Path) -> bool:
        """Record what the lost worker was running; True when nothing is left to grade.

        ``died`` says how the worker died ("exit code 3"), or is None when it was
        stopped for running past its time limit.
        """
        phase = self.phase
        if phase[0] == "startup" or self.pending is None:
            if died:
                message = f"the grading worker died ({died}) before it started grading"
            else:
                message = f"the grading worker did not start within {STARTUP_TIMEOUT:g} s"
            raise GradingError(_with_stderr(message, stderr_path))
        if phase[0] == "cell":  # the next worker skips this cell
            if died:
                problem = f"killed the worker process ({died})"
            else:
                problem = f"timed out after {self.cell_timeout:g} s (the grader stopped it)"
            self.skip_cells[phase[1]] = problem
            return False
        if not self.pending:
            return True
        if phase[0] == "exercise":
            exercise_id, outcomes = phase[1], list(self.outcomes)
        else:  # between steps: blame the next exercise, so that grading moves on
            exercise_id, outcomes = self.pending[0], []
        plan = self.plan[exercise_id]
        done = {o.name for o in outcomes}
        running = self.current_test or next((t for t in plan.tests if t not in done), None)
        where = f"exercise {exercise_id}" + (f", test `{running}`" if running else "")
        if died:
            status = ERROR
            message = (
                f"the worker process died ({died}) while running {where}: the code ended "
                f"Python (os._exit(), os.abort() or a crash)"
            )
        else:
            status = TIMED_OUT
            message = timed_out_message(
                self.timeout or 0, f"the grader stopped the worker in {where}"
            )
        if running is not None:
            outcomes.append(TestOutcome(running, status, message))
        result = summarize(plan.id, plan.title, plan.points, plan.tests, outcomes)
        if not plan.tests:
            result.status, result.reason = status, message
        self._finish(result)
        return not self.pending

    # -- processes --------------------------------------------------------------------

    @staticmethod
    def _kill(worker: subprocess.Popen[bytes]) -> None:
        if worker.poll() is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(worker.pid, signal.SIGKILL)  # the worker and anything it started
            else:
                worker.kill()
        except (ProcessLookupError, PermissionError):
            worker.kill()
        worker.wait()

    def _wait_or_kill(self, worker: subprocess.Popen[bytes]) -> None:
        try:
            worker.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill(worker)


def _with_stderr(message: str, stderr_path: Path) -> str:
    """Add the last line the worker wrote to stderr, which usually says what went wrong."""
    try:
        lines = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return f"{message}: {lines[-1]}" if lines else message


def chapter_test_files(
    chapter: manifest.Chapter,
    test_files: Iterable[str | Path] | None = None,
    extra_test_dirs: Iterable[str | Path] = (),
) -> list[Path]:
    """The chapter's test module (or ``test_files``) and every test_*.py of the extra dirs."""
    files = [Path(p) for p in (test_files if test_files is not None else [chapter.tests])]
    for folder in map(Path, extra_test_dirs):
        if not folder.is_dir():
            raise NotebookError(f"no test folder {folder}")
        files.extend(sorted(folder.glob("test_*.py")))
    return files


def grade(
    notebook: str | Path,
    extra_test_dirs: Iterable[str | Path] = (),
    timeout: float | None = EXERCISE_TIMEOUT,
    chapter: manifest.Chapter | None = None,
    test_files: Iterable[str | Path] | None = None,
    cell_timeout: float | None = CELL_TIMEOUT,
) -> GradeReport:
    """Grade a notebook: each exercise's tests, run in fresh worker processes.

    The chapter comes from the notebook's file name unless given; its tests from the
    chapter's test module (or ``test_files``) plus every ``test_*.py`` in
    ``extra_test_dirs``. Each exercise gets ``timeout`` seconds, each cell
    ``cell_timeout`` seconds while the notebook loads. Raises :class:`NotebookError`
    for a missing or invalid notebook or an unknown chapter, :class:`GradingError`
    when the tests cannot be loaded.
    """
    path = Path(notebook)
    code_cells(path)  # a missing or invalid notebook fails here, with a clear message
    if chapter is None:
        try:
            chapter = manifest.chapter_for_notebook(path)
        except KeyError as exc:
            raise NotebookError(exc.args[0]) from None
    files = chapter_test_files(chapter, test_files, extra_test_dirs)
    return _Session(path, chapter, files, timeout, cell_timeout).run()
