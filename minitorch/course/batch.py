"""Grading a class: every submission of a folder, in parallel, into a gradebook.

    python -m minitorch.grade submissions/ --chapter 04 --out graded/ --jobs 2

Each submission is graded in its own sandbox, as one notebook is, and gets a folder in
``--out`` with its ``results.json`` (Gradescope's format) and ``feedback.md``. The class
gets ``gradebook.csv`` (one row per submission: the student, the points of each exercise,
the total, a status, the seed) and ``summary.md`` with ``summary.png``: per exercise the
mean points, the share at full marks and the most common failure messages, and the
slowest submissions.

Student ids come from the file names as the platforms export them (Canvas:
``doejane_12345_678901_exercises.ipynb``, ``doejane_LATE_...``; Gradescope: a folder
``submission_123456/``), else the file's name; a roster (``--roster roster.csv``) adds
names and e-mails, and a row for each student who submitted nothing. ``--exercise NN.k``
regrades one exercise of an earlier run in ``--out``: the other exercises' results are
kept, and the inputs are drawn with the earlier run's seed.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minitorch.course import manifest
from minitorch.course.grading.plain import clean_text
from minitorch.course.grading.results import format_points as _fmt
from minitorch.course.hints import describe as describe_hints

#: A row's status: graded, or why not.
GRADED, NOT_A_NOTEBOOK, WRONG_CHAPTER, TIMED_OUT, ERROR, MISSING = (
    "graded",
    "not a notebook",
    "wrong chapter",
    "timed out",
    "error",
    "missing",
)
_CANVAS = re.compile(r"^(?P<name>[A-Za-z0-9]+?)(?:_LATE)?_(?P<user>\d+)_(?P<sub>\d+)_.+$", re.I)
_GRADESCOPE = re.compile(r"^submission_(?P<id>\d+)$")
_SKIPPED = {"submission_metadata.yml", ".DS_Store", "Thumbs.db"}


@dataclass(frozen=True)
class Submission:
    """One student's file."""

    student: str
    path: Path


def student_id(path: Path) -> str:
    """The student a submitted file belongs to, from the names Canvas and Gradescope give
    their exports (``doejane_12345_678901_hw.ipynb`` -> ``doejane_12345``; a file in
    ``submission_123456/`` -> ``submission_123456``), else the file's name."""
    for folder in path.parents:
        if _GRADESCOPE.match(folder.name):
            return folder.name
    found = _CANVAS.match(path.name)
    if found:
        return f"{found['name'].lower()}_{found['user']}"
    return path.stem


def find_submissions(inputs: Iterable[str | Path]) -> list[Submission]:
    """The files to grade: each given file, and every file under each given folder (hidden
    files, notebook checkpoints and the platforms' metadata skipped). Two files of one
    student are told apart by a suffix (``_2``), never merged."""
    files: list[Path] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.name not in _SKIPPED
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    submissions, seen = [], Counter()
    for path in files:
        student = student_id(path)
        seen[student] += 1
        if seen[student] > 1:
            student = f"{student}_{seen[student]}"
        submissions.append(Submission(student, path))
    return submissions


def read_roster(path: str | Path) -> list[dict[str, str]]:
    """The roster's rows (a CSV with a header; any columns: id, name, email, login, ...)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [
            {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
            for row in csv.DictReader(f)
        ]
    if not rows:
        raise ValueError(f"{path}: the roster has no rows (a header line, then one per student)")
    return rows


def _roster_match(student: str, roster: list[dict[str, str]]) -> dict[str, str] | None:
    """The roster row whose id, login, e-mail or name matches the student's id."""
    key = student.lower()
    for row in roster:
        values = {v.lower() for v in row.values() if v}
        names = {v.lower().replace(" ", "").replace(",", "") for v in row.values() if v}
        if key in values or key in names or key.split("_")[-1] in values:
            return row
    return None


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
) -> dict[str, Any]:
    """Grade one file into ``out/<student>/`` (results.json, feedback.md); the gradebook row."""
    from minitorch.course.grading import grade
    from minitorch.course.grading.errors import GradingError, NotebookError
    from minitorch.course.grading.results import TIMED_OUT as EXERCISE_TIMED_OUT

    chapter = manifest.chapter(chapter_id)
    folder = Path(out) / _safe(student)
    folder.mkdir(parents=True, exist_ok=True)
    previous = read_json(folder / "results.json") if exercise else None
    if previous is not None and seed is None:
        seed = previous.get("seed")
    started = time.monotonic()
    options: dict[str, Any] = {"chapter": chapter, "extra_test_dirs": list(tests), "seed": seed}
    options["hint_cost"] = hint_cost
    if timeout is not None:
        options["timeout"] = timeout
    if exercise:
        options["exercises"] = [exercise]
    try:
        report = grade(path, **options)
    except NotebookError as err:
        results = ungraded_results(chapter, f"{Path(path).name} was not graded: {err}")
        status, reason = NOT_A_NOTEBOOK, str(err)
    except GradingError as err:
        results = ungraded_results(chapter, f"{Path(path).name} could not be graded: {err}")
        status, reason = ERROR, str(err)
    else:
        results = report.to_gradescope()
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
    results["execution_time"] = round(time.monotonic() - started, 2)
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (folder / "feedback.md").write_text(feedback(student, chapter, results), encoding="utf-8")
    return row(student, path, chapter, results, status, reason)


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
    """An earlier results.json with the regraded ``exercises`` replaced by ``new``'s."""
    regraded = set(exercises)
    tests = [t for t in old.get("tests", []) if t.get("number") not in regraded]
    tests += [t for t in new.get("tests", []) if t.get("number") in regraded]
    order = {e.id: i for i, e in enumerate(manifest.chapter(new["chapter"]).exercises)}
    tests.sort(key=lambda t: order.get(t.get("number"), len(order)))
    merged = dict(old)
    merged["tests"] = tests
    merged["score"] = round(sum(t["score"] for t in tests), 2)
    note = f"Regraded {', '.join(sorted(regraded))} (inputs drawn with seed {new.get('seed')})."
    merged["output"] = f"{old.get('output', '')}\n{note}".strip()
    return merged


def read_json(path: Path) -> dict | None:
    """A JSON file's object, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _safe(name: str) -> str:
    """A folder name for a student id (no path separators or dots up front)."""
    return re.sub(r"[^A-Za-z0-9_.@+-]", "_", name).lstrip(".") or "_"


def _points(results: dict, exercise_id: str) -> float:
    return round(
        sum(t["score"] for t in results.get("tests", []) if t.get("number") == exercise_id), 2
    )


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
    """The gradebook row of one submission."""
    out: dict[str, Any] = {"student": student, "file": Path(path).name}
    for e in chapter.exercises:
        out[e.id] = _points(results, e.id)
    out["total"] = results.get("score", 0.0)
    out["max"] = results.get("max_score", float(chapter.max_score))
    out["status"] = status
    out["review"] = len(results.get("review") or [])
    opened = results.get("hints")
    out["hints"] = describe_hints(opened) if isinstance(opened, dict) else ""
    out["seed"] = results.get("seed")
    out["seconds"] = results.get("execution_time")
    out["reason"] = reason
    out["_reasons"] = _reasons(results)
    return out


# --- feedback, gradebook and summary --------------------------------------------------------
def review_line(item: Any) -> str:
    """One review flag of results.json, as a line."""
    if not isinstance(item, dict):
        return clean_text(str(item), 300)
    about = f"exercise {item.get('exercise')}: " if item.get("exercise") else ""
    where = f" (cell {item.get('cell')}, line {item.get('line')})" if item.get("cell") else ""
    return clean_text(f"{about}{item.get('seen', '')}{where}", 300)


def feedback(student: str, chapter: manifest.Chapter, results: dict) -> str:
    """A student's feedback in Markdown: the score, a table per exercise, what failed."""
    lines = [
        f"# Chapter {chapter.id}: {chapter.title}",
        "",
        f"**{student}**: {_fmt(results.get('score', 0))} of "
        f"{_fmt(results.get('max_score', 0))} points",
        "",
    ]
    output = results.get("output", "")
    if output:
        lines += [line if line else "" for line in output.splitlines()] + [""]
    tests = results.get("tests", [])
    if tests:
        lines += ["| exercise | points | status |", "|---|---|---|"]
        for t in tests:
            name = t["name"].replace("|", "\\|")
            lines.append(f"| {name} | {_fmt(t['score'])}/{_fmt(t['max_score'])} | {t['status']} |")
        lines.append("")
        for t in tests:
            if t.get("status") != "passed" and t.get("output"):
                lines += [f"## {t['name']}", "", "```", t["output"], "```", ""]
    opened = results.get("hints")
    if isinstance(opened, dict) and opened:
        cost = results.get("hint_cost") or 0
        charged = f" ({_fmt(cost)} points a level)" if cost else " (they cost no points)"
        lines += [f"Hints opened{charged}: {describe_hints(opened)}", ""]
    review = results.get("review") or []
    if review:
        lines += ["## For review", ""] + [f"- {review_line(item)}" for item in review] + [""]
    if results.get("seed") is not None:
        lines.append(f"Inputs were drawn with seed {results['seed']}.")
    return "\n".join(lines) + "\n"


def write_gradebook(rows: list[dict[str, Any]], chapter: manifest.Chapter, path: Path) -> None:
    """gradebook.csv: one row per submission (and per roster student without one)."""
    extra = sorted({k for r in rows for k in r.get("_roster", {})} - {"student"})
    fields = ["student", *extra, "file", *(e.id for e in chapter.exercises), "total", "max"]
    fields += ["status", "review", "hints", "seed", "seconds", "reason"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            values = {**r.get("_roster", {}), **r}
            writer.writerow({k: _cell(values.get(k)) for k in fields})


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return _fmt(value)
    return "" if value is None else value


def _group(message: str) -> str:
    """A failure message with its numbers and quoted values blurred, so that the same
    mistake made on different inputs counts as one."""
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "...", message)
    text = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", text)
    return text[:160]


def write_summary(rows: list[dict[str, Any]], chapter: manifest.Chapter, out: Path) -> Path:
    """summary.md (and summary.png): how the class did on each exercise."""
    graded = [r for r in rows if r["status"] in (GRADED, TIMED_OUT, WRONG_CHAPTER)]
    statuses = Counter(r["status"] for r in rows)
    lines = [
        f"# Chapter {chapter.id}: {chapter.title}: class summary",
        "",
        f"{len(rows)} rows: " + ", ".join(f"{n} {s}" for s, n in statuses.most_common()) + ".",
        "",
    ]
    if graded:
        totals = [float(r["total"]) for r in graded]
        lines += [
            f"Mean total {_fmt(sum(totals) / len(totals))} of {chapter.max_score} "
            "points over "
            f"the {len(graded)} notebooks graded (a wrong chapter's and timed-out ones "
            "included).",
            "",
            "| exercise | title | points | mean | at full marks | most common failures |",
            "|---|---|---|---|---|---|",
        ]
        stats = []
        for e in chapter.exercises:
            scores = [float(r[e.id]) for r in graded]
            mean = sum(scores) / len(scores)
            full = sum(s >= e.points - 1e-9 for s in scores) / len(scores)
            failures = Counter(
                _group(r["_reasons"][e.id]) for r in graded if r["_reasons"].get(e.id)
            )
            common = "; ".join(f"{n}x {m}" for m, n in failures.most_common(3)).replace("|", "\\|")
            lines.append(
                f"| {e.id} | {e.title} | {e.points} | {_fmt(mean)} | {full:.0%} | {common} |"
            )
            stats.append((e.id, mean / e.points if e.points else 0.0, full))
        lines += ["", "![mean points and full marks per exercise](summary.png)", ""]
        _summary_figure(stats, chapter, out / "summary.png")
    slow = sorted((r for r in rows if r.get("seconds") is not None), key=lambda r: -r["seconds"])
    if slow:
        lines += ["## Slowest submissions", "", "| student | seconds | status |", "|---|---|---|"]
        lines += [f"| {r['student']} | {_fmt(r['seconds'])} | {r['status']} |" for r in slow[:5]]
        lines.append("")
    not_graded = [r for r in rows if r["status"] in (NOT_A_NOTEBOOK, ERROR, MISSING)]
    if not_graded:
        lines += ["## Not graded", ""]
        lines += [f"- {r['student']} ({r['file'] or 'no file'}): {r['reason']}" for r in not_graded]
        lines.append("")
    flagged = [r for r in rows if r.get("review")]
    if flagged:
        lines += ["## For review", ""]
        lines += [f"- {r['student']}: {r['review']} flag(s), see its feedback.md" for r in flagged]
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
) -> list[dict[str, Any]]:
    """Grade every submission under ``inputs`` into ``out``; write gradebook.csv and
    summary.md there; return the gradebook rows."""
    if exercise is not None and exercise not in {e.id for e in chapter.exercises}:
        raise ValueError(
            f"chapter {chapter.id} has no exercise {exercise}; its exercises are "
            f"{', '.join(e.id for e in chapter.exercises)}"
        )
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    submissions = find_submissions(inputs)
    roster_rows = read_roster(roster) if roster else []
    args = [
        (
            s.student,
            str(s.path),
            chapter.id,
            str(out),
            [str(t) for t in tests],
            seed,
            exercise,
            timeout,
            hint_cost,
        )
        for s in submissions
    ]
    rows: list[dict[str, Any]] = []
    if jobs == 1:
        for n, a in enumerate(args, 1):
            rows.append(grade_submission(*a))
            progress(_progress_line(n, len(args), rows[-1]))
    else:
        context = multiprocessing.get_context("spawn")  # a fresh grader per worker
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = [pool.submit(grade_submission, *a) for a in args]
            for n, future in enumerate(futures, 1):
                rows.append(future.result())
                progress(_progress_line(n, len(args), rows[-1]))
    if roster_rows:
        matched = set()
        for r in rows:
            found = _roster_match(r["student"], roster_rows)
            if found is not None:
                r["_roster"] = found
                matched.add(id(found))
        for entry in roster_rows:
            if id(entry) not in matched:
                name = (
                    entry.get("id")
                    or entry.get("login")
                    or entry.get("email")
                    or entry.get("name", "?")
                )
                rows.append(_missing_row(name, entry, chapter))
    write_gradebook(rows, chapter, out / "gradebook.csv")
    write_summary(rows, chapter, out)
    return rows


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
    return f"[{n}/{total}] {r['student']}: {_fmt(r['total'])}/{_fmt(r['max'])} {r['status']}"
