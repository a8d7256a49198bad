"""A graded notebook: the score table for people, results.json for Gradescope."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minitorch.course.grading.delegation import is_delegation
from minitorch.course.grading.namespace import CellFailure
from minitorch.course.grading.results import (
    PASSED,
    STATUS_PRIORITY,
    ExerciseResult,
    format_points,
)
from minitorch.course.grading.review import Flag
from minitorch.course.hints import describe as describe_hints

WIDTH = 120
_TITLE_WIDTH = 44
_STATUS_WIDTH = len("not implemented")


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in "..." when cut."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[: max(width - 3, 0)].rstrip() + "..."


@dataclass
class GradeReport:
    """Every exercise's result for one notebook, and the cells that failed to load."""

    notebook: str
    chapter: str
    chapter_title: str
    results: list[ExerciseResult]
    cell_failures: list[CellFailure] = field(default_factory=list)
    seed: int | None = None
    #: What the reader must see before the table (a notebook of another chapter, say).
    notices: list[str] = field(default_factory=list)
    #: Seconds the grading run took.
    execution_time: float | None = None
    #: What an instructor should look at before trusting the score (see grading.review).
    review: list[Flag] = field(default_factory=list)
    #: The hint levels the notebook records having shown: exercise id -> levels.
    hints: dict[str, list[int]] = field(default_factory=dict)
    #: Points each opened hint level cost (0: hints are free).
    hint_cost: float = 0.0

    def hints_line(self) -> str:
        """``Hints opened: 02.3: 1-2; 02.5: 1`` (cost per level, if any), or ""."""
        if not self.hints:
            return ""
        cost = f" ({format_points(self.hint_cost)} points a level)" if self.hint_cost else ""
        return f"Hints opened{cost}: {describe_hints(self.hints)}"

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.results), 2)

    @property
    def max_score(self) -> float:
        return round(sum(r.max_score for r in self.results), 2)

    def result(self, exercise_id: str) -> ExerciseResult:
        """The result of one exercise, by id."""
        for r in self.results:
            if r.id == exercise_id:
                return r
        raise KeyError(f"no exercise {exercise_id!r} in this report")

    def summary(self) -> str:
        """One line: notebook, points and how many exercises passed."""
        passed = sum(r.status == PASSED for r in self.results)
        points = f"{format_points(self.score)}/{format_points(self.max_score)} points"
        return (
            f"{self.notebook} (chapter {self.chapter}): {points}, "
            f"{passed} of {len(self.results)} exercises passed"
        )

    def table(self, width: int | None = WIDTH) -> str:
        """One row per exercise (id, title, points, status, reason), then a TOTAL row.

        Reasons are cut to fit ``width`` characters; ``width=None`` never cuts them.
        """
        ids = max([len("ID"), len("TOTAL"), *(len(r.id) for r in self.results)])
        titles = min(_TITLE_WIDTH, max([len("TITLE"), *(len(r.title) for r in self.results)]))
        points = [f"{format_points(r.score)}/{format_points(r.max_score)}" for r in self.results]
        total = f"{format_points(self.score)}/{format_points(self.max_score)}"
        points_width = max(len("POINTS"), len(total), *(len(p) for p in points))
        if width is None:
            reason_width = max([10, *(len(r.reason) for r in self.results)])
        else:
            reason_width = max(width - (ids + titles + points_width + _STATUS_WIDTH + 8), 10)

        def row(a: str, b: str, c: str, d: str, e: str) -> str:
            cells = [a.ljust(ids), _fit(b, titles).ljust(titles), c.ljust(points_width)]
            cells += [d.ljust(_STATUS_WIDTH), _fit(e, reason_width)]
            return "  ".join(cells).rstrip()

        lines = [row("ID", "TITLE", "POINTS", "STATUS", "REASON")]
        for r, p in zip(self.results, points, strict=True):
            lines.append(row(r.id, r.title, p, r.status, r.reason))
        lines.append(row("TOTAL", "", total, "", ""))
        return "\n".join(lines)

    def text(self, width: int | None = WIDTH) -> str:
        """What the grade command prints: summary, failed cells, the table."""
        lines = [*self.notices, self.summary()]
        if self.cell_failures:
            lines.append("Cells that failed while the notebook loaded:")
            cut = 10**6 if width is None else width - 2
            lines += [f"  {_fit(str(f), cut)}" for f in self.cell_failures]
        lines += ["", self.table(width)]
        if self.hints:
            lines += ["", self.hints_line()]
        if self.review:
            cut = 10**6 if width is None else width - 2
            lines += ["", "REVIEW (the score stands; an instructor should look at these):"]
            lines += [f"  {_fit(str(flag), cut)}" for flag in self.review]
        return "\n".join(lines)

    def to_gradescope(
        self, private_visibility: str = "after_due_date", *, for_students: bool = False
    ) -> dict[str, Any]:
        """The report in Gradescope's results.json format: one test per exercise (its
        ``number`` is the exercise id), plus one per exercise with private tests, whose
        points and messages students see as ``private_visibility`` says.

        Until then nothing a student sees depends on a private test: the visible entries
        carry the public tests' points and verdicts alone, the visible output names no
        total (with ``for_students``: Gradescope's run, where students read the output),
        and an exercise with no public test has no visible entry at all. Gradescope itself
        hides the total score while any test is hidden."""
        private = any(t.private for r in self.results for t in r.tests)
        hide = for_students and private and private_visibility != "visible"
        tests = []
        for r in self.results:
            tests += _gradescope_tests(r, private_visibility)
        results: dict[str, Any] = {
            "score": self.score,
            "max_score": self.max_score,
            "output": self._gradescope_output(public_only=hide),
            "tests": tests,
            "seed": self.seed,
            "chapter": self.chapter,
            "review": [flag.to_dict() for flag in self.review],
            "hints": self.hints,
            "hint_cost": self.hint_cost,
        }
        if self.execution_time is not None:
            results["execution_time"] = self.execution_time
        return results

    def _gradescope_output(self, public_only: bool) -> str:
        """The text above the tests: notices, the summary, the seed, load failures, hints.
        With ``public_only``, a summary that counts no private test."""
        summary = self.summary()
        if public_only:
            summary = (
                f"{self.notebook} (chapter {self.chapter}): the public tests' points are below; "
                "the private tests' points and the total are shown after the due date."
            )
        output = "\n".join([*self.notices, summary])
        if self.seed is not None:
            output += f"\nInputs drawn with seed {self.seed}."
        if self.cell_failures:
            output += "\nCells that failed while the notebook loaded:\n"
            output += "\n".join(f"- {f}" for f in self.cell_failures)
        if self.hints:
            output += f"\n{self.hints_line()}"
        return output

    def write_json(self, path: str | Path) -> None:
        """Write :meth:`to_gradescope` to ``path`` (results.json)."""
        text = json.dumps(self.to_gradescope(), indent=2) + "\n"
        Path(path).write_text(text, encoding="utf-8")


def _gradescope_tests(r: ExerciseResult, private_visibility: str) -> list[dict[str, Any]]:
    """The exercise's public tests as one Gradescope test and, if it has private ones,
    those as another. The visible one's points and verdict come from the public tests
    alone; the private one holds the rest of the exercise's score, so that the two add up
    to it. An exercise with private tests only (an instructor's own) has no visible entry."""
    private = [t for t in r.tests if t.private]
    public = [t for t in r.tests if not t.private]
    if not private or private_visibility == "visible":
        return [_gradescope_test(r, r.tests, r.score, r.max_score, "visible", r.status, r.reason)]
    share = r.max_score / len(r.tests)
    public_max = round(share * len(public), 2)
    entries, public_score = [], 0.0
    if public:
        public_score, status, reason = _public_part(r, public, share)
        visible = _gradescope_test(r, public, public_score, public_max, "visible", status, reason)
        entries.append(visible)
    entries.append(
        _gradescope_test(
            r,
            private,
            round(r.score - public_score, 2),
            round(r.max_score - public_max, 2),
            private_visibility,
            r.status,
            r.reason,
            suffix=" (private tests)",
        )
    )
    return entries


def _public_part(r: ExerciseResult, public: list, share: float) -> tuple[float, str, str]:
    """The visible entry's points, status and reason, from the public tests alone."""
    if any(is_delegation(t.message) for t in public):  # refused where students see why
        return 0.0, r.status, r.reason
    delegated = any(is_delegation(t.message) for t in r.tests)
    charged = 0.0 if delegated else max(share * r.tests_passed - r.score, 0.0)  # hints' cost
    score = round(max(share * sum(t.status == PASSED for t in public) - charged, 0.0), 2)
    if all(t.status == PASSED for t in public):
        return score, PASSED, ""
    status = next(s for s in STATUS_PRIORITY if any(t.status == s for t in public))
    return score, status, next(t.message for t in public if t.status == status)


def _gradescope_test(
    r: ExerciseResult,
    tests: list,
    score: float,
    max_score: float,
    visibility: str,
    status: str,
    reason: str,
    suffix: str = "",
) -> dict[str, Any]:
    lines = [] if suffix else [status + (f": {reason}" if reason else "")]
    for number, t in enumerate(tests, 1):
        # a private test's name is the instructor's: shown only where its results are
        name = t.name if not t.private or visibility == "visible" else f"private test {number}"
        lines.append(f"  {t.status}: {name}" + (f": {t.message}" if t.message else ""))
    passed = status == PASSED and all(t.status == PASSED for t in tests)
    return {
        "name": f"{r.id} {r.title}{suffix}",
        "number": r.id,
        "score": score,
        "max_score": round(max_score, 2),
        "status": "passed" if passed else "failed",
        "output": "\n".join(lines),
        "visibility": visibility,
    }
