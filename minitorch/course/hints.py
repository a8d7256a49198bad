"""``hint("02.3")``: a stuck learner's next hint, one level at a time, and the record of it.

Each exercise has up to three levels, written in ``minitorch/course/hints/NN_slug.md``:

1. the idea, and the lesson section that teaches it;
2. the approach;
3. the last step.

No hint text sits in the exercise notebook: a learner asks for the next level. What was
shown is recorded in the notebook itself, in the output of the cell that asked (output
metadata ``{"minitorch": {"hint": "02.3", "level": 2, "shown": [1, 2]}}``: every level shown
so far, since re-running the cell replaces its output), so the record travels with the
notebook a learner submits: the grader reads it (:func:`opened_in`) into results.json, the
gradebook and the feedback. An instructor may charge for hints (``--hint-cost``); by default
opening one costs nothing.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minitorch.course import manifest

FOLDER = Path(__file__).resolve().parent / "hints"
LEVELS = ("the idea", "the approach", "the last step")
#: The output metadata key that records a shown hint.
KEY = "minitorch"

_EXERCISE = re.compile(r"^## (\d\d\.\d+)\s*$", re.M)
_LEVEL = re.compile(r"^### ([1-9])\s*$", re.M)

#: Levels shown in this process: exercise id -> levels (the kernel's own record).
_shown: dict[str, set[int]] = {}


def add_cost_option(parser: Any) -> None:
    """``--hint-cost POINTS`` on a grading command (argparse)."""
    parser.add_argument(
        "--hint-cost",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="points each opened hint level costs its exercise (default 0: hints are free)",
    )


def hints_file(chapter: manifest.Chapter) -> Path:
    return FOLDER / f"{chapter.stem}.md"


def has_hints(chapter: manifest.Chapter) -> bool:
    return hints_file(chapter).exists()


def parse(text: str, where: str = "hints") -> dict[str, list[str]]:
    """``## NN.k`` sections of ``### 1`` .. ``### 3`` levels: exercise id -> level texts."""
    found: dict[str, list[str]] = {}
    parts = _EXERCISE.split(text)
    for exercise_id, body in zip(parts[1::2], parts[2::2], strict=True):
        levels = _LEVEL.split(body)
        numbers = [int(n) for n in levels[1::2]]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"{where}, {exercise_id}: levels must be ### 1, ### 2, ... in order")
        found[exercise_id] = [t.strip() for t in levels[2::2]]
    return found


def hints_for(exercise_id: str) -> list[str]:
    """The levels written for ``exercise_id`` (an empty list if its chapter has none)."""
    chapter, _ = manifest.locate(exercise_id)
    if not has_hints(chapter):
        return []
    path = hints_file(chapter)
    return parse(path.read_text(encoding="utf-8"), str(path)).get(exercise_id, [])


@dataclass(frozen=True)
class Hint:
    """One shown level; in a notebook it renders as Markdown and records itself."""

    exercise: str
    level: int
    of: int
    text: str
    #: Every level of this exercise shown so far, this one included: re-running the cell
    #: replaces its output, and the new record must not forget the earlier levels.
    shown: tuple[int, ...] = ()

    @property
    def heading(self) -> str:
        kind = LEVELS[self.level - 1] if self.level <= len(LEVELS) else "more"
        return f"Hint {self.level} of {self.of} for {self.exercise} ({kind})"

    @property
    def footer(self) -> str:
        if self.level < self.of:
            return f'hint("{self.exercise}") again shows level {self.level + 1}.'
        return "That was the last hint for this exercise."

    def record(self) -> dict[str, Any]:
        shown = sorted({*self.shown, self.level})
        return {KEY: {"hint": self.exercise, "level": self.level, "shown": shown}}

    def __repr__(self) -> str:
        return f"{self.heading}\n\n{self.text}\n\n{self.footer}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        markdown = f"**{self.heading}**\n\n{self.text}\n\n*{self.footer}*"
        return {"text/markdown": markdown, "text/plain": repr(self)}, self.record()


def hint(exercise_id: str, level: int | None = None) -> Hint | None:
    """Show the next hint level for ``exercise_id`` (or ``level``); the notebook records it.

    The next level is one past the highest already shown, in this kernel or in the saved
    notebook; after the last, the last again. Returns None while the grader loads the
    notebook (grading reads the record, it does not open hints)."""
    from minitorch.course.grading.notebook import is_loading

    if is_loading():
        return None
    levels = hints_for(exercise_id)
    if not levels:
        raise ValueError(f"exercise {exercise_id} has no hints written yet")
    if level is None:
        seen = _shown.get(exercise_id, set()) | _saved_levels(exercise_id)
        level = min(max(seen, default=0) + 1, len(levels))
    if not 1 <= level <= len(levels):
        raise ValueError(f"exercise {exercise_id} has hint levels 1 to {len(levels)}, not {level}")
    _shown.setdefault(exercise_id, set()).add(level)
    every = tuple(shown(exercise_id))
    return Hint(exercise_id, level, len(levels), levels[level - 1], every)


def shown(exercise_id: str) -> list[int]:
    """The levels of ``exercise_id`` shown in this kernel or saved in its notebook."""
    return sorted(_shown.get(exercise_id, set()) | _saved_levels(exercise_id))


def opened_in(notebook: dict | str | Path) -> dict[str, list[int]]:
    """The hint levels a notebook records having shown: exercise id -> sorted levels."""
    if isinstance(notebook, (str, Path)):
        try:
            notebook = json.loads(Path(notebook).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
    found: dict[str, set[int]] = {}
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else []:
            meta = output.get("metadata") if isinstance(output, dict) else None
            record = meta.get(KEY) if isinstance(meta, dict) else None
            if not isinstance(record, dict):
                continue
            exercise_id = record.get("hint")
            if not isinstance(exercise_id, str):
                continue
            shown = record.get("shown")
            levels = [record.get("level"), *(shown if isinstance(shown, list) else [])]
            good = {n for n in levels if type(n) is int and 1 <= n <= 9}
            if good:
                found.setdefault(exercise_id, set()).update(good)
    return {k: sorted(v) for k, v in sorted(found.items())}


def describe(opened: dict[str, list[int]]) -> str:
    """``02.3: 1-2; 02.5: 1`` (or "" when none was opened)."""
    return "; ".join(f"{k}: {levels_text(v)}" for k, v in opened.items() if v)


def levels_text(levels: list[int]) -> str:
    """``1-3`` for the first three levels, ``2`` or ``1, 3`` otherwise."""
    if len(levels) > 1 and levels == list(range(1, max(levels) + 1)):
        return f"1-{max(levels)}"
    return ", ".join(map(str, levels))


def _saved_levels(exercise_id: str) -> set[int]:
    """Levels recorded in the saved copy of the running notebook (JupyterLab tells the
    kernel its notebook's path in ``JPY_SESSION_NAME``); none outside JupyterLab."""
    path = os.environ.get("JPY_SESSION_NAME", "")
    if not path.endswith(".ipynb"):
        return set()
    return set(opened_in(path).get(exercise_id, []))
