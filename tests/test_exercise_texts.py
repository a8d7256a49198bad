"""Exercise texts state what to build, not how; hints come on request, never in the notebook.

For the chapters whose texts are contracts (01-04; chapters 05-08 join when their hints
file exists), each exercise's section of the generated exercise notebook (from its ``## NN.k``
heading to the next ``##`` heading) may hold no numbered recipe and no code block, its
``raise NotImplementedError`` says only where the hints are, it tells the learner that
``hint("NN.k")`` exists, and no hint level's text appears anywhere in the notebook. Every
chapter's headings carry the manifest's title and points."""

from __future__ import annotations

import re

import nbformat
import pytest

from minitorch.course import hints, manifest

#: The chapters whose exercise texts have been rewritten as contracts (issue 34).
CONTRACTS = ("01", "02", "03", "04")
CHAPTERS = [c for c in manifest.CHAPTERS if c.id in CONTRACTS or hints.has_hints(c)]

_NUMBERED = re.compile(r"^\s*(?:[-*]\s+)?\d+[.)]\s+\S", re.M)
_NUMBERED_COMMENT = re.compile(r"#\s*(?:step\s*)?\d+[.):]\s", re.I)
_HEADING = re.compile(r"^## ", re.M)
_RAISE = re.compile(r"raise NotImplementedError\((.*)\)")


def _sections(nb: nbformat.NotebookNode) -> dict[str, list[nbformat.NotebookNode]]:
    """Exercise id -> the cells from its ``## NN.k`` heading to the next ``##`` heading."""
    found: dict[str, list] = {}
    current = None
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _HEADING.search(cell.source):
            m = re.search(r"^## (\d\d\.\d+)\b", cell.source, re.M)
            current = m.group(1) if m else None
            if current:
                found[current] = []
        if current:
            found[current].append(cell)
    return found


def _points(n: int) -> str:
    return f"({n} point{'s' if n != 1 else ''})"


@pytest.mark.parametrize("chapter", manifest.CHAPTERS, ids=lambda c: c.id)
def test_each_heading_carries_the_manifests_title_and_points(chapter):
    # catches: points changed in the manifest but not in the heading a learner reads
    nb = nbformat.read(chapter.solution, as_version=4)
    headings = [
        line
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if re.match(r"## \d\d\.\d+\b", line)
    ]
    expected = [f"## {e.id} {e.title} {_points(e.points)}" for e in chapter.exercises]
    normalized = [h.replace("`", "") for h in headings]
    assert normalized == [e.replace("`", "") for e in expected]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.id)
def test_every_exercise_has_three_hint_levels(chapter):
    # catches: an exercise without hints, or hints for an exercise the chapter lacks
    assert hints.has_hints(chapter), f"no {hints.hints_file(chapter)}"
    written = hints.parse(hints.hints_file(chapter).read_text(encoding="utf-8"))
    assert sorted(written) == sorted(e.id for e in chapter.exercises)
    for exercise_id, levels in written.items():
        assert len(levels) == 3 and all(levels), f"{exercise_id}: {len(levels)} levels"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.id)
def test_exercise_texts_state_what_not_how(chapter):
    # catches: a numbered recipe, a code block, a hint in the raise or the notebook's text
    nb = nbformat.read(chapter.exercise_notebook, as_version=4)
    sections = _sections(nb)
    problems = []
    for ex in chapter.exercises:
        cells = sections.get(ex.id, [])
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        code = "\n".join(c.source for c in cells if c.cell_type == "code")
        if m := _NUMBERED.search(text):
            problems.append(f"{ex.id}: a numbered step: {m.group(0).strip()!r}")
        if "```" in text:
            problems.append(f"{ex.id}: a code block in the text")
        if f'hint("{ex.id}")' not in text:
            problems.append(f'{ex.id}: the text never says hint("{ex.id}") exists')
        if m := _NUMBERED_COMMENT.search(code):
            problems.append(f"{ex.id}: a numbered step in the code cell: {m.group(0)!r}")
        neutral = repr(f'{ex.id}: write your code here (stuck? hint("{ex.id}"))')
        for message in _RAISE.findall(code):
            if message != neutral:
                problems.append(f"{ex.id}: the raise says {message}")
    everything = "\n".join(c.source for c in nb.cells)
    for exercise_id, levels in hints.parse(hints.hints_file(chapter).read_text()).items():
        for level, text in enumerate(levels, 1):
            for line in text.splitlines():
                if len(line.strip()) > 40 and line.strip() in everything:
                    problems.append(
                        f"hint {exercise_id} level {level} is in the notebook: {line!r}"
                    )
    assert not problems, "\n".join(problems)
