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

import csv
import json
import multiprocessing
import re
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from minitorch.course import adjustments as adjust
from minitorch.course import lms, manifest, similarity
from minitorch.course.grading.plain import clean_text
from minitorch.course.grading.results import format_points as _fmt
from minitorch.course.hints import describe as describe_hints
from minitorch.course.roster import Roster, candidates, read_roster
from minitorch.course.safe_text import csv_cell, md_code_block, md_text
from minitorch.course.submissions import (
    KEEP_CHOICES,
    Submission,
    find_submissions,
    folder_name,
    group,
    student_id,
)

__all__ = ["find_submissions", "grade_class", "grade_submission", "read_roster", "student_id"]

#: A row's status: graded, or why not.
GRADED, NOT_A_NOTEBOOK, WRONG_CHAPTER, TIMED_OUT, ERROR, MISSING = (
    "graded",
    "not a notebook",
    "wrong chapter",
    "timed out",
    "error",
    "missing",
)
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


# --- feedback, gradebook and summary --------------------------------------------------------
def review_line(item: Any) -> str:
    """One review flag of results.json, as a line of Markdown (escaped)."""
    if not isinstance(item, dict):
        return md_text(clean_text(str(item), 300))
    about = f"exercise {item.get('exercise')}: " if item.get("exercise") else ""
    where = f" (cell {item.get('cell')}, line {item.get('line')})" if item.get("cell") else ""
    return md_text(clean_text(f"{about}{item.get('seen', '')}{where}", 300))


def feedback(student: str, chapter: manifest.Chapter, results: dict) -> str:
    """A student's feedback in Markdown: the score, a table per exercise, what failed.
    Everything that came from the notebook is escaped or fenced."""
    lines = [
        f"# Chapter {chapter.id}: {md_text(chapter.title)}",
        "",
        f"**{md_text(student)}**: {_fmt(results.get('score', 0))} of "
        f"{_fmt(results.get('max_score', 0))} points",
        "",
    ]
    output = results.get("output", "")
    if output:
        lines += [md_text(line) + "  " for line in output.splitlines() if line.strip()] + [""]
    tests = results.get("tests", [])
    if tests:
        lines += ["| exercise | points | status |", "|---|---|---|"]
        for t in tests:
            lines.append(
                f"| {md_text(t['name'])} | {_fmt(t['score'])}/{_fmt(t['max_score'])} | "
                f"{md_text(t['status'])} |"
            )
        lines.append("")
        for t in tests:
            if t.get("status") != "passed" and t.get("output"):
                lines += [f"## {md_text(t['name'])}", "", *md_code_block(str(t["output"])), ""]
    changes = results.get("adjustments") or []
    if changes:
        lines += ["## Adjustments by your instructor", ""]
        for a in changes:
            what = f"exercise {a['exercise']}" if a.get("exercise") else "the total"
            points = f"{'+' if a['points'] >= 0 else ''}{_fmt(a['points'])}"
            comment = f": {md_text(a['comment'])}" if a.get("comment") else ""
            lines.append(f"- {points} points on {md_text(what)}{comment}")
        lines.append("")
    if results.get("late_penalty"):
        lines += [f"Submitted late: {_fmt(results['late_penalty'])} points taken off.", ""]
    opened = results.get("hints")
    if isinstance(opened, dict) and opened:
        cost = results.get("hint_cost") or 0
        charged = f" ({_fmt(cost)} points a level)" if cost else " (they cost no points)"
        lines += [f"Hints opened{charged}: {md_text(describe_hints(opened))}", ""]
    review = results.get("review") or []
    if review:
        lines += ["## For review", ""] + [f"- {review_line(item)}" for item in review] + [""]
    if results.get("seed") is not None:
        lines.append(f"Inputs were drawn with seed {md_text(results['seed'])}.")
    return "\n".join(lines) + "\n"


def exercise_columns(
    rows: list[dict[str, Any]], chapter: manifest.Chapter
) -> list[tuple[str, str, float]]:
    """(id, title, points) of each exercise column: the manifest's, then any other a row
    has (an instructor-only exercise of the private tests), in id order."""
    found = {e.id: (e.title, float(e.points)) for e in chapter.exercises}
    extra: dict[str, tuple[str, float]] = {}
    for r in rows:
        for number, info in r.get("_exercises", {}).items():
            if number not in found:
                extra.setdefault(number, info)

    def order(number: str) -> tuple:
        return tuple(int(p) if p.isdigit() else p for p in number.split("."))

    columns = [(e.id, *found[e.id]) for e in chapter.exercises]
    return columns + [(n, *extra[n]) for n in sorted(extra, key=order)]


_OURS = ["student", "folder", "file"]
_AFTER = ["total", "max", "late", "late penalty", "adjusted", "status", "kept", "attempts"]
_AFTER += ["review", "hints", "seed", "seconds", "reason"]


def write_gradebook(
    rows: list[dict[str, Any]], chapter: manifest.Chapter, path: Path, roster: Roster | None = None
) -> None:
    """gradebook.csv: the roster's own columns first, then ours; one row per student (and
    per roster student without a submission). Cells a spreadsheet would run are
    neutralised."""
    exercises = [c[0] for c in exercise_columns(rows, chapter)]
    ours = [*_OURS, *exercises, *_AFTER]
    headers = list(roster.headers) if roster else []
    renamed = {h: (f"roster {h}" if h in ours else h) for h in headers}
    fields = [renamed[h] for h in headers] + ours
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([csv_cell(h) for h in fields])
        for r in rows:
            entry = r.get("_roster") or {}
            values = [entry.get(h, "") for h in headers] + [r.get(k) for k in ours]
            writer.writerow([_cell(v) for v in values])


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, (int, float)):
        return _fmt(value)
    return csv_cell(value)


def _group(message: str) -> str:
    """A failure message with its numbers and quoted values blurred, so that the same
    mistake made on different inputs counts as one."""
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "...", message)
    text = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", text)
    return text[:160]


def write_summary(
    rows: list[dict[str, Any]],
    chapter: manifest.Chapter,
    out: Path,
    notes: Sequence[str] = (),
    pairs: Sequence[similarity.Pair] = (),
) -> Path:
    """summary.md (and summary.png): how the class did on each exercise, each student
    counted once (the kept row of a student with several)."""
    kept = [r for r in rows if r.get("kept") != "no"]
    earlier = len(rows) - len(kept)
    graded = [r for r in kept if r["status"] in (GRADED, TIMED_OUT, WRONG_CHAPTER)]
    statuses = Counter(r["status"] for r in kept)
    lines = [
        f"# Chapter {chapter.id}: {md_text(chapter.title)}: class summary",
        "",
        f"{len(kept)} students: " + ", ".join(f"{n} {s}" for s, n in statuses.most_common()) + ".",
        "",
    ]
    if earlier:
        lines += [
            f"{earlier} earlier submissions of the same students are in the gradebook "
            "(kept: no) and in none of the figures below.",
            "",
        ]
    late = [r for r in kept if r.get("late") == "yes"]
    if late:
        lines += [f"{len(late)} late submissions (Canvas's `_LATE`).", ""]
    columns = exercise_columns(kept, chapter)
    if graded:
        totals = [float(r["total"]) for r in graded]
        lines += [
            f"Mean total {_fmt(sum(totals) / len(totals))} of {_fmt(float(graded[0]['max']))} "
            "points over "
            f"the {len(graded)} notebooks graded (a wrong chapter's and timed-out ones "
            "included).",
            "",
            "| exercise | title | points | mean | at full marks | most common failures |",
            "|---|---|---|---|---|---|",
        ]
        stats = []
        for number, title, points in columns:
            scores = [float(r.get(number) or 0) for r in graded]
            mean = sum(scores) / len(scores)
            full = sum(s >= points - 1e-9 for s in scores) / len(scores)
            failures = Counter(
                _group(r["_reasons"][number]) for r in graded if r["_reasons"].get(number)
            )
            common = "; ".join(f"{n}x {md_text(m)}" for m, n in failures.most_common(3))
            lines.append(
                f"| {number} | {md_text(title)} | {_fmt(points)} | {_fmt(mean)} | {full:.0%} | "
                f"{common} |"
            )
            stats.append((number, mean / points if points else 0.0, full))
        lines += ["", "![mean points and full marks per exercise](summary.png)", ""]
        _summary_figure(stats, chapter, out / "summary.png")
    slow = sorted((r for r in kept if r.get("seconds") is not None), key=lambda r: -r["seconds"])
    if slow:
        lines += ["## Slowest submissions", "", "| student | seconds | status |", "|---|---|---|"]
        lines += [
            f"| {md_text(r['student'])} | {_fmt(r['seconds'])} | {r['status']} |" for r in slow[:5]
        ]
        lines.append("")
    not_graded = [r for r in kept if r["status"] in (NOT_A_NOTEBOOK, ERROR, MISSING)]
    if not_graded:
        lines += ["## Not graded", ""]
        lines += [
            f"- {md_text(r['student'])} ({md_text(r['file'] or 'no file')}): "
            f"{md_text(clean_text(r['reason'], 300))}"
            for r in not_graded
        ]
        lines.append("")
    if notes:
        lines += ["## Identity: ids and roster rows to check", ""]
        lines += [f"- {md_text(n)}" for n in notes] + [""]
    flagged = [r for r in kept if r.get("review")]
    if flagged:
        lines += ["## For review", ""]
        lines += [
            f"- {md_text(r['student'])}: {r['review']} flag(s), see its feedback.md"
            for r in flagged
        ]
        lines.append("")
    if pairs:
        lines += [
            "## Answers that read alike (for review; grades unchanged)",
            "",
            "| student | student | answer | similarity |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {md_text(p.first)} | {md_text(p.second)} | {md_text(p.answer)} | {p.ratio:.0%} |"
            for p in pairs[:100]
        ]
        lines.append("")
    path = out / "summary.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _summary_figure(
    stats: list[tuple[str, float, float]], chapter: manifest.Chapter, path: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = [s[0] for s in stats]
    x = range(len(ids))
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(ids) + 1.5), 3.2))
    ax.bar([i - 0.2 for i in x], [s[1] for s in stats], width=0.4, label="mean points (share)")
    ax.bar([i + 0.2 for i in x], [s[2] for s in stats], width=0.4, label="at full marks")
    ax.set_xticks(list(x), ids)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of the class")
    ax.set_title(f"Chapter {chapter.id}: how the class did on each exercise")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --- the whole class -------------------------------------------------------------------------
def match_roster(
    groups: dict[str, list[Submission]], roster: Roster
) -> tuple[dict[str, int], list[str]]:
    """student key -> roster row index, and notes on submissions matching no row or
    several, and rows claimed by several students (an id from a platform's export beats
    a plain file's name; otherwise nobody gets a contested row)."""
    notes: list[str] = []
    claims: dict[int, list[tuple[int, str, str]]] = {}
    for key, items in groups.items():
        s = items[-1]
        plain = s.path.stem if s.platform == "file" and s.path is not None else None
        found = candidates(roster, s.ids, plain)
        if len(found) > 1:
            labels = ", ".join(roster.label(roster.rows[i]) for i in found)
            notes.append(f"{s.student} matches several roster rows ({labels}); matched to none")
        elif not found:
            notes.append(f"{s.student} matches no roster row")
        else:
            claims.setdefault(found[0], []).append((0 if plain else 1, key, s.student))
    assigned: dict[str, int] = {}
    for index, claimants in claims.items():
        strongest = max(c[0] for c in claimants)
        winners = [c for c in claimants if c[0] == strongest]
        label = roster.label(roster.rows[index])
        if len(winners) == 1:
            assigned[winners[0][1]] = index
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
    assigned: dict[str, int] = {}
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
        entry = the_roster.rows[assigned[key]] if key in assigned else {}
        ids = {items[-1].student, base, *items[-1].ids.values(), *entry.values()}
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
        if key in assigned:
            r["_roster"] = the_roster.rows[assigned[key]]
    rows = _keep(rows, keep, out)
    if the_roster is not None:
        taken = set(assigned.values())
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
