"""The grading worker: a fresh process that loads one notebook and runs its exercises.

``python -m minitorch.grading.worker CONFIG.json`` reads its instructions from the
config file and appends one JSON object per line to the events file the config names
(never to stdout, which the notebook may print to). The events, in order:

- ``{"event": "plan", "exercises": [{"id", "title", "points", "tests": [names]}]}``
- ``{"event": "cell", "cell": N}`` before each code cell runs while loading
- ``{"event": "loaded", "failures": [cell failures]}``
- per exercise: ``{"event": "exercise", "id"}``, then per test ``{"event": "test",
  "id", "test"}`` and ``{"event": "outcome", "id", "outcome"}``, then ``{"event":
  "result", "result"}``
- ``{"event": "done"}``, or ``{"event": "fatal", "message"}`` when it cannot grade.

The grader (:mod:`minitorch.grading.grader`) watches the events: it knows what was
running if the worker hangs or dies, and starts another worker for what is left.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from minitorch.grading.errors import GradingError
from minitorch.grading.notebook import load_notebook
from minitorch.grading.registry import collect
from minitorch.grading.results import TestOutcome
from minitorch.grading.runner import run_exercise
from minitorch.manifest import Exercise


class Events:
    """Appends events, one JSON line each, flushed at once."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.dumps = json.dumps  # bound now: a notebook that patches json cannot break us

    def emit(self, event: str, **fields: Any) -> None:
        self.stream.write(self.dumps({"event": event, **fields}) + "\n")
        self.stream.flush()


def work(config: dict[str, Any], events: Events) -> None:
    """Collect the tests, load the notebook, run the exercises asked for."""
    exercises = [Exercise(e["id"], e["title"], e["points"]) for e in config["exercises"]]
    plan = collect(config["test_files"], exercises)
    events.emit(
        "plan",
        exercises=[
            {"id": e.id, "title": e.title, "points": e.points, "tests": [t.name for t in e.tests]}
            for e in plan
        ],
    )
    skip = {int(cell): problem for cell, problem in config.get("skip_cells", {}).items()}
    nb = load_notebook(
        config["notebook"],
        cell_timeout=config.get("cell_timeout"),
        skip_cells=skip,
        on_cell=lambda number: events.emit("cell", cell=number),
    )
    events.emit("loaded", failures=[f.to_dict() for f in nb._failures])
    wanted = config.get("run")
    for exercise in plan:
        if wanted is not None and exercise.id not in wanted:
            continue
        events.emit("exercise", id=exercise.id)

        def on_test(name: str, exercise_id: str = exercise.id) -> None:
            events.emit("test", id=exercise_id, test=name)

        def on_outcome(outcome: TestOutcome, exercise_id: str = exercise.id) -> None:
            events.emit("outcome", id=exercise_id, outcome=outcome.to_dict())

        result = run_exercise(exercise, nb, config.get("timeout"), on_test, on_outcome)
        events.emit("result", result=result.to_dict())
    events.emit("done")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    with open(config["events"], "a", encoding="utf-8") as stream:
        events = Events(stream)
        try:
            work(config, events)
        except GradingError as exc:
            events.emit("fatal", message=str(exc))
        except BaseException as exc:  # a bug here, not in the notebook: say what it was
            events.emit("fatal", message=f"the grading worker failed: {exc!r}")
    # Skip interpreter shutdown: a notebook's threads or atexit hooks must not hang us.
    os._exit(0)


if __name__ == "__main__":
    main()
