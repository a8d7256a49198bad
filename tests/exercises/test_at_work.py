""" "Your framework at work": the section that closes every exercise notebook runs the
framework on the learner's pieces; when a piece is wrong, it fails loudly with the number of
that piece's exercise (never another's). (That it passes on the solutions, nbval checks.)

The wrong pieces are the chapters' kept mutants (``mutants_NN.py``). The suite tries one
per chapter (a run of the section costs seconds);
``python tests/exercises/test_at_work.py 01 02 ...`` tries every mutant and prints how
many the section catches.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from minitorch import mine
from minitorch.course import manifest
from minitorch.course.grading.notebook import code_cells, load_cells, opens_at_work, read_notebook
from minitorch.mine.pieces import PIECES

mine._load_pieces()  # (the registry fills as the chapters' adapters are imported)
sys.path.insert(0, str(Path(__file__).parent))
from mutants import cases, mutant_namespace  # noqa: E402


def _opens_a_section(cell: dict) -> bool:
    return cell["cell_type"] == "markdown" and "".join(cell["source"]).startswith("## ")


def at_work_code(chapter_id: str) -> str | None:
    """The code of the solution notebook's "Your framework at work" section, up to the next
    ``##`` heading (chapter 08's finale, after it, trains for minutes) (None: it has none)."""
    cells = read_notebook(manifest.chapter(chapter_id).solution)["cells"]
    for i, cell in enumerate(cells):
        if opens_at_work(cell):
            section = []
            for c in cells[i + 1 :]:
                if _opens_a_section(c):
                    break
                if c["cell_type"] == "code":
                    section.append("".join(c["source"]))
            return "\n".join(section)
    return None


CHAPTERS = [ch.id for ch in manifest.CHAPTERS if ch.solution.exists() and at_work_code(ch.id)]


def run_at_work(chapter_id: str, definitions: dict) -> str | None:
    """Run the section in a copy of ``definitions``; the exercise ids its failure names
    (``""`` when it failed naming none), or None when it ran through."""
    namespace = dict(definitions)
    namespace["__name__"] = "__main__"
    code = compile(at_work_code(chapter_id), f"<{chapter_id} at work>", "exec")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)
    except mine.Mismatch as err:
        return " ".join(err.exercises)
    except Exception as err:  # an error inside a piece carries a note naming its exercise
        return " ".join([str(err), *getattr(err, "__notes__", ())])
    return None


def _mutants(chapter_id: str) -> dict:
    return importlib.import_module(f"mutants_{chapter_id}").MUTANTS


def notebook_with(chapter_id: str, exercise_id: str | None = None, name: str = "") -> dict:
    """The solution notebook's definitions, with mutant ``name`` of ``exercise_id`` defined
    in the same namespace (as in a learner's notebook, where the solution's other pieces
    then call the wrong one)."""
    cells = code_cells(manifest.chapter(chapter_id).solution)
    if exercise_id is None:
        return load_cells(cells, "solution")._globals
    entry = _mutants(chapter_id)[exercise_id]
    if isinstance(entry, tuple):  # a solution region replaced: the notebook is loaded again
        return mutant_namespace(
            chapter_id, _mutants(chapter_id), exercise_id, name, whole=True
        )._globals
    namespace = load_cells(cells, "solution")._globals
    exec(compile(textwrap.dedent(entry[name]), f"<mutant {name}>", "exec"), namespace)
    return namespace


#: The wrong piece the suite tries per chapter: a kept mutant that changes what the chapter's
#: workload computes (some mutants are wrong only where no workload goes: a float64 corner, a
#: recursion limit; ``python tests/exercises/test_at_work.py`` counts all). A wrong piece
#: costs the section a run per piece of the learner's (to find which one changes the
#: result), so one per chapter; that the culprit named is the wrong piece and never another
#: is ``mine.compare``'s, which tests/unit/test_mine.py checks.
SUITE_MUTANTS = {
    "01": [("01.6", "inverse_permutation")],
    "02": [("02.5", "no_expand")],
    "03": [("03.6", "no_square_root")],
    "04": [("04.5", "steps_on_overflow")],
    "05": [("05.6", "no_cycle_check")],
    "06": [("06.4", "no_padding")],
    "07": [("07.6", "operands_swapped")],
    "08": [("08.4", "post_ln")],
}


def chosen_mutants(chapter_id: str) -> list[tuple[str, str]]:
    """The chapter's suite mutants (each must exist among its kept mutants)."""
    chosen = SUITE_MUTANTS.get(chapter_id, [])
    known = set(cases(_mutants(chapter_id)))
    missing = [pair for pair in chosen if pair not in known]
    assert not missing, f"chapter {chapter_id}: no such kept mutants {missing}"
    return chosen


# That the section runs through on the solutions is nbval's to check: it runs every solution
# notebook top to bottom (conftest.py), the section included.
CASES = [(c, e, n) for c in CHAPTERS for e, n in chosen_mutants(c)]


@pytest.mark.parametrize(("chapter_id", "exercise_id", "name"), CASES)
def test_a_wrong_piece_stops_the_section_naming_its_exercise(
    chapter_id: str, exercise_id: str, name: str
) -> None:
    named = run_at_work(chapter_id, notebook_with(chapter_id, exercise_id, name))
    assert named is not None, f"the section ran through with mutant {name} of {exercise_id}"
    assert exercise_id in named, f"mutant {name} of {exercise_id}: the section named {named!r}"


CAUGHT: list[tuple[str, str]] = []


def catch_rates(chapter_id: str) -> tuple[int, int, int, list[str]]:
    """(caught and named right, misnamed, total, names of those that ran through)."""
    caught = misnamed = total = 0
    missed: list[str] = []
    CAUGHT.clear()
    for exercise_id, name in cases(_mutants(chapter_id)):
        if exercise_id not in PIECES or name.startswith("delegates"):
            continue
        total += 1
        named: Any = run_at_work(chapter_id, notebook_with(chapter_id, exercise_id, name))
        if named is None:
            missed.append(f"{exercise_id} {name}")
        elif exercise_id in named:
            caught += 1
            CAUGHT.append((exercise_id, name))
        else:
            misnamed += 1
            missed.append(f"{exercise_id} {name} (named {named[:60]!r})")
    return caught, misnamed, total, missed


if __name__ == "__main__":
    for chapter_id in sys.argv[1:] or CHAPTERS:
        caught, misnamed, total, missed = catch_rates(chapter_id)
        print(
            f"chapter {chapter_id}: {caught}/{total} wrong pieces stop the section naming "
            f"their exercise; {misnamed} misnamed"
        )
        for line in missed:
            print("   ran through or misnamed:", line)
        print("   caught:", CAUGHT)
