"""The files an instructor opens are safe, and import into an LMS: gradebook.csv,
canvas.csv and gradescope.csv read as a spreadsheet reads them, summary.md and feedback.md
as a Markdown renderer does; adjustments, similar answers and instructor-only exercises."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest
from class_fakes import FULL, fake_course, submit  # noqa: F401 (a fixture)

from minitorch.course import similarity
from minitorch.course.batch import grade_class, merge_results
from minitorch.course.class_files import write_summary
from minitorch.course.safe_text import FORMULA_STARTS, csv_cell, md_code_block, md_text

HOSTILE = [
    '=HYPERLINK("http://evil","x")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    "  =1",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "a | b\n- forged list line\n# forged heading",
    "**bold** _em_ `code` ~~x~~",
    "```\nfence",
    "1. numbered",
]


def _quiet(*_: object) -> None:
    pass


def _spreadsheet_cells(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _assert_no_formula(path: Path) -> None:
    """No cell a spreadsheet would run: none starts (after blanks) with = + - @ tab CR,
    unless it is a number we wrote."""
    for line in _spreadsheet_cells(path):
        for cell in line:
            if re.fullmatch(r"-?\d+(\.\d+)?", cell):
                continue
            assert not cell.lstrip(" \n").startswith(FORMULA_STARTS), (path.name, cell)
            assert not cell.startswith(FORMULA_STARTS), (path.name, cell)


def _unescaped(text: str, char: str) -> int:
    return len(re.findall(rf"(?<!\\){re.escape(char)}", text))


def _assert_renders_as_text(path: Path) -> None:
    """What a Markdown renderer would take for markup, outside code fences: no HTML tag,
    no link, table rows with their header's number of cells, no line a student opened."""
    fence = None
    columns = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if fence:
            if line.strip() == fence:
                fence = None
            continue
        opening = re.match(r"^(`{3,})", line)
        if opening:
            fence = opening[1]
            continue
        if line == "![mean points and full marks per exercise](summary.png)":
            continue  # the one link of ours
        assert "<" not in line and not re.search(r"(?<!\\)\]\(", line), line
        assert "javascript:" not in line or "\\[" in line, line
        if line.startswith("|"):
            cells = _unescaped(line, "|")
            columns = columns or cells
            assert cells == columns, line
        else:
            columns = None
        assert not line.startswith(("- forged", "# forged", "1. numbered")), line


# catches: file names, roster cells and messages landing raw in the CSV (a formula the
# spreadsheet runs) and in summary.md/feedback.md (HTML, links, forged lines, broken tables)
def test_hostile_names_rosters_and_messages_are_inert_in_every_file(tmp_path, fake_course):  # noqa: F811
    folder = tmp_path / "class"
    for n, text in enumerate(HOSTILE):
        name = re.sub(r"[/\x00]", "_", text.replace("\n", " ").replace("\r", " ")) or "x"
        submit(
            folder / f"{name}.ipynb",
            **{"99_1": [0, text], "99_2": [3, ""], "99_3": [1, ""]},
            output=text,
            review=[{"exercise": "99.1", "seen": text, "cell": 1, "line": 1}],
        )
        submit(folder / f"s{n}_{n + 100}_{n + 500}_{name}.ipynb", **FULL)
    for name in ("summary.md", "gradebook.csv", "bidi\u202egpj.ipynb"):  # our files' names
        submit(folder / f"{name}.ipynb", **FULL)
    bad_bytes = os.fsdecode(b"not-utf8-\xff\xfe")  # a name no encoding reads
    submit(folder / f"{bad_bytes}.ipynb", **{"99_1": [0, "fails"]})
    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section"])
        for n, text in enumerate(HOSTILE):
            writer.writerow([text, str(n + 100), text, text, text])
    out = tmp_path / "out"
    rows = grade_class(
        [folder], fake_course, out, roster=roster, canvas="=cmd|' /C calc'!A0",
        progress=_quiet,
    )  # fmt: skip
    assert len({r["folder"] for r in rows}) == 2 * len(HOSTILE) + 4
    assert (out / "summary.md").is_file() and (out / "gradebook.csv").is_file()
    for name in ("gradebook.csv", "canvas.csv", "gradescope.csv"):
        _assert_no_formula(out / name)
    book = _spreadsheet_cells(out / "gradebook.csv")
    assert {line[0] for line in book[1:] if line[1]} == {"'" + t if t.lstrip(" \n").startswith(
        FORMULA_STARTS) or t.startswith(FORMULA_STARTS) else t for t in HOSTILE}  # fmt: skip
    _assert_renders_as_text(out / "summary.md")
    for r in rows:
        _assert_renders_as_text(out / r["folder"] / "feedback.md")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in summary


@pytest.mark.parametrize("text", HOSTILE + ["", "plain", "-", "\u2028x", "x\x1b[31m"])
def test_md_text_is_one_inline_run(text):
    out = md_text(text)
    assert "\n" not in out and "\r" not in out and "<" not in out and "\x1b" not in out
    assert not re.match(r"\s*(#{1,6}(\s|$)|[+-](\s|$)|[=-]+\s*$|\d+[.)](\s|$)|`{3}|>)", out)
    assert _unescaped(out, "|") == _unescaped(out, "[") == _unescaped(out, "*") == 0


def test_a_code_block_cannot_be_closed_by_its_text():
    block = md_code_block("a\n````\n<b>x</b>")
    assert block[0] == block[-1] == "`````" and "````" in block


@pytest.mark.parametrize("value", [*HOSTILE, "plain", 3.5, -2])
def test_csv_cells_follow_owasp(value):
    cell = csv_cell(value)
    if isinstance(value, str) and value.lstrip(" \n\r\t").startswith(FORMULA_STARTS):
        assert cell == "'" + value
    else:
        assert cell == value


# catches: a Gradescope export's ids taken from the wrong place; gradescope.csv not shaped
# as Gradescope's grade export; a roster row matched on names
def test_a_gradescope_export_end_to_end(tmp_path, fake_course):  # noqa: F811
    export = tmp_path / "assignment_1_export"
    submit(export / "submission_101" / "my hw.ipynb", **FULL)
    submit(export / "submission_102" / "hw.ipynb", **{"99_1": [2, ""]})
    (export / "submission_103").mkdir()
    (export / "submission_103" / "notes.txt").write_text("no notebook")
    (export / "submission_metadata.yml").write_text(
        "\n".join(
            f"submission_{n}:\n  :submitters:\n  - :name: {name}\n    :sid: '{sid}'\n"
            f"    :email: {email}\n  :created_at: 2026-01-0{n - 100} 10:00:00 -08:00"
            for n, name, sid, email in [
                (101, "Jane Doe", "S1", "jane@uni.edu"),
                (102, "S3", "S2", "bob@uni.edu"),  # a name that is another's SID
                (103, "Kim Sam", "S3", "kim@uni.edu"),
            ]
        )
        + "\nsubmission_104:\n  :submitters:\n  - :name: Ann A\n    :sid: S5\n"
        "  - :name: Ben B\n    :sid: S6\n  :created_at: 2026-01-05 10:00:00 -08:00\n",
        encoding="utf-8",
    )
    submit(export / "submission_104" / "group.ipynb", **{"99_2": [3, ""]})
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "First Name,Last Name,SID,Email\nJane,Doe,S1,jane@uni.edu\nBob,B,S2,bob@uni.edu\n"
        "Kim,Sam,S3,kim@uni.edu\nNo,Show,S4,no@uni.edu\nAnn,A,S5,a@u.edu\nBen,B,S6,b@u.edu\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    grade_class([export], fake_course, out, roster=roster, progress=_quiet)
    lines = _spreadsheet_cells(out / "gradescope.csv")
    assert lines[0][:8] == [
        "Name", "SID", "Email", "Total Score", "Max Points", "Status", "Submission ID", "Lateness"
    ]  # fmt: skip
    assert lines[0][8] == "99.1: Add two numbers (2.0 pts)"
    by_sid = {line[1]: line for line in lines[1:]}
    assert by_sid["S1"][:7] == ["Jane Doe", "S1", "jane@uni.edu", "6", "6", "Graded", "101"]
    assert by_sid["S1"][8:] == ["2", "3", "1"]
    assert by_sid["S2"][3] == "2" and by_sid["S3"][3] == "0"
    assert by_sid["S4"][3:6] == ["", "6", "Missing"]
    assert by_sid["S5"][3] == by_sid["S6"][3] == "3"  # a group: one row per member
    assert by_sid["S5"][6] == by_sid["S6"][6] == "104"
    book = {row["SID"]: row for row in csv.DictReader(open(out / "gradebook.csv"))}
    assert book["S3"]["status"] == "not a notebook"
    assert "No notebook was found" in book["S3"]["reason"]


# catches: adjustments not reaching the gradebook or the feedback, or applied twice on the
# next run; an instructor-only exercise without a column
def test_adjustments_and_instructor_only_exercises(tmp_path, fake_course):  # noqa: F811
    folder = tmp_path / "class"
    extra = {"99.10": ["A private exercise", 4, 1, "private failed"]}
    submit(folder / "doejane_12345_700_hw.ipynb", **{"99_1": [1, "half"]}, extra=extra)
    submit(folder / "smithbob_222_701_hw.ipynb", **FULL, extra=extra)
    roster = tmp_path / "roster.csv"
    roster.write_text("ID,Name\n12345,Doe\n222,Smith\n", encoding="utf-8")
    changes = tmp_path / "adjustments.csv"
    changes.write_text(
        "student,exercise,points,comment\ndoejane_12345,99.1,1,regrade request: <b>ok</b>\n"
        "222,,-2,=late by a day\nghost,99.1,5,nobody\nSmith,99.1,9,a name is no id\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    for _ in range(2):  # the next run applies them afresh, never twice
        grade_class([folder], fake_course, out, adjustments=changes, roster=roster, progress=_quiet)
    book = {r["student"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert (
        list(book["doejane_12345"]).index("99.10") == list(book["doejane_12345"]).index("99.3") + 1
    )
    jane, bob = book["doejane_12345"], book["smithbob_222"]
    assert (jane["99.1"], jane["99.10"], jane["total"], jane["adjusted"]) == ("2", "1", "3", "1")
    assert (bob["total"], bob["adjusted"]) == ("5", "-2")
    feedback = (out / "doejane_12345" / "feedback.md").read_text(encoding="utf-8")
    assert "- +1 points on exercise 99.1: regrade request: &lt;b&gt;ok&lt;/b&gt;" in feedback
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "adjustment for 'ghost' matches no student" in summary
    assert "adjustment for 'Smith' matches no student" in summary
    assert "| 99.10 | A private exercise | 4 |" in summary


# catches: the regraded feedback showing the new total above the old summary line
def test_a_regrade_rewrites_the_summary_line():
    old = {
        "chapter": "01",
        "score": 20,
        "max_score": 20,
        "output": "nb.ipynb (chapter 01): 20/20 points, 7 of 7 exercises passed\nseed 3",
        "tests": [
            {"number": "01.1", "score": 2, "status": "passed"},
            {"number": "01.2", "score": 18, "status": "passed"},
        ],
    }
    new = {
        "chapter": "01",
        "seed": 3,
        "tests": [{"number": "01.1", "score": 0, "status": "failed"}],
    }
    merged = merge_results(old, new, ["01.1"])
    again = merge_results(merged, new, ["01.1"])
    assert again["output"].splitlines() == [
        "nb.ipynb (chapter 01): 18/20 points, 1 of 2 exercises passed",
        "seed 3",
        "Regraded 01.1 (inputs drawn with seed 3).",
    ]


# catches: a renamed, reformatted copy passing unseen; a short common answer flagged
def test_answers_alike_after_renaming_are_listed_for_review(tmp_path, fake_course):  # noqa: F811
    import nbformat

    body = (
        "def mul(a, b):\n    total = 0\n    count = 0\n    while count < abs(b):\n"
        "        total = total + a\n        count = count + 1\n    if b < 0:\n"
        "        total = -total\n    return total\n"
    )
    copied = body.replace("total", "acc").replace("count", "k").replace("a, b", "x, y")
    copied = copied.replace("+ a", "+ x").replace("abs(b)", "abs( y )").replace("b < 0", "y<0")
    other = "def mul(a, b):\n    return sum(a for _ in range(abs(b))) * (1 if b >= 0 else -1)\n"
    notebooks = []
    for name, code in [("ann", body), ("ben", copied), ("cid", other)]:
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(code),
            nbformat.v4.new_code_cell("def add(a, b):\n    return a + b"),
        ]
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        notebooks.append((name, path))
    pairs = similarity.similar_pairs(notebooks, fake_course)
    assert [(p.first, p.second, p.answers) for p in pairs] == [("ann", "ben", ("mul",))]
    assert pairs[0].ratio == 1.0
    write_summary([], fake_course, tmp_path, pairs=pairs)
    assert "| ann | ben | mul | 100% |" in (tmp_path / "summary.md").read_text()
