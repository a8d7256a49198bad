"""Where a learner's definitions come from: an exercise notebook, a folder of them, or a
notebook's own ``globals()``."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def load_notebook(path: Path) -> tuple[str | None, dict[str, Any], list[str]]:
    """Run a notebook's code cells (up to its "Your framework at work" section), quietly;
    return its chapter id, what it defined and the cells that failed."""
    from minitorch.course import manifest
    from minitorch.course.grading.notebook import code_cells, load_cells

    try:
        chapter = manifest.chapter_for_notebook(path).id
    except KeyError:
        chapter = None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        loaded = load_cells(code_cells(path), path.name, cell_timeout=None)
    problems = [f"{path.name} cell {f.cell}: {f.problem}" for f in loaded._failures]
    return chapter, dict(loaded._globals), problems


def namespaces(source: Any) -> list[tuple[str, str | None, Mapping[str, Any], list[str]]]:
    """``(origin, chapter id or None, definitions, problems)`` for each notebook of ``source``."""
    if isinstance(source, Mapping):
        return [("your notebook", None, source, [])]
    if not isinstance(source, (str, Path)):
        raise TypeError(
            "mine.use: give an exercise notebook, a folder of them, or globals(); got "
            f"{type(source).__name__} {source!r:.60}"
        )
    path = Path(source)
    if path.is_dir():
        notebooks = sorted(p for p in path.glob("*.ipynb") if not p.name.startswith("."))
        if not notebooks:
            raise FileNotFoundError(f"mine.use: {path} holds no notebooks (*.ipynb)")
    elif path.suffix == ".ipynb":
        if not path.is_file():
            raise FileNotFoundError(f"mine.use: no notebook {path}")
        notebooks = [path]
    else:
        raise TypeError(
            "mine.use: give an exercise notebook, a folder of them, or globals(); got "
            f"{source!r:.80}"
        )
    found = []
    for nb in notebooks:
        chapter, defs, problems = load_notebook(nb)
        found.append((nb.name, chapter, defs, problems))
    return found
