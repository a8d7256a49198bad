"""``make lab`` end to end: the command it runs starts JupyterLab, which prints and serves
the first lesson's URL and serves the course notebooks."""

from __future__ import annotations

import re
import shutil
import subprocess
import urllib.request

import pytest
from lab_server import running_lab

from minitorch.course.manifest import CHAPTERS, ROOT

FIRST_LESSON = "chapters/01_tensors.ipynb"


def make_lab_command() -> str:
    """The ``jupyter lab`` command line ``make lab`` runs (read with ``make -n``)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "-n", "-s", "--no-print-directory", "lab"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    lines = [line.strip() for line in out.replace("\\\n", " ").splitlines()]
    commands = [line for line in lines if re.search(r"\bjupyter lab\b", line)]
    assert len(commands) == 1, f"`make -n lab` runs no single `jupyter lab`:\n{out}"
    if not (ROOT / commands[0].split()[0]).exists():
        pytest.skip(f"{commands[0].split()[0]} does not exist: run `make setup` first")
    return commands[0]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(make_lab_command(), tmp_path_factory.mktemp("lab")) as lab:
        yield lab


def test_make_lab_prints_and_opens_the_first_lesson(lab):
    url = f"{lab.base}/lab/tree/{FIRST_LESSON}?token="  # a token given on the command line
    printed = lab.log.read_text()  # is printed as "..."
    assert url in printed, f"`make lab` did not print {url}:\n{printed}"
    with urllib.request.urlopen(url + lab.token, timeout=10) as response:
        assert response.status == 200 and "JupyterLab" in response.read().decode()
    # The browser `make lab` opens, and anyone who types the bare address, lands there too.
    with urllib.request.urlopen(f"{lab.base}/?token={lab.token}", timeout=10) as response:
        assert response.geturl().startswith(f"{lab.base}/lab/tree/{FIRST_LESSON}")


def test_lab_serves_the_course(lab):
    names = {item["name"] for item in lab.get_json("/api/contents/chapters")["content"]}
    for chapter in CHAPTERS:
        assert chapter.lesson.name in names, f"{chapter.lesson.name} not served; got {names}"
    exercises = {i["name"] for i in lab.get_json("/api/contents/exercises")["content"]}
    assert {c.exercise_notebook.name for c in CHAPTERS} <= exercises
    lesson = lab.get_json(f"/api/contents/{FIRST_LESSON}")
    assert lesson["type"] == "notebook" and lesson["content"]["cells"]
