"""The errors the grader raises when it cannot grade at all."""

from __future__ import annotations


class GradingError(Exception):
    """Grading could not run: a broken test module, a worker that cannot start, ..."""


class NotebookError(GradingError):
    """The input is unusable: a missing or invalid notebook, an unknown chapter or test folder."""
