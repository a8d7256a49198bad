"""Helpers for the grading tests: a small fixture chapter and notebooks built in tmp_path.

The fixture chapter "99_fixture" has three exercises whose tests are in
``fixture_exercises.py`` (not collected by pytest: it is graded, not run):

- 99.1 add(a, b), 2 points, 2 tests
- 99.2 mul(a, b), 3 points, 3 tests
- 99.3 greet(name), 1 point, 1 test
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from minitorch.course import manifest

FIXTURE_TESTS = Path(__file__).with_name("fixture_exercises.py")

ADD = "def add(a, b):\n    return a + b"
MUL = "def mul(a, b):\n    return a * b"
GREET = 'def greet(name):\n    return f"hello {name}"'
GOOD_CELLS = (ADD, MUL, GREET)

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

#: Short limits keep the robustness tests fast.
TIMEOUT = 1.0
CELL_TIMEOUT = 1.0


@dataclass(frozen=True)
class FixtureChapter(manifest.Chapter):
    """A chapter whose notebooks live under ``base`` and whose tests are the fixture's."""

    base: Path = Path(".")

    @property
    def solution(self) -> Path:
        return self.base / "solutions" / f"{self.stem}.ipynb"

    @property
    def exercise_notebook(self) -> Path:
        return self.base / "exercises" / f"{self.stem}.ipynb"

    @property
    def tests(self) -> Path:
        return FIXTURE_TESTS


EXERCISES = (
    manifest.Exercise("99.1", "Add two numbers", 2),
    manifest.Exercise("99.2", "Multiply two numbers", 3),
    manifest.Exercise("99.3", "Greet someone", 1),
)


def fixture_chapter(base: Path = Path(".")) -> FixtureChapter:
    return FixtureChapter("99", "fixture", "A fixture chapter", EXERCISES, base=base)


def markdown(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text)


def build_notebook(path: Path, cells: list[Any]) -> Path:
    """Write a notebook of ``cells`` (a str is a code cell) with stable cell ids."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for number, cell in enumerate(cells, start=1):
        node = nbformat.v4.new_code_cell(cell) if isinstance(cell, str) else cell
        node.id = f"cell{number}"
        nb.cells.append(node)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def solution_cells() -> list[Any]:
    """The fixture chapter's solution notebook: markers, outputs and metadata to clear."""
    add = nbformat.v4.new_code_cell(
        "def add(a, b):\n"
        "    ### BEGIN SOLUTION hint: use the + operator\n"
        "    total = a + b\n"
        "    return total\n"
        "    ### END SOLUTION",
        execution_count=3,
        outputs=[nbformat.v4.new_output("stream", name="stdout", text="hi\n")],
        metadata={"execution": {"iopub.status.busy": "2024-01-01"}, "tags": ["keep-me"]},
    )
    mul = (
        "def mul(a, b):\n"
        "    ### BEGIN SOLUTION\n"
        "    product = a * b\n"
        "    return product\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "mul(2, 3)"
    )
    greet = '### BEGIN SOLUTION\ndef greet(name):\n    return f"hello {name}"\n### END SOLUTION'
    return [
        markdown("# Fixture exercises"),
        "from minitorch.course.grading import check",
        add,
        "check('99.1')",
        mul,
        greet,
    ]
