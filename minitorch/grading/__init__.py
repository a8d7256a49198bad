"""Exercises and grading: the same exercise tests serve three ways.

- ``check("01.3")`` inside a notebook runs one exercise's tests on the spot;
- :func:`grade` grades a whole notebook in worker processes (``python -m minitorch.grade``);
- pytest runs the tests against the solution notebooks (``tests/exercises``).

Exercise tests are plain functions of ``nb``, the notebook's definitions (a
:class:`Namespace`), registered with ``@exercise("01.3")``.
"""

from minitorch.grading.check import CheckResult, check
from minitorch.grading.errors import GradingError, NotebookError
from minitorch.grading.grader import grade
from minitorch.grading.namespace import MissingDefinition, Namespace
from minitorch.grading.notebook import load_notebook
from minitorch.grading.registry import exercise
from minitorch.grading.report import GradeReport

__all__ = [
    "CheckResult",
    "GradeReport",
    "GradingError",
    "MissingDefinition",
    "Namespace",
    "NotebookError",
    "check",
    "exercise",
    "grade",
    "load_notebook",
]
