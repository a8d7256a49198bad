"""A class roster (Canvas's gradebook export, Gradescope's roster, or any CSV of students),
and which row a submission belongs to.

Canvas's gradebook export (Instructure's guide "How do I export grades in the Gradebook?",
and the notes on its CSV in universities' Canvas help pages) starts
``Student, ID, SIS User ID, SIS Login ID, Section`` (sometimes ``Integration ID`` too),
then one column per assignment; its second line is ``    Points Possible`` with each
assignment's points (and some exports add a ``Manual Posting`` line). Gradescope's roster
is ``First Name, Last Name, SID, Email, ...``.

A submission is matched on the id columns only (Canvas's user id against ``ID``, a SID
against ``SID``/``SIS User ID``/``Student ID``, an e-mail against ``Email``/``SIS Login
ID``; a plain file's name against any id column), never on a display name: a student
cannot take another's row by choosing a name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

#: Canvas's identity columns, in its order: what its gradebook import needs.
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: id kind of a submission -> the roster headers (lowercased) that hold it.
ID_COLUMNS = {
    "canvas": ("id", "canvas id", "canvas user id", "user id", "user_id"),
    "sid": ("sid", "student id", "sis user id", "student number"),
    "email": ("email", "e-mail", "email address", "sis login id", "login", "login id"),
}
ANY_ID = tuple(sorted({h for hs in ID_COLUMNS.values() for h in hs} | {"username", "netid"}))
#: Lines of Canvas's export that are not students (matched on the first cell, stripped).
NOT_STUDENTS = ("points possible", "manual posting")
NAME_COLUMNS = ("student", "name", "full name")


@dataclass
class Roster:
    """The roster's own headers and rows (values as written), Canvas's Points Possible line
    if there is one, and notes on rows that are no student or name no id."""

    headers: list[str]
    rows: list[dict[str, str]]
    points_possible: dict[str, str] | None = None
    notes: list[str] = field(default_factory=list)

    def columns(self, kinds: tuple[str, ...]) -> list[str]:
        """The roster's headers that are one of ``kinds`` (lowercased names)."""
        return [h for h in self.headers if h.strip().lower() in kinds]

    def id_columns(self, kind: str) -> list[str]:
        """The headers that hold ids of ``kind``; a SID falls back to a bare ``id``
        column only in a roster with no SID column."""
        found = self.columns(ID_COLUMNS.get(kind, ()))
        return found or (self.columns(("id",)) if kind == "sid" else [])

    def label(self, row: dict[str, str]) -> str:
        """A row's id for the gradebook's ``student`` column: its first id value."""
        for h in self.columns(ANY_ID):
            if row.get(h, "").strip():
                return row[h].strip()
        return ""

    def display_name(self, row: dict[str, str]) -> str:
        for h in self.columns(NAME_COLUMNS):
            if row.get(h):
                return row[h]
        first = next((row[h] for h in self.columns(("first name",)) if row.get(h)), "")
        last = next((row[h] for h in self.columns(("last name",)) if row.get(h)), "")
        return f"{first} {last}".strip()

    @property
    def is_canvas(self) -> bool:
        return {"student", "id"} <= {h.strip().lower() for h in self.headers}


def read_roster(path: str | Path) -> Roster:
    """Read a roster CSV (UTF-8, a header line); a ValueError for anything else."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"--roster {path}: cannot read it ({err.strerror})") from None
    if b"\x00" in data[:8192]:
        raise ValueError(f"--roster {path}: a binary file, not a CSV roster")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"--roster {path}: not UTF-8 text (save it as CSV UTF-8)") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        header = []
    headers = [h.strip() for h in header]
    if not any(headers) or len(set(headers)) != len(headers):
        raise ValueError(
            f"--roster {path}: needs one header line of distinct column names, got {header!r}"
        )
    roster = Roster(headers, [])
    if not roster.columns(ANY_ID):
        raise ValueError(
            f"--roster {path}: no id column (one of ID, SID, SIS User ID, SIS Login ID, "
            f"Email, Login); the roster's columns are {', '.join(headers)}"
        )
    for number, values in enumerate(reader, start=2):
        if not any(v.strip() for v in values):
            continue
        row = {h: (values[i] if i < len(values) else "") for i, h in enumerate(headers)}
        first = values[0].strip().lower() if values else ""
        if first in NOT_STUDENTS:
            if first == "points possible":
                roster.points_possible = row
            continue
        if not roster.label(row):
            roster.notes.append(f"roster line {number} has no id in any id column; skipped")
            continue
        roster.rows.append(row)
    if not roster.rows:
        raise ValueError(f"--roster {path}: no student rows (a header, then one per student)")
    return roster


def candidates(roster: Roster, ids: dict[str, str], plain: str | None) -> list[int]:
    """The rows (indexes) a submission's ids match: ``ids`` from the export (canvas, sid,
    email), or, for a plain file, its name against every id column."""
    wanted: list[tuple[list[str], str]] = []
    for kind, value in ids.items():
        if value:
            wanted.append((roster.id_columns(kind), value.strip().lower()))
    if plain and plain.strip():
        wanted.append((roster.columns(ANY_ID), plain.strip().lower()))
    return [
        i
        for i, row in enumerate(roster.rows)
        if any(row.get(h, "").strip().lower() == value for cols, value in wanted for h in cols)
    ]
