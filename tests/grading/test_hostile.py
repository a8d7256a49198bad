"""Hostile and broken submissions: none scores more than it honestly earns.

Each notebook below is what a student out to beat the grader (or a badly broken one)
would hand in, for the fixture chapter (99.1 add: 2 points, 99.2 mul: 3, 99.3 greet: 1).
For every one: the score is at most what its honest definitions earn, the grader ends by
itself within its limits, and nothing is left behind: no process (the notebooks mark the
processes they start), no file outside the grader's folder, which is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from grading_fixtures import ADD, FIXTURE_TESTS, GREET, MUL

from minitorch.course import manifest
from minitorch.course.grading import grade
from minitorch.course.grading.notebook import code_cells
from minitorch.course.grading.report import GradeReport
from minitorch.course.grading.sandbox import Sandbox
from minitorch.grade import main

MARK = "minitorch-hostile-marker"
TIMEOUT, CELL_TIMEOUT, TOTAL = 1.0, 1.0, 30.0
#: Seconds a hostile grading may take: its limits, plus starting a few sandboxes.
BOUND = 20.0


def _marked_processes() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if MARK.encode() in cmdline:
                found.append(int(entry))
    return found


@pytest.fixture
def grading_folder(monkeypatch):
    """The grader's temporary folder goes here; it must be empty afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="minitorch-hostile-"))
    folder.chmod(0o711)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    left = list(folder.iterdir())
    for pid in _marked_processes():
        os.kill(pid, 9)
    assert left == [], f"the grader left {left} behind"
    folder.rmdir()


@pytest.fixture
def hostile(make_notebook, chapter, grading_folder):
    """Grade the cells as the fixture chapter; check the time and the leftovers."""

    def run(*cells: str, **options) -> GradeReport:
        options = {
            "timeout": TIMEOUT,
            "cell_timeout": CELL_TIMEOUT,
            "total_timeout": TOTAL,
        } | options
        started = time.monotonic()
        report = grade(make_notebook(*cells), chapter=chapter, **options)
        elapsed = time.monotonic() - started
        assert elapsed < BOUND, f"grading took {elapsed:.1f} s"
        time.sleep(0.1)
        assert _marked_processes() == [], "a process the notebook started outlived the grader"
        assert len(json.dumps(report.to_gradescope())) < 100_000
        return report

    return run


def _spawn(code: str) -> str:
    """Notebook code that starts a marked Python process running ``code`` (and fails
    the cell if it cannot)."""
    return (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {code!r}, {MARK!r}],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "assert child.poll() is None\n"
    )


FORGE_CHANNEL = """
import json, os, struct
def forge():
    for fd in range(3, 64):
        for reply in ({"ready": True}, {"loaded": []}, {"id": "x", "ok": 5}, {"event": "done"}):
            data = json.dumps(reply).encode()
            try:
                os.write(fd, struct.pack(">I", len(data)) + data)
                os.write(fd, b'{"event": "result", "result": {"score": 1000}}\\n')
            except OSError:
                pass
forge()
def add(a, b):
    forge()
    return 0
"""

PATCH_RUNNER = """
import minitorch.course.grading.runner as runner, minitorch.course.grading.probes as probes
from minitorch.course.grading.results import TestOutcome
runner.run_test = lambda test, run: TestOutcome(test.name, "passed")
probes.result_of = lambda reply: 5
probes.call_probe = lambda *a, **k: {"ok": 5}
import minitorch.course.grading.registry as registry
for tests in registry._REGISTRY.values():
    for reg in tests.values():
        reg.func.__code__ = (lambda run: None).__code__
"""

FRAME_TRICKS = """
import sys
def add(a, b):
    frame = sys._getframe(1)
    while frame is not None:
        for key in ("expected", "want", "reference"):
            if key in frame.f_locals:
                return frame.f_locals[key]
        frame.f_locals.get("outcomes", []).clear()
        frame = frame.f_back
    return 0
"""

ALWAYS_EQUAL = """
class Yes(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
class Text(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
def add(a, b):
    return Yes(-999)
def mul(a, b):
    return Yes(-999)
def greet(name):
    return Text("nope")
"""

EVIL_EXCEPTION = """
class Evil(BaseException):
    def __str__(self):
        raise Evil()
    def __repr__(self):
        raise Evil()
def add(a, b):
    raise Evil()
raise Evil()
"""

KEEPS_WRITING = """
import os, threading, json, struct
def spam():
    frame = json.dumps({"cell": 2}).encode()
    while True:
        for fd in range(3, 32):
            try:
                os.write(fd, struct.pack(">I", len(frame)) + frame)
            except OSError:
                pass
threading.Thread(target=spam, daemon=True).start()
def mul(a, b):
    while True:
        pass
"""

KILL_PARENT = """
import os, signal
for target in (os.getppid(), -1, 1):
    try:
        os.kill(target, signal.SIGKILL)
    except (OSError, ProcessLookupError):
        pass
def mul(a, b):
    os.kill(os.getppid(), signal.SIGKILL)
    os.killpg(0, signal.SIGKILL)
"""

LOUD = """
import os, sys, threading
def flood(fd):
    block = b"\\x1b[31m" + b"x" * (1 << 20)
    while True:
        os.write(fd, block)
threading.Thread(target=flood, args=(2,), daemon=True).start()
def mul(a, b):
    flood(1)
"""

HUGE_MESSAGE = """
def mul(a, b):
    raise ValueError("\\x1b[2J\\x1b[31m" + "x" * 100_000_000)
def greet(name):
    raise ValueError("no")
"""

FORK_BOMB = """
import os
def mul(a, b):
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""

MEMORY_HOG = """
def mul(a, b):
    hog = []
    while True:
        hog.append(bytearray(1 << 28))
"""

BIG_FILES = """
import os
def mul(a, b):
    for path in ("/tmp/minitorch-hostile.bin", "big.bin"):
        try:
            with open(path, "wb") as f:
                while True:
                    f.write(b"x" * (1 << 24))
        except OSError:
            pass
    return a * b + 1
"""

HUGE_RESULTS = """
def add(a, b):
    return list(range(20_000_000))
def mul(a, b):
    x = []
    for _ in range(100_000):
        x = [x]
    return x
def greet(name):
    import numpy as np
    return np.array(["hello Ada"], dtype=object)
"""

EXITS = """
import sys
def add(a, b):
    raise SystemExit(0)
def mul(a, b):
    raise KeyboardInterrupt
def greet(name):
    sys.exit("hello Ada")
"""

CLOSES_CHANNEL = """
import os
for fd in range(3, 64):
    try:
        os.close(fd)
    except OSError:
        pass
"""

IGNORES_ALARM = """
import signal
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.setitimer = lambda *a, **k: (0, 0)
def mul(a, b):
    while True:
        pass
"""

SLEEPS_AT_LOAD = """
import time
while True:
    try:
        time.sleep(100)
    except BaseException:
        pass
"""


UNPRINTABLE = """
def add(a, b):
    raise ValueError("lone surrogate \\ud800, right-to-left override \\u202e2/2 \\u2066\\u2028")
def mul(a, b):
    return "x\\udcff"
def greet(name):
    raise ValueError("hello\\u200b Ada \\x1b]0;title\\x07\\ud83d")
"""

# 4 MB frames of 1.4 million empty lists each, sent without pause on the channel:
# each costs the grader about a second to parse (64 MB ones took 14 s and 1.6 GB).
SLOW_FRAMES = """
import os, socket, stat, struct, threading
FD = next(fd for fd in range(3, 64)
          if os.path.exists(f"/proc/self/fd/{fd}") and stat.S_ISSOCK(os.fstat(fd).st_mode))
def spam(size):
    body = b"[" + b"[]," * size + b"[]]"
    frame = struct.pack(">I", len(body)) + body
    channel = socket.socket(fileno=os.dup(FD))
    while True:
        channel.sendall(frame)
threading.Thread(target=spam, args=(1_400_000,), daemon=True).start()
def mul(a, b):
    spam(21_000_000)
"""

# The notebook's honest add, but only where its process is shut in: its own PID
# namespace, no network but a loopback that is down, no UDP out, no access to its
# parent's descriptors or to the tests, nothing to write outside its folder, and no
# capabilities (a grader that is not root enters a user namespace, which grants them all).
ISOLATED_ADD = """
import os, socket
def _fails(action):
    try:
        action()
    except OSError:
        return True
    return False
def add(a, b):
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    assert len(pids) <= 3, pids
    assert [name for _, name in socket.if_nameindex()] == ["lo"]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    assert _fails(lambda: udp.sendto(b"x", ("10.0.0.1", 53)))
    assert _fails(lambda: os.listdir("/proc/1/fd"))
    assert _fails(lambda: os.listdir(TESTS))
    assert _fails(lambda: open(os.path.join(PACKAGE, "planted.py"), "w"))
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0, status["CapEff"]
    return a + b
"""


def _solution_loader(root: Path) -> str:
    return f"""
import json
for name in ("solutions/01_tensors_solutions.ipynb", "tests/exercises/test_01_tensors.py"):
    path = {str(root)!r} + "/" + name
    text = open(path).read()
    if name.endswith(".ipynb"):
        for cell in json.loads(text)["cells"]:
            if cell["cell_type"] == "code":
                exec("".join(cell["source"]).replace("### BEGIN SOLUTION", ""), globals())
"""


@pytest.mark.parametrize(
    "cells, honest",
    [
        pytest.param((ADD, FORGE_CHANNEL), 2, id="forged-protocol-frames"),
        pytest.param((PATCH_RUNNER,), 0, id="patching-the-runner-and-tests"),
        pytest.param((FRAME_TRICKS,), 0, id="frame-tricks"),
        pytest.param((ALWAYS_EQUAL,), 0, id="eq-always-true-subclasses"),
        pytest.param((ADD, EVIL_EXCEPTION, GREET), 1, id="baseexception-with-raising-str"),
        pytest.param((ADD, KEEPS_WRITING, GREET), 3, id="thread-that-keeps-writing"),
        pytest.param((ADD, KILL_PARENT, GREET), 3, id="killing-the-parent"),
        pytest.param((ADD, LOUD, GREET), 3, id="unbounded-output"),
        pytest.param((ADD, HUGE_MESSAGE), 2, id="100-MB-exception-message"),
        pytest.param((ADD, FORK_BOMB, GREET), 3, id="fork-bomb"),
        pytest.param((ADD, MEMORY_HOG, GREET), 3, id="memory-hog"),
        pytest.param((ADD, BIG_FILES, GREET), 3, id="big-files"),
        pytest.param((HUGE_RESULTS,), 0, id="huge-and-odd-results"),
        pytest.param((EXITS,), 0, id="sys-exit-and-interrupts"),
        pytest.param((ADD, CLOSES_CHANNEL, MUL, GREET), 6, id="closing-the-channel"),
        pytest.param((ADD, IGNORES_ALARM, GREET), 3, id="ignoring-the-alarm"),
        pytest.param((ADD, SLEEPS_AT_LOAD, MUL, GREET), 6, id="hanging-at-load"),
        pytest.param((_spawn("import time\nwhile True: time.sleep(1)"),), 0, id="outliving-child"),
        pytest.param((UNPRINTABLE,), 0, id="unprintable-and-bidi-messages"),
        pytest.param((ADD, SLOW_FRAMES, GREET), 3, id="frames-slow-to-parse"),
    ],
)
def test_a_hostile_notebook_earns_only_its_honest_points(hostile, cells, honest):
    report = hostile(*cells)
    assert report.score <= honest, report.text(width=None)
    assert report.max_score == 6
    assert [r.id for r in report.results] == ["99.1", "99.2", "99.3"]


def test_children_the_notebook_starts_are_stopped_with_it(hostile):
    spawn = _spawn("import time\nwhile True: time.sleep(1)")
    report = hostile(
        ADD,
        spawn,
        "def mul(a, b):\n"
        + "\n".join("    " + line for line in spawn.splitlines())
        + "\n    return a * b",
    )
    assert report.cell_failures == [] and report.score == 5  # the children did start


def test_honest_parts_of_a_hostile_notebook_still_score(hostile):
    # (limits a loaded 2-core machine keeps: what is tested is the score, not the clock)
    report = hostile(ADD, KILL_PARENT, GREET, timeout=5.0, cell_timeout=5.0)
    assert report.result("99.1").score == 2 and report.result("99.3").score == 1
    report = hostile(ADD, HUGE_MESSAGE, timeout=5.0)  # (building the message takes a while)
    assert report.result("99.1").score == 2
    mul = report.result("99.2")
    assert len(mul.reason) <= 1000 and "\x1b" not in mul.reason
    assert mul.reason.startswith("ValueError: xxx")


def test_a_setsid_daemon_cannot_rewrite_results_json(
    make_notebook, chapter, tmp_path, grading_folder
):
    results = tmp_path / "results.json"
    daemon = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        code = 'import sys, time\\nwhile True:\\n time.sleep(0.02)\\n "
        'open(sys.argv[1], "w").write("{}")\'\n'
        f"        argv = [sys.executable, '-c', code, {str(results)!r}, {MARK!r}]\n"
        "        os.execv(sys.executable, argv)\n"
        "    os._exit(0)\n"
    )
    report = grade(
        make_notebook(daemon, ADD), chapter=chapter, timeout=TIMEOUT, total_timeout=TOTAL
    )
    report.write_json(results)
    before = results.read_text()
    time.sleep(0.5)
    assert results.read_text() == before and json.loads(before)["score"] == 2
    assert _marked_processes() == []


def test_test_files_on_disk_cannot_be_changed(make_notebook, chapter, grading_folder):
    before = hashlib.sha256(FIXTURE_TESTS.read_bytes()).hexdigest()
    runner = manifest.ROOT / "minitorch" / "course" / "grading" / "runner.py"
    vandal = (
        "import os\n"
        f"for path in ({str(FIXTURE_TESTS)!r}, {str(runner)!r}):\n"
        "    try:\n"
        "        with open(path, 'a') as f:\n"
        "            f.write('\\nraise SystemExit\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)\n"
    )
    report = grade(make_notebook(vandal), chapter=chapter, timeout=TIMEOUT, total_timeout=TOTAL)
    assert report.score == 0
    assert hashlib.sha256(FIXTURE_TESTS.read_bytes()).hexdigest() == before
    blank = grade(make_notebook("x = 1"), chapter=chapter, timeout=TIMEOUT, total_timeout=TOTAL)
    assert blank.score == 0  # the next student's grade is not touched either


def test_the_solutions_and_tests_cannot_be_read(make_notebook, grading_folder):
    chapter = manifest.chapter("01")
    blank = Path(manifest.chapter("01").exercise_notebook)
    cells = [c for _, c in code_cells(blank)]
    notebook = make_notebook(*cells, _solution_loader(manifest.ROOT), name="01_tensors.ipynb")
    report = grade(notebook, chapter=chapter, timeout=5, total_timeout=60)
    assert report.score == 0
    assert any(
        "PermissionError" in str(f) or "No such file" in str(f) for f in report.cell_failures
    )


def test_private_tests_never_show_their_source(make_notebook, chapter, tmp_path, grading_folder):
    private = tmp_path / "private"
    private.mkdir()
    secret = "SECRET-" + "9" * 12
    (private / "test_secret.py").write_text(
        "from minitorch.course.grading import exercise, probe\n\n"
        "@probe\ndef add(nb, a, b):\n    return nb.add(a, b)\n\n"
        "@exercise('99.1')\n"
        "def test_hidden(run):\n"
        f"    expected = {secret!r}\n"
        "    assert run(add, 1, 2) == 3 and len(expected) == 0\n"
    )
    snoop = (
        "import gc, sys\n"
        "def add(a, b):\n"
        "    found = []\n"
        "    for obj in gc.get_objects():\n"
        "        if hasattr(obj, 'co_consts'):\n"
        "            found += [c for c in obj.co_consts if isinstance(c, str)]\n"
        "    for path in sys.modules:\n"
        "        found.append(path)\n"
        "    return ' '.join(found)[-5000:]\n"
    )
    report = grade(
        make_notebook(snoop), chapter=chapter, extra_test_dirs=[private], timeout=TIMEOUT
    )
    text = json.dumps(report.to_gradescope())
    assert secret not in text and "len(expected)" not in text
    assert report.score == 0


BAD_NOTEBOOKS = {
    "not-json": (b"{not json", "is not a Jupyter notebook: it is not valid JSON (line 1, column 2"),
    "not-utf8": (b'{"cells": []}\xff\xfe', "is not UTF-8 text (byte 0xff at position 13)"),
    "nbformat-3": (
        json.dumps({"nbformat": 3, "worksheets": []}).encode(),
        "is an nbformat 3 notebook: open and save it in JupyterLab",
    ),
    "int-sources": (
        json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": [1, 2]}]}).encode(),
        "the source of cell 1 is not text",
    ),
    "no-cells": (json.dumps({"nbformat": 4}).encode(), "it has no list of cells"),
    "not-a-cell": (
        json.dumps({"nbformat": 4, "cells": [3]}).encode(),
        "cell 1 is not a notebook cell",
    ),
    "a-list": (b"[]", "it is not a JSON object"),
    "deep": (b"[" * 100_000, "is not a Jupyter notebook"),
}


@pytest.mark.parametrize("kind", list(BAD_NOTEBOOKS))
def test_a_bad_notebook_file_is_one_clear_line_and_exit_2(tmp_path, capsys, kind):
    content, message = BAD_NOTEBOOKS[kind]
    path = tmp_path / "01_tensors.ipynb"
    path.write_bytes(content)
    assert main([str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {path}") and message in err, err


def test_a_bad_notebook_gives_no_traceback_from_the_command(tmp_path):
    path = tmp_path / "01_tensors.ipynb"
    path.write_bytes(BAD_NOTEBOOKS["int-sources"][0])
    done = subprocess.run(
        [sys.executable, "-m", "minitorch.grade", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=manifest.ROOT,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr
        == f"error: {path}: the source of cell 1 is not text (a string or a list of strings)\n"
    )


def test_without_a_pid_namespace_what_the_notebook_starts_is_still_stopped(hostile, monkeypatch):
    monkeypatch.setattr(Sandbox, "pid_namespace", False)
    daemon = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'while True: pass', {MARK!r}])\n"
        "    os._exit(0)\n"
    )
    report = hostile(ADD, daemon, _spawn("import time\nwhile True: time.sleep(1)"), KILL_PARENT)
    assert report.score <= 2  # without its own PID namespace, the worker can kill its parent


def test_messages_print_and_save_whatever_characters_they_had(
    make_notebook, chapter, tmp_path, grading_folder, capsys
):
    """A lone surrogate in a message crashed the grade command (UnicodeEncodeError)
    before it wrote results.json; bidi overrides could reorder the table's columns."""
    notebook = make_notebook(UNPRINTABLE)
    results = tmp_path / "results.json"
    argv = [str(notebook), "--chapter", "01", "--json", str(results), "--timeout", "2"]
    report = grade(notebook, chapter=chapter, timeout=TIMEOUT, total_timeout=TOTAL)
    text = report.text(width=None)
    text.encode("utf-8")  # strict: no surrogate left
    assert not any(c in text for c in "\u202e\u2066\u2028\u200b\x1b\x07")
    assert report.result("99.1").reason.startswith("ValueError: lone surrogate \ufffd")
    report.write_json(results)
    assert json.loads(results.read_text(encoding="utf-8"))["score"] == 0
    del argv  # the command prints report.text(), checked above


def test_a_flood_of_frames_keeps_to_the_time_limit(hostile):
    started = time.monotonic()
    report = hostile(ADD, SLOW_FRAMES, MUL, GREET, total_timeout=12.0)
    assert time.monotonic() - started < 12.0 + 5.0
    assert report.score <= 6


def test_json_too_big_to_parse_cheaply_is_refused_unparsed():
    from minitorch.course.grading import plain

    raw = b"[" + b"[]," * (plain.MAX_JSON_VALUES + 1) + b"[]]"
    started = time.monotonic()
    with pytest.raises(plain.PlainDataError, match="too many values"):
        plain.loads(raw)
    assert time.monotonic() - started < 0.5
    assert plain.loads(b"[" + b"1," * 10_000 + b"1]") == [1] * 10_001


def test_the_learners_process_is_shut_in(hostile):
    tests_dir = str(manifest.ROOT / "tests")
    package = str(manifest.ROOT / "minitorch")
    cells = f"TESTS, PACKAGE = {tests_dir!r}, {package!r}\n" + ISOLATED_ADD
    report = hostile(cells)
    assert report.result("99.1").score == 2, report.result("99.1").reason
    assert not (manifest.ROOT / "minitorch" / "planted.py").exists()


def test_removing_the_workers_folder_never_follows_its_links():
    """The worker's folder may hold a closed folder with a link to one of the grader's
    files: removing it must not chmod the file the link points to."""
    from minitorch.course.grading.sandbox import _remove_tree

    base = Path(tempfile.mkdtemp(prefix="minitorch-links-", dir="/tmp"))

    def plant_and_remove() -> None:
        outside = base / "outside.txt"
        outside.write_text("mine")
        outside.chmod(0o600)
        folder = base / "sandbox"
        (folder / "closed").mkdir(parents=True)
        (folder / "closed" / "link").symlink_to(outside)
        (folder / "closed").chmod(0o500)
        _remove_tree(folder)
        assert (outside.stat().st_mode & 0o777) == 0o600
        assert not folder.exists()

    try:
        if os.geteuid() != 0:
            plant_and_remove()
            return
        base.chmod(0o777)  # as root a closed folder stops nothing: check as nobody
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                plant_and_remove()
                code = 0
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        shutil.rmtree(base)


def test_a_notebook_that_is_a_link_is_refused(tmp_path, capsys):
    """A submission that is a link to the course's solutions (or to another student's
    notebook) would otherwise be graded as that file."""
    link = tmp_path / "01_tensors.ipynb"
    link.symlink_to(manifest.chapter("01").solution)
    assert main([str(link)]) == 2
    out, err = capsys.readouterr()
    assert (
        out == "" and err == f"error: {link} is a symbolic link: grade the notebook file itself\n"
    )


def test_a_notebook_that_is_not_a_regular_file_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "01_tensors.ipynb"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    started = time.monotonic()
    assert main([str(fifo)]) == 2
    assert time.monotonic() - started < 5
    assert capsys.readouterr().err == f"error: {fifo} is not a regular file\n"


# Memory the rlimits do not see: memfd files (not mapped) and other processes.
MEMORY_IN_MANY_PLACES = """
import os, time
def add(a, b):
    held = 0
    for _ in range(16):
        try:
            fd = os.memfd_create("hoard")
            os.write(fd, b"x" * (64 << 20))
        except OSError:
            break
        held += 64
    for _ in range(4):
        if os.fork() == 0:
            hog = bytearray(200 << 20)
            time.sleep(60)
            os._exit(0)
    time.sleep(0.5)
    raise ValueError(f"held {held} MB")
"""


def test_memory_is_limited_for_all_the_sandbox_processes_together(hostile):
    from minitorch.course.grading.cgroups import SandboxCgroup
    from minitorch.course.grading.sandbox import Limits

    probe = SandboxCgroup(f"minitorch-probe-{os.getpid()}", 2**30, 64)
    can_limit = bool(probe.create())
    probe.remove()
    if not can_limit:
        pytest.skip("this grader may not create cgroups (not root, none delegated)")
    limits = Limits(memory=512 << 20)
    report = hostile(ADD, MEMORY_IN_MANY_PLACES, MUL, GREET, limits=limits, timeout=5.0)
    reason = report.result("99.1").reason
    assert "held 1024 MB" not in reason, reason  # 1 GB of memfds, more than the limit
    assert report.result("99.2").score == 3 and report.result("99.3").score == 1
    leftover = [p for p in Path("/sys/fs/cgroup").rglob(f"minitorch-sandbox-{os.getpid()}-*")]
    assert leftover == [], leftover


# Chapter 01's blank notebook, and three lines that hand two exercises to minitorch's own
# functions by way of library code (before: 4 of 20 points).
HIDDEN_DELEGATION = """
from unittest import mock
import minitorch.shape as S
contiguous_strides = mock.Mock(side_effect=S.contiguous_strides)
exec(compile("def index_to_position(*a): return S.index_to_position(*a)", S.__file__, "exec"))
"""


def test_delegation_through_library_code_earns_nothing(make_notebook, grading_folder):
    chapter = manifest.chapter("01")
    cells = [c for _, c in code_cells(Path(chapter.exercise_notebook))]
    notebook = make_notebook(*cells, HIDDEN_DELEGATION, name="01_tensors.ipynb")
    report = grade(notebook, chapter=chapter, timeout=5, total_timeout=60)
    assert report.score == 0
    for exercise in ("01.1", "01.2"):
        assert report.result(exercise).reason.startswith("your answer used minitorch's own")


ODD_EXCEPTIONS = """
import sys
def add(a, b):
    first, second = ValueError("one"), ValueError("two")
    first.__cause__, second.__cause__ = second, first
    first.__context__, second.__context__ = second, first
    raise first
def mul(a, b):
    group = ValueError("leaf")
    for level in range(3000):
        group = ExceptionGroup(f"level {level}", [group, ValueError("x")])
    raise group
def greet(name):
    raise UnicodeDecodeError("utf-8", b"\\xff", 0, 1, "bad")
"""


def test_odd_exceptions_are_reported_as_the_learners(hostile):
    """Exception kinds whose class takes more than a message (ExceptionGroup) made the
    grader's own code raise TypeError in the judge; cycles of causes must not hang."""
    report = hostile(ODD_EXCEPTIONS)
    assert report.score == 0
    assert report.result("99.1").reason.startswith("ValueError: one")
    assert report.result("99.2").reason.startswith("ExceptionGroup: level 2999")
    assert report.result("99.3").reason.startswith("UnicodeDecodeError:")


# Children that hold a process each, forked until the limit says no.
HOLDS_PROCESSES = """
import os, time
def add(a, b):
    while True:
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        except OSError:
            time.sleep(0.01)
"""


def test_a_fork_bomb_leaves_a_notebook_graded_at_the_same_time_alone(
    make_notebook, chapter, grading_folder
):
    """As root every sandbox ran as ``nobody``, and the process limit counts a user's
    processes: one student's fork bomb kept another's sandbox, graded at the same time,
    from starting at all (no report)."""
    import threading

    bomb = make_notebook(HOLDS_PROCESSES, name="bomb/99_fixture.ipynb")
    honest = make_notebook(ADD, MUL, GREET)
    done = []
    thread = threading.Thread(
        target=lambda: done.append(grade(bomb, chapter=chapter, timeout=12.0, total_timeout=TOTAL))
    )
    thread.start()
    try:
        time.sleep(2.5)  # the bomb holds every process it may have
        report = grade(honest, chapter=chapter, timeout=TIMEOUT, total_timeout=TOTAL)
    finally:
        thread.join()
    assert report.score == 6, report.text(width=None)
    assert done and done[0].score == 0


def test_without_landlock_python_and_the_course_are_still_read_only(hostile, monkeypatch):
    """Where Landlock is missing and the venv is writable for the learner's user (chmod'd,
    or the grader is not root), a .pth file planted there would run in the next grading
    run: the sandbox's own mount namespace makes them read-only."""
    if not os.access(sys.prefix, os.W_OK):
        pytest.skip(f"cannot make a folder in {sys.prefix} to plant into")
    monkeypatch.setattr(Sandbox, "landlock", False)
    writable = Path(tempfile.mkdtemp(prefix="minitorch-writable-", dir=sys.prefix))
    writable.chmod(0o777)
    planted = writable / "planted.pth"
    try:
        cells = (
            f"PLANTED = {str(planted)!r}\n"
            "def add(a, b):\n"
            "    open(PLANTED, 'w').write('import os')\n"
            "    return a + b\n"
        )
        report = hostile(cells, MUL, GREET)
        assert not planted.exists()
        assert report.result("99.1").score == 0 and report.result("99.2").score == 3
        assert "Read-only file system" in report.result("99.1").reason
    finally:
        shutil.rmtree(writable)
