"""The class's scores in the shapes the LMSs import.

- ``canvas.csv`` (``--canvas COLUMN``): Canvas's gradebook import (Instructure, "How do I
  import grades in the Gradebook?") reads a CSV whose first columns are its export's
  identity columns (``Student, ID, SIS User ID, SIS Login ID, Section``), matches students
  on ``ID`` (Canvas's user id) or the SIS ids, and takes each further column as an
  assignment: ``COLUMN`` as exported (``Homework 4 (123456)``) updates that assignment, a
  new name creates one. An optional ``    Points Possible`` line gives the points. A blank
  cell changes nothing, so a student with no submission is left blank.
- ``gradescope.csv``: the columns of Gradescope's "Download Grades" export (``Name, SID,
  Email, Total Score, Max Points, Status, Submission ID, Lateness``, then one column per
  question, here per exercise ``NN.k: title (P pts)``).

Every cell goes through ``safe_text.csv_cell``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minitorch.course.grading.results import format_points
from minitorch.course.roster import CANVAS_IDENTITY, Roster
from minitorch.course.safe_text import csv_cell

_ALSO_IDENTITY = ("Integration ID",)


def _write(path: Path, fields: Sequence[str], rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([csv_cell(k) for k in fields])
        for r in rows:
            writer.writerow([csv_cell(r.get(k)) for k in fields])


def _score(row: dict[str, Any]) -> str:
    return "" if row.get("status") == "missing" else format_points(float(row["total"]))


def write_canvas(
    rows: list[dict[str, Any]], roster: Roster | None, column: str, max_score: float, path: Path
) -> list[str]:
    """canvas.csv for the kept rows; returns the students left out (no Canvas id)."""
    if roster is not None and roster.is_canvas:
        lower = {h.strip().lower(): h for h in roster.headers}
        wanted = [*CANVAS_IDENTITY[:4], *_ALSO_IDENTITY, CANVAS_IDENTITY[4]]
        identity = [lower[h.lower()] for h in wanted if h.lower() in lower]
    else:
        identity = list(CANVAS_IDENTITY)
    fields = [*identity, column]
    out, left_out = [], []
    if roster is not None and roster.points_possible is not None:
        out.append({identity[0]: "    Points Possible", column: format_points(max_score)})
    for r in rows:
        entry = r.get("_roster")
        if entry is not None and roster is not None and roster.is_canvas:
            values = {h: entry.get(h, "") for h in identity}
        elif r.get("_ids", {}).get("canvas"):
            values = {"Student": r.get("_name", ""), "ID": r["_ids"]["canvas"]}
        else:
            left_out.append(r["student"])
            continue
        out.append({**values, column: _score(r)})
    _write(path, fields, out)
    return left_out


def write_gradescope(
    rows: list[dict[str, Any]],
    roster: Roster | None,
    columns: Sequence[tuple[str, str, float]],
    max_score: float,
    path: Path,
) -> None:
    """gradescope.csv: one line per kept row; ``columns`` are (exercise id, title, points)."""
    per_exercise = [(e, f"{e}: {title} ({float(points):.1f} pts)") for e, title, points in columns]
    fields = ["Name", "SID", "Email", "Total Score", "Max Points", "Status"]
    fields += ["Submission ID", "Lateness", *(name for _, name in per_exercise)]
    out = []
    for r in rows:
        ids, entry = r.get("_ids", {}), r.get("_roster")
        name, sid, email = r.get("_name", ""), ids.get("sid", ""), ids.get("email", "")
        if entry is not None and roster is not None:
            name = roster.display_name(entry) or name
            sid = _first(entry, roster, ("sid", "sis user id", "student id", "id")) or sid
            email = _first(entry, roster, ("email", "e-mail", "sis login id")) or email
        missing = r.get("status") == "missing"
        line = {
            "Name": name,
            "SID": sid,
            "Email": email,
            "Total Score": _score(r),
            "Max Points": format_points(max_score),
            "Status": "Missing" if missing else "Graded",
            "Submission ID": r.get("_submission_id", ""),
            "Lateness": "late" if r.get("late") == "yes" else "",
        }
        for exercise, header in per_exercise:
            points = r.get(exercise)
            line[header] = "" if missing or points is None else format_points(float(points))
        out.append(line)
    _write(path, fields, out)


def _first(entry: dict[str, str], roster: Roster, kinds: tuple[str, ...]) -> str:
    for kind in kinds:
        for h in roster.columns((kind,)):
            if entry.get(h):
                return entry[h]
    return ""
