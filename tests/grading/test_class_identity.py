"""One student, one folder, one row: ids from the platforms' export layouts, folders no
two students share, rosters matched on id columns, several submissions of one student."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from class_fakes import FULL, fake_course, submit  # noqa: F401 (a fixture)

from minitorch.course.batch import grade_class
from minitorch.course.roster import read_roster
from minitorch.course.submissions import find_submissions, folder_name

CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (5501)\n"
    "    Points Possible,,,,,6\n"
    '"Doe, Jane",12345,S001,jdoe,Sec A,\n'
    '"Smith, Bob",222,S002,bsmith,Sec A,\n'
    '"None, Nora",999,S003,nnone,Sec B,\n'
)


def _book(out: Path) -> list[dict[str, str]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _quiet(*_: object) -> None:
    pass


# catches: two students whose names differ only in what a folder name drops sharing one
# output folder (one's results.json replacing the other's), silently
def test_ids_that_read_alike_get_folders_of_their_own(tmp_path, fake_course):  # noqa: F811
    folder = tmp_path / "class"
    submit(folder / "jane doe.ipynb", **FULL)
    submit(folder / "jane_doe.ipynb", **{"99_1": [0, "wrong"]})
    submit(folder / "Алиса.ipynb", **FULL)
    submit(folder / "Ꭺлиса.ipynb", **{"99_1": [1, "half"]})
    out = tmp_path / "out"
    rows = grade_class([folder], fake_course, out, progress=_quiet)
    folders = [r["folder"] for r in rows]
    assert len(set(folders)) == 4
    assert len({f.lower() for f in folders}) == 4  # a case-insensitive disk too
    totals = {r["student"]: r["total"] for r in rows}
    assert totals == {"jane doe": 6, "jane_doe": 0, "Алиса": 6, "Ꭺлиса": 1}
    for r in rows:
        assert f"**{r['student'].replace('_', chr(92) + '_')}**" in (
            out / r["folder"] / "feedback.md"
        ).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "student", ["jane doe", "Jane", "../x", ".hidden", "a~b", "x" * 300, "", "con", "é"]
)
def test_a_folder_name_is_one_no_other_id_has(student):
    name = folder_name(student)
    assert "/" not in name and not name.startswith(".") and len(name) <= 100
    others = {folder_name(s) for s in ["jane_doe", "jane", "x", "_", "a_b", "e", "con_1"]}
    assert name not in others and name != "con"


# catches: a student's own folder named like another's Gradescope submission taking that
# id (the real student then filed as submission_999_2)
def test_a_gradescope_id_comes_only_from_the_export(tmp_path):
    export = tmp_path / "export"
    (export / "submission_999").mkdir(parents=True)
    (export / "submission_999" / "hw.ipynb").write_text("{}")
    (export / "submission_111" / "submission_999").mkdir(parents=True)
    (export / "submission_111" / "submission_999" / "hw.ipynb").write_text("{}")
    (export / "submission_111" / "doejane_12345_1_hw.ipynb").write_text("{}")
    (export / "submission_metadata.yml").write_text(
        "submission_999:\n  :submitters:\n  - :name: Real Student\n    :sid: '999'\n"
        "    :email: real@uni.edu\n  :created_at: 2026-01-02 10:00:00.000000000 -08:00\n"
        "submission_111:\n  :submitters:\n  - :name: Mallory\n    :sid: '111'\n"
        "    :email: mal@uni.edu\n  :created_at: 2026-01-02 11:00:00.000000000 -08:00\n"
        "    # a student's folder inside an upload is no export\n",
        encoding="utf-8",
    )
    found = {s.student: s for s in find_submissions([export])}
    assert set(found) == {"submission_999", "submission_111"}
    assert found["submission_999"].ids == {"sid": "999", "email": "real@uni.edu"}
    assert found["submission_111"].path == export / "submission_111"


def test_a_folder_the_metadata_does_not_list_is_no_submission(tmp_path):
    export = tmp_path / "export"
    (export / "submission_5").mkdir(parents=True)
    (export / "submission_5" / "a.ipynb").write_text("{}")
    (export / "submission_metadata.yml").write_text("submission_6:\n  :submitters: []\n")
    assert [s.student for s in find_submissions([export])] == ["submission_5/a"]


# catches: a plain file named like a Canvas student's id taking that student's id
def test_a_platforms_id_wins_over_a_plain_file_named_like_it(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "doejane_12345_678_hw.ipynb").write_text("{}")
    (tmp_path / "a" / "doejane_12345.ipynb").write_text("{}")
    subs = find_submissions([tmp_path / "a" / "doejane_12345.ipynb", tmp_path / "class"])
    ids = {s.student: s.platform for s in subs}
    assert ids == {"doejane_12345": "canvas", "doejane_12345~2": "file"}
    assert "another student's too" in next(s.note for s in subs if s.platform == "file")


# catches: a roster row whose display name equals another student's Canvas number taking
# that student's row; "Points Possible" read as a student; headers lowercased and names
# replaced by ids; the Canvas import file missing or not shaped as Canvas reads it
def test_a_canvas_roster_matches_on_ids_and_round_trips(tmp_path, fake_course):  # noqa: F811
    folder = tmp_path / "class"
    submit(folder / "doejane_12345_700_hw.ipynb", **FULL)
    submit(folder / "smithbob_LATE_222_701_hw.ipynb", **{"99_1": [2, ""]})
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER + "12345,777,S004,evil,Sec B,\n", encoding="utf-8")
    out = tmp_path / "out"
    grade_class(
        [folder], fake_course, out, roster=roster, canvas="Homework 1 (5501)",
        late_penalty=50, progress=_quiet,
    )  # fmt: skip
    book = {r["ID"]: r for r in _book(out)}
    assert list(_book(out)[0])[:6] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                        "Homework 1 (5501)"]  # fmt: skip
    assert set(book) == {"12345", "222", "999", "777"}
    assert (book["12345"]["Student"], book["12345"]["total"]) == ("Doe, Jane", "6")
    assert book["12345"]["status"] == "graded"
    assert (book["222"]["late"], book["222"]["late penalty"], book["222"]["total"]) == (
        "yes", "1", "1",
    )  # fmt: skip
    assert book["999"]["status"] == book["777"]["status"] == "missing"
    with open(out / "canvas.csv", newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert lines[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                        "Homework 1 (5501)"]  # fmt: skip
    assert lines[1][0].strip() == "Points Possible" and lines[1][-1] == "6"
    scores = {line[1]: line[-1] for line in lines[2:]}
    assert scores == {"12345": "6", "222": "1", "999": "", "777": ""}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "4 students: 2 graded, 2 missing." in summary


def test_a_roster_row_claimed_twice_goes_to_the_platforms_id_and_is_reported(
    tmp_path,
    fake_course,  # noqa: F811
):
    folder = tmp_path / "class"
    submit(folder / "doejane_12345_700_hw.ipynb", **FULL)
    submit(folder / "x" / "12345.ipynb", **{"99_1": [0, "no"]})  # a plain file, Jane's id
    submit(folder / "x" / "nobody.ipynb", **FULL)
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\n12345,Jane Doe,j@u.edu\n", encoding="utf-8")
    out = tmp_path / "out"
    rows = grade_class([folder], fake_course, out, roster=roster, progress=_quiet)
    jane = next(r for r in rows if r.get("_roster"))
    assert jane["student"] == "doejane_12345" and jane["total"] == 6
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "names roster row 12345, which is doejane\\_12345's" in summary
    assert "x/nobody matches no roster row" in summary


@pytest.mark.parametrize(
    "text, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "a binary file"),
        (b"\xff\xfeid\x00", "a binary file"),
        (b"name\nJane\n", "no id column"),
        (b"id,id\n1,2\n", "distinct column names"),
        (b"id,name\n", "no student rows"),
        (b"Student,ID\n    Points Possible,\n", "no student rows"),
    ],
)
def test_a_roster_that_is_no_roster_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_bytes(text)
    with pytest.raises(ValueError, match=message):
        read_roster(path)


# catches: two late resubmissions giving two rows, the older worse one taking the roster
# identity, both counted in the means; --keep best/all not honoured
@pytest.mark.parametrize("keep, total, rows", [("latest", 1, 1), ("best", 6, 1), ("all", 1, 3)])
def test_several_submissions_of_one_student(tmp_path, fake_course, keep, total, rows):  # noqa: F811
    folder = tmp_path / "class"
    submit(folder / "doejane_12345_700_hw.ipynb", **{"99_1": [2, ""]})
    submit(folder / "doejane_LATE_12345_702_hw-2.ipynb", **{"99_1": [1, "late, worse"]})
    submit(folder / "doejane_LATE_12345_701_hw-1.ipynb", **FULL)
    out = tmp_path / "out"
    found = grade_class([folder], fake_course, out, keep=keep, progress=_quiet)
    book = _book(out)
    assert len(book) == rows == len(found)
    mine = next(r for r in book if r["kept"] == "yes")
    assert float(mine["total"]) == total
    assert mine["late"] == "yes" and mine["attempts"] == ("3" if keep != "latest" else "")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "1 students: 1 graded." in summary
    assert f"Mean total {total} of 6 points over the 1 notebooks graded" in summary
    import json

    kept = json.loads((out / "doejane_12345" / "results.json").read_text())
    assert kept["score"] == total
