"""An instructor's manual adjustments (``--adjustments adjustments.csv``) and the late
penalty, applied on top of what the tests gave.

The CSV has a header ``student, exercise, points, comment``: ``student`` is the gradebook's
``student`` id (or a roster id of the student), ``exercise`` an exercise id or empty for
the total, ``points`` what to add (negative to take off), ``comment`` the reason the
student reads in their feedback. Adjustments live in this file, not in results.json, so
every run (a regrade too) applies them afresh and never twice.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COLUMNS = ("student", "exercise", "points", "comment")


@dataclass(frozen=True)
class Adjustment:
    student: str
    exercise: str
    points: float
    comment: str

    def to_dict(self) -> dict[str, Any]:
        return {"exercise": self.exercise, "points": self.points, "comment": self.comment}


def read_adjustments(path: str | Path) -> list[Adjustment]:
    """The adjustments of a CSV; a ValueError naming the line for anything malformed."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"--adjustments {path}: cannot read it ({err.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"--adjustments {path}: not UTF-8 text") from None
    if "\x00" in text:
        raise ValueError(f"--adjustments {path}: a binary file, not a CSV")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    headers = [h.strip().lower() for h in reader.fieldnames or []]
    if not set(COLUMNS[:3]) <= set(headers):
        raise ValueError(
            f"--adjustments {path}: needs the columns {', '.join(COLUMNS)}, got {headers}"
        )
    out = []
    for number, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items() if k}
        if not any(row.values()):
            continue
        try:
            points = float(row["points"])
        except ValueError:
            points = math.nan
        if not math.isfinite(points) or not row["student"]:
            raise ValueError(
                f"--adjustments {path}, line {number}: needs a student and a number of "
                f"points, got {row['student']!r}, {row['points']!r}"
            )
        out.append(Adjustment(row["student"], row["exercise"], points, row.get("comment", "")))
    return out


def for_student(adjustments: list[Adjustment], ids: set[str]) -> list[Adjustment]:
    """The adjustments whose student is one of ``ids`` (compared without case)."""
    wanted = {i.lower() for i in ids if i}
    return [a for a in adjustments if a.student.lower() in wanted]


def apply(
    results: dict[str, Any], adjustments: list[dict[str, Any]], late: bool, late_penalty: float
) -> dict[str, Any]:
    """``results`` with its score recomputed from its tests, plus ``adjustments`` (dicts
    of exercise, points, comment), less ``late_penalty`` percent of that for a late
    submission; never below 0. The same inputs give the same score however often it runs."""
    tests_total = sum(float(t.get("score", 0)) for t in results.get("tests", []))
    if not results.get("tests"):
        tests_total = float(results.get("score", 0) or 0)
    added = sum(a["points"] for a in adjustments)
    penalty = round(max(tests_total + added, 0) * late_penalty / 100, 2) if late else 0.0
    results["adjustments"] = list(adjustments)
    results["late"] = late
    results["late_penalty"] = penalty
    results["score"] = round(max(tests_total + added - penalty, 0.0), 2)
    return results
