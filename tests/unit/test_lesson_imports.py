"""What a notebook's first cell imports stays quick to import: every lesson, exercise and
solution notebook starts its kernel with these modules, and a learner waits for them."""

import subprocess
import sys

#: The course modules the notebooks import in their first cells.
NOTEBOOK_IMPORTS = (
    "minitorch.course.notebook",  # show_source, progress
    "minitorch.course.grading",  # check, hint
    "minitorch.course.at_work",
    "minitorch.course.viz",
)
#: Packages that take seconds to import and that no notebook needs to start: nbformat
#: (through jsonschema's format checkers, rfc3987-syntax builds a grammar at import).
SLOW_TO_IMPORT = ("nbformat", "jsonschema")


# catches: a module-level `import nbformat` in show_source's module (3 s per kernel start)
def test_the_notebooks_first_imports_pull_in_no_slow_package() -> None:
    code = (
        f"import sys\nfor m in {NOTEBOOK_IMPORTS!r}: __import__(m)\n"
        f"print(sorted(m for m in {SLOW_TO_IMPORT!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"importing {NOTEBOOK_IMPORTS} imported {out.stdout}"
