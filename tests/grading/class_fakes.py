"""A fake grader for the class-grading tests: a "notebook" is a JSON file that says what
each exercise of the fixture chapter scores and what its failure says, so the batch's own
logic (ids, rosters, files, exports) is tested in-process in milliseconds."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from grading_fixtures import EXERCISES, fixture_chapter

from minitorch.course import grading, manifest
from minitorch.course.grading.errors import NotebookError


class FakeReport:
    """What ``grade`` returns, from a spec ``{"99.1": [points, message], ...}``."""

    def __init__(self, spec: dict[str, Any], seed: int | None) -> None:
        self.notices: list[str] = []
        self.spec, self.seed = spec, seed
        self.results = [
            SimpleNamespace(status="passed" if not self._message(e.id) else "failed", reason="")
            for e in EXERCISES
        ]

    def _message(self, exercise_id: str) -> str:
        return self.spec.get(exercise_id, [0, "not done"])[1]

    def to_gradescope(self) -> dict[str, Any]:
        tests = []
        for e in EXERCISES:
            points, message = self.spec.get(e.id, [0, "not done"])
            tests.append(
                {
                    "number": e.id,
                    "name": f"{e.id} {e.title}",
                    "score": float(points),
                    "max_score": float(e.points),
                    "status": "failed" if message else "passed",
                    "output": message,
                }
            )
        for number, (title, points, got, message) in self.spec.get("extra", {}).items():
            tests.append(
                {
                    "number": number,
                    "name": f"{number} {title}",
                    "score": float(got),
                    "max_score": float(points),
                    "status": "failed" if message else "passed",
                    "output": message,
                }
            )
        score = round(sum(t["score"] for t in tests), 2)
        top = self.spec.get("output", "")
        return {
            "score": score,
            "max_score": round(sum(t["max_score"] for t in tests), 2),
            "output": f"fake.ipynb (chapter 99): {score}/6 points, 0 of 3 exercises passed\n{top}",
            "tests": tests,
            "seed": self.seed,
            "chapter": "99",
            "review": self.spec.get("review", []),
        }


def fake_grade(path: Any, seed: int | None = None, **_: Any) -> FakeReport:
    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise NotebookError(f"{Path(path).name} is not a Jupyter notebook: {err}") from None
    return FakeReport(spec, 1234 if seed is None else seed)


@pytest.fixture
def fake_course(monkeypatch: pytest.MonkeyPatch) -> manifest.Chapter:
    """The fixture chapter as the only chapter, graded by ``fake_grade``."""
    chapter = fixture_chapter()
    monkeypatch.setattr(manifest, "CHAPTERS", (chapter,))
    monkeypatch.setattr(grading, "grade", fake_grade)
    return chapter


def submit(path: Path, **spec: Any) -> Path:
    """Write a fake notebook; ``spec`` maps "99_1" style keys to [points, message]."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k.replace("_", "."): v for k, v in spec.items() if k[:2].isdigit()}
    data.update({k: v for k, v in spec.items() if not k[:2].isdigit()})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


FULL = {"99_1": [2, ""], "99_2": [3, ""], "99_3": [1, ""]}
