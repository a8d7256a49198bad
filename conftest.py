"""Collect every notebook in chapters/, solutions/ and exercises/ with nbval, in one pytest run.

Lessons (chapters/) are committed with outputs and compared strictly: a lesson whose
printed results change fails until it is re-executed. Solutions and exercises are only
required to run (exercise cells may raise NotImplementedError: the generator tags them).

A lesson cell tagged ``needs-torch`` compares its output with PyTorch's (lesson 08's twin);
where PyTorch is not installed (``make test REFERENCE=none``, or no CPU wheel reachable) it
still runs, saying so, and its output is not compared.
"""

from importlib.util import find_spec
from pathlib import Path

from nbval.plugin import IPyNbFile

NOTEBOOK_DIRS = {"chapters": True, "solutions": False, "exercises": False}  # dir -> compare?


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix != ".ipynb" or ".ipynb_checkpoints" in file_path.parts:
        return None
    if file_path.parent.name not in NOTEBOOK_DIRS or parent.config.option.nbval:
        return None  # with an explicit --nbval, nbval itself collects
    parent.config.option.nbval_current_env = True
    notebook = IPyNbFile.from_parent(parent, path=file_path)
    notebook.compare_outputs = NOTEBOOK_DIRS[file_path.parent.name]
    return notebook


def _notebooks_first(item) -> tuple:
    """Notebooks before the other tests, the last chapters' first and lessons before solutions
    before exercises: pytest-xdist hands files to the workers in this order, and the longest
    files (lesson and solution 08 train GPTs for a minute or more) handed out last would
    leave the other worker idle at the end."""
    path = Path(item.path)
    if path.suffix != ".ipynb":
        return (1,)
    return (
        0,
        -int(path.name[:2]) if path.name[:2].isdigit() else 0,
        list(NOTEBOOK_DIRS).index(path.parent.name) if path.parent.name in NOTEBOOK_DIRS else 0,
    )


def pytest_collection_modifyitems(config, items):
    items.sort(key=_notebooks_first)  # (stable: each notebook's cells keep their order)
    if find_spec("torch") is not None:
        return
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and "needs-torch" in cell.get("metadata", {}).get("tags", []):
            item.options["check"] = False
