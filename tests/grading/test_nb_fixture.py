"""The ``nb`` fixture of tests/exercises: --notebook, $MINITORCH_NOTEBOOK, clear failures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grading_fixtures import ADD, build_notebook

from minitorch.course.manifest import ROOT

MODULE = """\
def test_the_notebook_is_loaded(nb):
    assert nb._origin == "99_fixture.ipynb"
    assert nb.add(2, 3) == 5
"""

#: Plugins these runs do not need, and that take seconds to import.
FAST = ("-p", "no:cacheprovider", "-p", "no:nbval", "-p", "no:hypothesispytest")


def run_pytest(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run pytest on a copy of the two conftests and one exercise test module."""
    tests = tmp_path / "tests"
    (tests / "exercises").mkdir(parents=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    shutil.copy(ROOT / "tests" / "exercises" / "conftest.py", tests / "exercises" / "conftest.py")
    (tests / "exercises" / "test_99_fixture.py").write_text(MODULE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *FAST, "tests", *args],
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_notebook_can_be_chosen(tmp_path: Path, how: str):
    notebook = build_notebook(tmp_path / "nb" / "99_fixture.ipynb", [ADD])
    if how == "option":
        out = run_pytest(tmp_path, "--notebook", str(notebook))
    else:
        out = run_pytest(tmp_path, env={"MINITORCH_NOTEBOOK": str(notebook)})
    assert "1 passed" in out, out


def test_a_missing_notebook_fails_clearly(tmp_path: Path):
    out = run_pytest(tmp_path, "--notebook", str(tmp_path / "gone.ipynb"))
    assert f"no notebook {tmp_path / 'gone.ipynb'} to run the exercise tests against" in out, out
    assert "1 error" in out, out
