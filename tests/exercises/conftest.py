"""The ``run`` fixture: the exercise tests (judges) run their probes with it.

``nb`` holds the definitions of the notebook the tests grade: by default the solution
notebook of the test module's chapter (``test_01_tensors.py`` ->
``solutions/01_tensors_solutions.ipynb``);
``pytest --notebook PATH`` or the environment variable ``MINITORCH_NOTEBOOK`` points the
tests at any other notebook, e.g. a learner's. The notebook is loaded in this process,
once per path, and ``run(probe, ...)`` calls probes on it in this process, through the
same plain-data conversion as the grader. ``MINITORCH_GRADE_SEED`` fixes the inputs the
tests draw (default 0).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from minitorch.course import manifest
from minitorch.course.grading import LocalRunner, Namespace, load_notebook

_loaded: dict[Path, Namespace] = {}


def notebook_for(request: pytest.FixtureRequest) -> Path:
    """The notebook to test: --notebook, else $MINITORCH_NOTEBOOK, else the solution."""
    chosen = request.config.getoption("--notebook") or os.environ.get("MINITORCH_NOTEBOOK")
    if chosen:
        return Path(chosen)
    module_file = Path(request.module.__file__).name
    chapter = manifest.chapter_for_notebook(module_file.removeprefix("test_"))
    return chapter.solution


@pytest.fixture(scope="module")
def nb(request: pytest.FixtureRequest) -> Namespace:
    """What the notebook defined, as attributes: ``nb.contiguous_strides(...)``."""
    path = notebook_for(request).resolve()
    if not path.exists():
        pytest.fail(f"no notebook {path} to run the exercise tests against", pytrace=False)
    if path not in _loaded:
        _loaded[path] = load_notebook(path)
    return _loaded[path]


@pytest.fixture
def run(nb: Namespace) -> LocalRunner:
    """``run(probe, *inputs)``: the probe's result on ``nb``, as plain data."""
    return LocalRunner(nb, seed=int(os.environ.get("MINITORCH_GRADE_SEED", "0")))


@pytest.fixture(autouse=True)
def _recursion_limit_restored() -> Iterator[None]:
    """Notebooks and mutants run in this process, and some raise the recursion limit: left
    at 100,000, a later C-level recursion (a deeply nested JSON file) overflows the stack."""
    saved = sys.getrecursionlimit()
    yield
    sys.setrecursionlimit(saved)
