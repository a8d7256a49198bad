"""Grading a class: every submission of a folder, in parallel, into a gradebook.

    python -m minitorch.grade submissions/ --chapter 04 --out graded/ --jobs 2

Each student is graded in a sandbox, as one notebook is, into a folder of their own in
``--out`` (``results.json`` in Gradescope's format, ``feedback.md``). The class gets
``gradebook.csv`` (one row per student: the roster's own columns, the points of each
exercise, the total, a status, the seed), ``gradescope.csv`` and, with ``--canvas
COLUMN``, ``canvas.csv`` to import into the LMS (``minitorch.course.lms``), and
``summary.md`` with ``summary.png``: per exercise the mean points, the share at full
marks and the most common failure messages, the slowest submissions, what could not be
graded, whose identity needed a word, and answers that read alike.

Who a file belongs to comes from the export's layout (``minitorch.course.submissions``);
a roster (``--roster``) is matched on its id columns (``minitorch.course.roster``).
Several submissions of one student: ``--keep latest`` (the default) grades the newest,
``best`` grades all and keeps the highest total, ``all`` keeps a row for each (the newest
is the student's). Canvas's ``_LATE`` sets the ``late`` column; ``--late-penalty P``
takes P percent off a late submission's points. ``--adjustments CSV`` adds an
instructor's points (``minitorch.course.adjustments``). ``--exercise NN.k`` regrades one
exercise of an earlier run in ``--out``, keeping the rest and the earlier seed.

Everything a student wrote (file names, ids, messages, code) is escaped in the Markdown
files and neutralised in the CSV files (``minitorch.course.safe_text``).
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from minitorch.course import adjustments as adjust
from minitorch.course import lms, manifest, similarity
from minitorch.course.class_files import (
    ERROR,
    GRADED,
    MISSING,
    NOT_A_NOTEBOOK,
    TIMED_OUT,
    WRONG_CHAPTER,
    exercise_columns,
    feedback,
    write_gradebook,
    write_summary,
)
from minitorch.course.grading.plain import clean_text
from minitorch.course.grading.results import format_points as _fmt
from minitorch.course.hints import describe as describe_hints
from minitorch.course.roster import ANY_ID, Roster, candidates, read_roster
from minitorch.course.submissions import (
    KEEP_CHOICES,
    Submission,
    find_submissions,
    folder_name,
    group,
    student_id,
)

__all__ = ["find_submissions", "grade_class", "grade_submission", "read_roster", "student_id"]

_SUMMARY_LINE = re.compile(
    r"^(?P<head>.*\(chapter [^)]*\)): .* points, \d+ of \d+ exercises passed$"
)


# --- grading one submission (in a worker process) ------------------------------------------
def grade_submission(
    student: str,
    path: str,
    chapter_id: str,
    out: str,
    tests: Sequence[str] = (),
    seed: int | None = None,
    exercise: str | None = None,
    timeout: float | None = None,
    hint_cost: float = 0.0,
    folder: str | None = None,
    late: bool = False,
    late_penalty: float = 0.0,
    adjustments: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Grade one submission (a file, or a Gradescope submission folder) into
    ``out/<folder>/`` (results.json, feedback.md); return its gradebook row."""
    from minitorch.course.gradescope import find_notebook
    from minitorch.course.grading import grade
    from minitorch.course.grading.errors import GradingError, NotebookError
    from minitorch.course.grading.results import TIMED_OUT as EXERCISE_TIMED_OUT

    chapter = manifest.chapter(chapter_id)
    target = Path(out) / (folder or folder_name(student))
    target.mkdir(parents=True, exist_ok=True)
    previous = read_json(target / "results.json") if exercise else None
    if previous is not None and seed is None:
        seed = previous.get("seed")
    started = time.monotonic()
    options: dict[str, Any] = {"chapter": chapter, "extra_test_dirs": list(tests), "seed": seed}
    options["hint_cost"] = hint_cost
    if timeout is not None:
        options["timeout"] = timeout
    if exercise:
        options["exercises"] = [exercise]
    notebook, note = Path(path), ""
    if notebook.is_dir():
        found, note = find_notebook(notebook, chapter)
        notebook = found if found is not None else notebook
    try:
        if notebook.is_dir():
            raise NotebookError(note)
        report = grade(notebook, **options)
    except NotebookError as err:
        results = ungraded_results(chapter, f"{notebook.name} was not graded: {err}")
        status, reason = NOT_A_NOTEBOOK, str(err)
    except GradingError as err:
        results = ungraded_results(chapter, f"{notebook.name} could not be graded: {err}")
        status, reason = ERROR, str(err)
    else:
        results = report.to_gradescope()
        if note:
            results["output"] = f"{note}\n{results['output']}"
        if previous is not None and exercise:
            results = merge_results(previous, results, [exercise])
        if report.notices:
            status, reason = WRONG_CHAPTER, report.notices[0]
        elif any(r.status == EXERCISE_TIMED_OUT for r in report.results):
            status, reason = (
                TIMED_OUT,
                next(r.reason for r in report.results if r.status == EXERCISE_TIMED_OUT),
            )
        else:
            status, reason = GRADED, ""
    adjust.apply(results, list(adjustments), late, late_penalty)
    results["execution_time"] = round(time.monotonic() - started, 2)
    (target / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (target / "feedback.md").write_text(feedback(student, chapter, results), encoding="utf-8")
    out_row = row(student, str(notebook), chapter, results, status, reason)
    out_row["folder"] = target.relative_to(out).as_posix()
    return out_row


def ungraded_results(chapter: manifest.Chapter, message: str) -> dict[str, Any]:
    """results.json for a submission that could not be graded: 0 points, and why."""
    return {
        "score": 0.0,
        "max_score": float(chapter.max_score),
        "output": message,
        "tests": [],
        "chapter": chapter.id,
        "seed": None,
    }


def merge_results(old: dict, new: dict, exercises: Sequence[str]) -> dict:
    """An earlier results.json with the regraded ``exercises`` replaced by ``new``'s; its
    summary line says the new total."""
    regraded = set(exercises)
    tests = [t for t in old.get("tests", []) if t.get("number") not in regraded]
    tests += [t for t in new.get("tests", []) if t.get("number") in regraded]
    order = {e.id: i for i, e in enumerate(manifest.chapter(new["chapter"]).exercises)}
    tests.sort(key=lambda t: order.get(t.get("number"), len(order)))
    merged = dict(old)
    merged["tests"] = tests
    merged["score"] = round(sum(t["score"] for t in tests), 2)
    numbers = list(dict.fromkeys(t.get("number") for t in tests))
    passed = sum(
        all(t.get("status") == "passed" for t in tests if t.get("number") == n) for n in numbers
    )
    lines = [
        line for line in old.get("output", "").splitlines() if not line.startswith("Regraded ")
    ]
    for i, line in enumerate(lines):
        found = _SUMMARY_LINE.match(line)
        if found:
            lines[i] = (
                f"{found['head']}: {_fmt(merged['score'])}/{_fmt(merged['max_score'])} points, "
                f"{passed} of {len(numbers)} exercises passed"
            )
    note = f"Regraded {', '.join(sorted(regraded))} (inputs drawn with seed {new.get('seed')})."
    merged["output"] = "\n".join([*lines, note]).strip()
    return merged


def read_json(path: Path) -> dict | None:
    """A JSON file's object, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _reasons(results: dict) -> dict[str, str]:
    """exercise id -> the first line of its failure ("" when it passed)."""
    out = {}
    for t in results.get("tests", []):
        if t.get("status") != "passed" and t.get("number") not in out:
            out[t["number"]] = (t.get("output") or "").splitlines()[0] if t.get("output") else ""
    return out


def row(
    student: str, path: str, chapter: manifest.Chapter, results: dict, status: str, reason: str
) -> dict[str, Any]:
    """The gradebook row of one submission; an exercise of the private tests that the
    manifest does not list (an instructor-only exercise) gets its column too."""
    out: dict[str, Any] = {"student": student, "file": Path(path).name}
    points: dict[str, float] = {e.id: 0.0 for e in chapter.exercises}
    maxima: dict[str, float] = {e.id: float(e.points) for e in chapter.exercises}
    titles: dict[str, str] = {e.id: e.title for e in chapter.exercises}
    for t in results.get("tests", []):
        number = str(t.get("number", ""))
        if not number:
            continue
        points[number] = round(points.get(number, 0.0) + float(t.get("score", 0)), 2)
        if number not in titles:
            maxima[number] = round(maxima.get(number, 0.0) + float(t.get("max_score", 0)), 2)
            titles[number] = str(t.get("name", number)).removeprefix(number).strip()
    for a in results.get("adjustments") or []:
        if a.get("exercise") in points:
            points[a["exercise"]] = round(points[a["exercise"]] + a["points"], 2)
    out.update(points)
    out["total"] = results.get("score", 0.0)
    out["max"] = results.get("max_score", float(chapter.max_score))
    out["late"] = "yes" if results.get("late") else ""
    out["late penalty"] = results.get("late_penalty") or ""
    out["adjusted"] = round(sum(a["points"] for a in results.get("adjustments") or []), 2) or ""
    out["status"] = status
    out["review"] = len(results.get("review") or [])
    opened = results.get("hints")
    out["hints"] = describe_hints(opened) if isinstance(opened, dict) else ""
    out["seed"] = results.get("seed")
    out["seconds"] = results.get("execution_time")
    out["reason"] = reason
    out["_reasons"] = _reasons(results)
    out["_exercises"] = {n: (titles[n], maxima[n]) for n in points}
    out["_notebook"] = path
    return out


# --- the whole class -------------------------------------------------------------------------
def match_roster(
    groups: dict[str, list[Submission]], roster: Roster
) -> tuple[dict[str, list[int]], list[str]]:
    """student key -> roster row indexes (one per member of a Gradescope group), and
    notes on submissions matching no row or several, and rows claimed by several
    students (an id from a platform's export beats a plain file's name; otherwise nobody
    gets a contested row)."""
    notes: list[str] = []
    claims: dict[int, list[tuple[int, str, str]]] = {}
    for key, items in groups.items():
        s = items[-1]
        plain = s.path.stem if s.platform == "file" and s.path is not None else None
        for member, ids in enumerate(s.members or [s.ids]):
            who = s.student if member == 0 else f"{s.student} (member {member + 1})"
            found = candidates(roster, ids, plain)
            if len(found) > 1:
                labels = ", ".join(roster.label(roster.rows[i]) for i in found)
                notes.append(f"{who} matches several roster rows ({labels}); matched to none")
            elif not found:
                notes.append(f"{who} matches no roster row")
            else:
                claims.setdefault(found[0], []).append((0 if plain else 1, key, who))
    assigned: dict[str, list[int]] = {}
    for index, claimants in claims.items():
        strongest = max(c[0] for c in claimants)
        winners = [c for c in claimants if c[0] == strongest]
        label = roster.label(roster.rows[index])
        if len(winners) == 1:
            assigned.setdefault(winners[0][1], []).append(index)
            for c in claimants:
                if c is not winners[0]:
                    notes.append(f"{c[2]} names roster row {label}, which is {winners[0][2]}'s")
        else:
            names = ", ".join(c[2] for c in winners)
            notes.append(f"roster row {label} is claimed by {names}; matched to none")
    return assigned, notes


def grade_class(
    inputs: Sequence[str | Path],
    chapter: manifest.Chapter,
    out: str | Path,
    jobs: int = 1,
    tests: Sequence[str | Path] = (),
    roster: str | Path | None = None,
    seed: int | None = None,
    exercise: str | None = None,
    timeout: float | None = None,
    progress: Any = print,
    hint_cost: float = 0.0,
    keep: str = "latest",
    late_penalty: float = 0.0,
    adjustments: str | Path | None = None,
    canvas: str | None = None,
    similar: float = similarity.THRESHOLD,
) -> list[dict[str, Any]]:
    """Grade every submission under ``inputs`` into ``out``; write gradebook.csv,
    gradescope.csv (and canvas.csv with ``canvas``) and summary.md there; return the
    gradebook rows."""
    if exercise is not None and exercise not in {e.id for e in chapter.exercises}:
        raise ValueError(
            f"chapter {chapter.id} has no exercise {exercise}; its exercises are "
            f"{', '.join(e.id for e in chapter.exercises)}"
        )
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if keep not in KEEP_CHOICES:
        raise ValueError(f"--keep must be one of {', '.join(KEEP_CHOICES)}, got {keep!r}")
    if not 0 <= late_penalty <= 100:
        raise ValueError(f"--late-penalty must be a percentage from 0 to 100, got {late_penalty}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: a file, not a folder")
    the_roster = read_roster(roster) if roster else None
    changes = adjust.read_adjustments(adjustments) if adjustments else []
    groups = group(find_submissions(inputs))
    notes = [s.note for items in groups.values() for s in items if s.note]
    assigned: dict[str, list[int]] = {}
    if the_roster is not None:
        notes += the_roster.notes
        assigned, matching = match_roster(groups, the_roster)
        notes += matching
    out.mkdir(parents=True, exist_ok=True)

    plans: list[tuple[str, Submission, dict[str, Any]]] = []
    used: set[str] = set()
    for key, items in groups.items():
        chosen = items[-1:] if keep == "latest" else items
        base = folder_name(items[-1].student)
        ids = {items[-1].student, base, *items[-1].ids.values()}
        if the_roster is not None:  # the roster's ids of the student, never a name
            id_columns = the_roster.columns(ANY_ID)
            for i in assigned.get(key, []):
                ids |= {the_roster.rows[i][h].strip() for h in id_columns}
        mine = [a.to_dict() for a in adjust.for_student(changes, ids)]
        used |= {a.student.lower() for a in adjust.for_student(changes, ids)}
        for n, s in enumerate(chosen, 1):
            folder = base if len(chosen) == 1 else f"{base}/attempts/{n}"
            job = dict(
                student=s.student, path=str(s.path), chapter_id=chapter.id, out=str(out),
                tests=[str(t) for t in tests], seed=seed, exercise=exercise,
                timeout=timeout, hint_cost=hint_cost, folder=folder, late=s.late,
                late_penalty=late_penalty, adjustments=mine,
            )  # fmt: skip
            plans.append((key, s, job))
    notes += [
        f"adjustment for {a.student!r} matches no student; not applied"
        for a in changes
        if a.student.lower() not in used
    ]
    rows = _run(plans, jobs, progress)
    for (key, s, _), r in zip(plans, rows, strict=True):
        r.update(_ids=s.ids, _name=s.name, _key=key)
        gradescope = s.platform == "gradescope"
        r["_submission_id"] = s.student.removeprefix("submission_") if gradescope else ""
    rows = _keep(rows, keep, out)
    if the_roster is not None:
        rows = [
            {**r, "_roster": the_roster.rows[i]} if i is not None else r
            for r in rows
            for i in (assigned.get(r["_key"]) or [None])
        ]
        taken = {i for indexes in assigned.values() for i in indexes}
        for index, entry in enumerate(the_roster.rows):
            if index not in taken:
                rows.append(_missing_row(the_roster.label(entry), entry, chapter))
    kept = [r for r in rows if r.get("kept") != "no"]
    pairs = similarity.similar_pairs(
        [(r["student"], Path(r["_notebook"])) for r in kept if r["status"] == GRADED],
        chapter,
        similar,
    )
    write_gradebook(rows, chapter, out / "gradebook.csv", the_roster)
    columns = exercise_columns(kept, chapter)
    max_score = max([float(r["max"]) for r in kept] or [float(chapter.max_score)])
    lms.write_gradescope(kept, the_roster, columns, max_score, out / "gradescope.csv")
    if canvas:
        left_out = lms.write_canvas(kept, the_roster, canvas, max_score, out / "canvas.csv")
        notes += [f"{s} is not in canvas.csv: no Canvas ID or roster row" for s in left_out]
    write_summary(rows, chapter, out, notes, pairs)
    return rows


def _run(plans: list[tuple[str, Submission, dict]], jobs: int, progress: Any) -> list[dict]:
    rows: list[dict[str, Any]] = []
    if jobs == 1:
        for n, (_, _, job) in enumerate(plans, 1):
            rows.append(grade_submission(**job))
            progress(_progress_line(n, len(plans), rows[-1]))
        return rows
    context = multiprocessing.get_context("spawn")  # a fresh grader per worker
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(grade_submission, **job) for _, _, job in plans]
        for n, future in enumerate(futures, 1):
            rows.append(future.result())
            progress(_progress_line(n, len(plans), rows[-1]))
    return rows


def _keep(rows: list[dict[str, Any]], keep: str, out: Path) -> list[dict[str, Any]]:
    """One row per student (``latest``, ``best``), or all with ``kept`` saying which is
    the student's (``all``); the kept attempt's files are copied to the student's folder."""
    by_key: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_key.setdefault(r["_key"], []).append(r)
    result = []
    for attempts in by_key.values():
        if keep == "best":
            chosen = max(reversed(attempts), key=lambda r: float(r["total"]))
        else:
            chosen = attempts[-1]
        for r in attempts:
            r["attempts"] = len(attempts) if len(attempts) > 1 else ""
            r["kept"] = "yes" if r is chosen else "no"
        if len(attempts) > 1:
            base = out / chosen["folder"].split("/attempts/")[0]
            for name in ("results.json", "feedback.md"):
                shutil.copyfile(out / chosen["folder"] / name, base / name)
        result += attempts if keep == "all" else [chosen]
    return result


def _missing_row(student: str, entry: dict[str, str], chapter: manifest.Chapter) -> dict[str, Any]:
    out: dict[str, Any] = {"student": student, "file": "", "_roster": entry, "_reasons": {}}
    for e in chapter.exercises:
        out[e.id] = 0.0
    out.update(
        total=0.0, max=float(chapter.max_score), status=MISSING, review=0, seed=None,
        seconds=None, reason="no submission found for this roster entry",
    )  # fmt: skip
    return out


def _progress_line(n: int, total: int, r: dict[str, Any]) -> str:
    who = clean_text(r["student"], 80)
    return f"[{n}/{total}] {who}: {_fmt(r['total'])}/{_fmt(r['max'])} {r['status']}"
