"""No lesson shows the answer to one of its own exercises.

A lesson teaches each graded piece with prose, the formula, a picture, a worked trace and
*neighbouring* package code, but neither shows nor prints the reference of that piece: not
with ``show_source``, not pasted, not as a near-copy under other names. Two checks:

- ``show_source`` of a package object that an exercise of the same chapter re-implements
  (the manifest's ``piece``), or of the class or module holding it whole;
- a solution region reproduced: the share of its token 10-grams, with every name
  replaced by one placeholder (so renaming variables changes nothing), found in one cell
  of the lesson (code and outputs, or a Markdown code block).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import sys

import pytest

from minitorch.course import manifest

N = 10  # tokens per n-gram
LIMIT = 0.25  # the share of a region's n-grams one cell may hold (shown answers held 0.4-1)
MIN_TOKENS = 30  # shorter regions (a few lines) share their shape with any loop of the lesson

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*|\S")
_KEEP = set(keyword.kwlist)


def tokens(text: str) -> list[str]:
    """Python-ish tokens with every name the same (``x``, ``total``, ``Add``: ``N``)."""
    return [
        ("N" if t not in _KEEP else t) if (t[0].isalpha() or t[0] == "_") else t
        for t in _TOKEN.findall(text)
    ]


def grams(toks: list[str]) -> set[tuple[str, ...]]:
    return {tuple(toks[i : i + N]) for i in range(len(toks) - N + 1)}


def solution_regions(chapter: manifest.Chapter) -> list[str]:
    """The code between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, comments dropped."""
    nb = json.loads(chapter.solution.read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        for m in re.finditer(r"### BEGIN SOLUTION[^\n]*\n(.*?)### END SOLUTION", source, re.S):
            lines = [ln for ln in m.group(1).splitlines() if not ln.strip().startswith("#")]
            out.append("\n".join(lines))
    return out


def lesson_cells(chapter: manifest.Chapter) -> list[tuple[str, str]]:
    """(source, the text of its outputs) of each code cell of the lesson, and the code
    blocks of its Markdown cells (with no outputs)."""
    nb = json.loads(chapter.lesson.read_text(encoding="utf-8"))
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            blocks = re.findall(r"```[^\n]*\n(.*?)```", "".join(cell["source"]), re.S)
            cells += [(block, "") for block in blocks]
        if cell["cell_type"] != "code":
            continue
        texts = []
        for output in cell.get("outputs", []):
            if "text" in output:
                texts.append("".join(output["text"]))
            plain = output.get("data", {}).get("text/plain")
            if plain:
                texts.append("".join(plain))
        cells.append(("".join(cell["source"]), "\n".join(texts)))
    return cells


def reproduced(chapter: manifest.Chapter) -> list[tuple[float, str]]:
    """(share, first line) of each solution region that one cell of the lesson (its code
    and outputs, or a Markdown code block) reproduces. Per cell, so that the idioms every
    loop shares, spread over a whole lesson, do not add up to a copy."""
    cells = [grams(tokens(f"{src}\n{out}")) for src, out in lesson_cells(chapter)]
    found = []
    for region in solution_regions(chapter):
        toks = tokens(region)
        if len(toks) < MIN_TOKENS:
            continue
        g = grams(toks)
        share = max((len(g & cell) / len(g) for cell in cells), default=0.0)
        if share > LIMIT:
            found.append((round(share, 2), region.strip().splitlines()[0]))
    return found


def shown_pieces(chapter: manifest.Chapter) -> list[str]:
    """The ``show_source(...)`` calls of the lesson that show a piece one of its own
    exercises re-implements, or the class holding it (``Adam`` for ``Adam.step``)."""
    pieces = [p for e in chapter.exercises for p in e.pieces]
    shown = []
    for source, _ in lesson_cells(chapter):
        try:
            tree = ast.parse(re.sub(r"^\s*[%!].*$", "", source, flags=re.M))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "show_source"):
                continue
            for arg in node.args:
                name = ast.unparse(arg).split(".")
                for piece in pieces:
                    path = piece.partition(":")[2].split(".")
                    if name[-len(path) :] == path or (len(path) > 1 and name[-1] == path[-2]):
                        shown.append(f"show_source({'.'.join(name)}) shows {piece}")
    return shown


@pytest.mark.parametrize("chapter", manifest.CHAPTERS, ids=lambda c: c.id)
def test_the_lesson_does_not_show_its_exercises_answers(chapter):
    # catches: show_source of the very piece an exercise asks for (05's Tracer.on_apply,
    # 06's ring, 07's kernels, ...) and a solution pasted or renamed into a lesson cell
    shown = shown_pieces(chapter)
    assert shown == [], f"chapter {chapter.id}'s lesson shows an exercise's answer: {shown}"
    copies = reproduced(chapter)
    assert copies == [], (
        f"chapter {chapter.id}'s lesson reproduces solution regions (share of their "
        f"10-grams, names ignored): {copies}"
    )


def test_the_check_finds_a_renamed_copy():
    # the n-gram check has teeth: a solution region with every name changed is still found
    chapter = manifest.chapter("06")
    region = max(solution_regions(chapter), key=len)
    renamed = re.sub(r"\b[a-z_]+\b", lambda m: _rename(m.group(0)), region)
    assert len(grams(tokens(region)) & grams(tokens(renamed))) == len(grams(tokens(region)))
    assert tokens(region) == tokens(renamed)


def test_the_check_finds_an_answer_pasted_into_a_lesson(monkeypatch):
    # the per-cell check has teeth: a lesson cell holding a renamed solution region, with
    # other code around it, is reported
    chapter = manifest.chapter("07")
    region = max(solution_regions(chapter), key=len)
    renamed = re.sub(r"\b[a-z_]+\b", lambda m: _rename(m.group(0)), region)
    padded = "import numpy as np\n\n" + renamed + "\n\nprint('done')\n"
    monkeypatch.setattr(
        sys.modules[__name__], "lesson_cells", lambda ch: [("x = 1", ""), (padded, "")]
    )
    found = reproduced(chapter)
    assert found and max(share for share, _ in found) > 0.9


def _rename(word: str) -> str:
    return word if word in _KEEP else word + "_x"


def test_every_exercise_that_rewrites_a_package_piece_names_it():
    # catches: a manifest piece that does not exist (a renamed function leaves the check blind)
    import importlib

    for chapter in manifest.CHAPTERS:
        for e in chapter.exercises:
            for piece in e.pieces:
                module_name, _, attrs = piece.partition(":")
                obj = importlib.import_module(module_name)
                for attr in attrs.split("."):
                    obj = getattr(obj, attr)
                assert callable(obj), f"{e.id}: {piece} is not a function or class"
