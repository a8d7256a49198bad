"""The files a class's grading writes for people to read: each student's feedback.md,
the class's gradebook.csv and summary.md (with summary.png).

Everything in them that came from a student (ids, file names, messages, code) is escaped
for Markdown or neutralised for spreadsheets (``minitorch.course.safe_text``).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minitorch.course import manifest, similarity
from minitorch.course.grading.plain import clean_text
from minitorch.course.grading.results import format_points as _fmt
from minitorch.course.hints import describe as describe_hints
from minitorch.course.roster import Roster
from minitorch.course.safe_text import csv_cell, md_code_block, md_text

#: A row's status: graded, or why not.
GRADED, NOT_A_NOTEBOOK, WRONG_CHAPTER, TIMED_OUT, ERROR, MISSING = (
    "graded",
    "not a notebook",
    "wrong chapter",
    "timed out",
    "error",
    "missing",
)
_MAX_PAIRS = 100


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
            "| student | student | answers alike | mean similarity |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {md_text(p.first)} | {md_text(p.second)} | {md_text(', '.join(p.answers))} | "
            f"{p.ratio:.0%} |"
            for p in pairs[:_MAX_PAIRS]
        ]
        if len(pairs) > _MAX_PAIRS:
            lines += ["", f"... and {len(pairs) - _MAX_PAIRS} more pairs, less alike."]
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
