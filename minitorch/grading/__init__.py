"""Exercises and grading: the same exercise tests serve three ways.

- ``check("01.3")`` inside a notebook runs one exercise's tests on the spot;
- :func:`grade` grades a whole notebook, the learner's code in a sandboxed process
  (``python -m minitorch.grade``);
- pytest runs the tests against the solution notebooks (``tests/exercises``).

An exercise test is a *judge* registered with ``@exercise("01.3")``: a function of
``run`` that calls the learner's code through *probes* (``@probe`` functions of ``nb``,
the notebook's definitions) and compares what they return, as plain data, with the
reference. See :mod:`minitorch.grading.probes`.
"""

from minitorch.grading.check import CheckResult, check
from minitorch.grading.errors import GradingError, NotebookError
from minitorch.grading.grader import grade
from minitorch.grading.namespace import MissingDefinition, Namespace
from minitorch.grading.notebook import load_notebook
from minitorch.grading.probes import LearnerError, LocalRunner, Runner, probe, tensor_data
from minitorch.grading.registry import exercise
from minitorch.grading.report import GradeReport

__all__ = [
    "CheckResult",
    "GradeReport",
    "GradingError",
    "LearnerError",
    "LocalRunner",
    "MissingDefinition",
    "Namespace",
    "NotebookError",
    "Runner",
    "check",
    "exercise",
    "grade",
    "load_notebook",
    "probe",
    "tensor_data",
]
