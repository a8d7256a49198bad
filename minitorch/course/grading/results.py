"""What grading produces: one outcome per test, one result per exercise."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASSED = "passed"
FAILED = "failed"
NOT_IMPLEMENTED = "not implemented"
ERROR = "error"
TIMED_OUT = "timed out"
NOT_RUN = "not run"

#: When an exercise's tests disagree, the status shown is the first of these that occurs.
STATUS_PRIORITY = (TIMED_OUT, NOT_IMPLEMENTED, ERROR, FAILED, NOT_RUN)


@dataclass
class TestOutcome:
    """How one test went: its name, a status and a one-line message ("" when it passed)."""

    __test__ = False  # not a pytest test class

    name: str
    status: str
    message: str = ""
    #: A private test's (an instructor's ``--tests`` folder): reported, but shown to
    #: students only after the due date (Gradescope's ``visibility``).
    private: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestOutcome:
        return cls(data["name"], data["status"], data.get("message", ""), bool(data.get("private")))


@dataclass
class ExerciseResult:
    """How one exercise went: points earned out of its points, a status and a reason."""

    id: str
    title: str
    score: float
    max_score: float
    status: str
    reason: str = ""
    tests: list[TestOutcome] = field(default_factory=list)

    @property
    def tests_passed(self) -> int:
        return sum(t.status == PASSED for t in self.tests)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExerciseResult:
        tests = [TestOutcome.from_dict(t) for t in data.get("tests", [])]
        return cls(
            data["id"],
            data["title"],
            data["score"],
            data["max_score"],
            data["status"],
            data.get("reason", ""),
            tests,
        )


def format_points(points: float) -> str:
    """``2`` for 2.0, ``1.33`` for 1.3333, ``0.5`` for 0.5."""
    text = f"{round(points, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
