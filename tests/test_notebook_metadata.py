"""Committed notebooks carry the metadata JupyterLab writes, so opening one changes nothing.

JupyterLab records the kernelspec and the kernel's ``language_info`` when it opens a
notebook; if the committed file says otherwise the notebook is marked modified and
autosave rewrites it. ``make notebooks`` and the exercise generator normalize with
``minitorch.course.notebook.normalize_metadata``; this checks that nothing committed escaped it.
tests/test_browser.py checks the same thing in a real JupyterLab.
"""

from __future__ import annotations

import copy

import nbformat
import pytest

from minitorch.course.manifest import ROOT
from minitorch.course.notebook import (
    KERNELSPEC,
    installed_language_info,
    normalize_file,
    normalize_metadata,
    progress,
)

NOTEBOOKS = sorted(
    path
    for folder in ("chapters", "solutions", "exercises")
    for path in ROOT.glob(f"{folder}/*.ipynb")
)
FIX = "run `make notebooks` (or `python -m minitorch.course.notebook NOTEBOOK...`)"


def _read(path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=nbformat.NO_CONVERT)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_notebook_has_the_metadata_jupyterlab_writes(path):
    nb = _read(path)
    # language_info.version is the Python that ran the notebook: exact on the course's
    # Python, and only checked for consistency (below) on any other.
    info = installed_language_info()
    committed = nb.metadata.get("language_info", {})
    if committed.get("version") != info["version"]:
        info["version"] = committed.get("version")
    expected = normalize_metadata(copy.deepcopy(nb), language_info=info)
    assert nb.metadata == expected.metadata, f"{path.name}: metadata not normalized; {FIX}"
    assert (nb.nbformat, nb.nbformat_minor) == (expected.nbformat, expected.nbformat_minor)
    timed = [i for i, cell in enumerate(nb.cells) if "execution" in cell.metadata]
    assert not timed, f"{path.name}: cells {timed} record run times; {FIX}"
    assert all("id" in cell for cell in nb.cells), f"{path.name}: a cell has no id"


def test_committed_notebooks_were_run_by_one_python():
    versions = {p.name: _read(p).metadata.language_info.version for p in NOTEBOOKS}
    assert len(set(versions.values())) == 1, f"mixed language_info versions: {versions}; {FIX}"


def test_normalize_gives_jupyterlab_metadata_and_keeps_the_rest(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = 4
    nb.metadata.update(
        kernelspec={"display_name": "Python 3", "language": "python", "name": "python3"},
        language_info={"name": "python"},
        widgets={"application/vnd.jupyter.widget-state+json": {"state": {}}},
        minitorch={"chapter": "01"},
    )
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    cell.metadata["tags"] = ["keep"]
    nb.cells.append(cell)
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)

    assert normalize_file(path) is True
    out = _read(path)
    assert out.metadata == {
        "kernelspec": KERNELSPEC,
        "language_info": installed_language_info(),
        "minitorch": {"chapter": "01"},  # not JupyterLab's: kept
    }  # widget state that no output shows is dropped
    assert out.nbformat_minor == 5 and out.cells[0].metadata == {"tags": ["keep"]}
    assert normalize_file(path) is False  # idempotent: the second run writes nothing


def test_widget_state_that_an_output_shows_is_kept():
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"state": "kept"}
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "m"}, "text/plain": "w"}
    nb.cells.append(
        nbformat.v4.new_code_cell("w", outputs=[nbformat.v4.new_output("display_data", view)])
    )
    assert normalize_metadata(nb).metadata["widgets"] == {"state": "kept"}


def test_progress_outside_a_kernel_is_tqdms_text_bar_without_timings(capsys):
    bar = progress(range(3), desc="epochs")
    for _ in bar:
        bar.set_postfix(loss="0.5")
    last = capsys.readouterr().err.split("\r")[-1].strip()
    assert last == "epochs: 100%|██████████| 3/3, loss=0.5"


def test_chapter_03_commits_the_finished_bars():
    nb = _read(ROOT / "chapters" / "03_modules.ipynb")
    bars = [
        output.data["text/plain"]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if output.output_type == "display_data" and "epochs:" in output.data.get("text/plain", "")
    ]
    assert len(bars) == 2, bars
    for bar in bars:
        done, total = bar.split("| ", 1)[1].split(",", 1)[0].split("/")
        assert bar.startswith("epochs: 100%|") and done == total, bar
    assert "widgets" not in nb.metadata


def test_the_command_names_a_missing_notebook_in_one_line(tmp_path, capsys):
    from minitorch.course.notebook import main

    assert main([str(tmp_path / "none.ipynb")]) == 2
    assert capsys.readouterr().err == f"error: no notebook {tmp_path / 'none.ipynb'}\n"
