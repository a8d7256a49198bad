"""Fixtures for the grading tests (the helpers they use are in grading_fixtures.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from grading_fixtures import CELL_TIMEOUT, TIMEOUT, FixtureChapter, build_notebook, fixture_chapter

from minitorch.course.grading import grade
from minitorch.course.grading.report import GradeReport


@pytest.fixture
def make_notebook(tmp_path: Path) -> Callable[..., Path]:
    """``make_notebook(cell, cell, ..., name="99_fixture.ipynb")`` -> the notebook's path."""

    def make(*cells: Any, name: str = "99_fixture.ipynb") -> Path:
        return build_notebook(tmp_path / name, list(cells))

    return make


@pytest.fixture
def chapter(tmp_path: Path) -> FixtureChapter:
    return fixture_chapter(tmp_path)


@pytest.fixture
def grade_fixture(chapter: FixtureChapter) -> Callable[..., GradeReport]:
    """Grade a notebook as the fixture chapter, with short time limits."""

    def run(path: Path, **options: Any) -> GradeReport:
        options.setdefault("timeout", TIMEOUT)
        options.setdefault("cell_timeout", CELL_TIMEOUT)
        return grade(path, chapter=chapter, **options)

    return run
