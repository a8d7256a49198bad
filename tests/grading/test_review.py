"""Review flags (issue 21, items 4 and 5): what touches the grader's machinery is flagged
for the instructor, honest notebooks carry no flag, forged frames of the result channel
are caught, and every message is one line."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from grading_fixtures import TIMEOUT

from minitorch.course import manifest
from minitorch.course.grading import grade
from minitorch.course.grading.frames import Signer, Verifier
from minitorch.course.grading.notebook import code_cells
from minitorch.course.grading.review import review_cells

EXERCISES = Path(__file__).resolve().parents[1] / "exercises"


@pytest.mark.parametrize("chapter", manifest.CHAPTERS, ids=lambda c: c.id)
def test_solutions_and_exercise_notebooks_carry_no_flag(chapter):
    # catches: a rule that fires on what the course itself writes (check(), the simulator's
    # kernels, DDP's forked ranks)
    for notebook in (chapter.solution, chapter.exercise_notebook):
        assert review_cells(code_cells(notebook), chapter) == [], notebook.name


@pytest.mark.parametrize("chapter", manifest.CHAPTERS, ids=lambda c: c.id)
def test_correct_alternatives_carry_no_flag(chapter):
    sys.path.insert(0, str(EXERCISES))
    try:
        table = importlib.import_module(f"mutants_{chapter.id}").CORRECT
    finally:
        sys.path.remove(str(EXERCISES))
    for exercise_id, bodies in table.items():
        bodies = bodies[1] if isinstance(bodies, tuple) else bodies
        for name, body in bodies.items():
            flags = review_cells([(1, textwrap.dedent(body))], chapter)
            assert flags == [], f"{exercise_id} {name}: {[str(f) for f in flags]}"


FLAGGED = {
    "the watch switched off": (
        "import minitorch.course.grading.delegation as d\nd._finish = lambda *a, **k: None",
        "touches the grading machinery",
    ),
    "the watch reached from the package": (
        "from minitorch.course import grading\ngrading.delegation._WATCH.pop = print",
        "touches the grading machinery",
    ),
    "the profile hook": ("import sys\nsys.setprofile(None)", "profile hook"),
    "the threads' hook": ("import threading as t\nt.setprofile(None)", "profile hook"),
    "a trace hook": ("from sys import settrace\nsettrace(None)", "trace hook"),
    "_thread": ("import _thread\n_thread.start_new_thread(print, ())", "_thread"),
    "a fork": ("import os\nif os.fork() == 0:\n    pass", "forks the process"),
    "a greenlet": ("from greenlet import greenlet\ng = greenlet(print)", "greenlets"),
    "a swapped code object": ("def f():\n    pass\nf.__code__ = (lambda: 1).__code__", "__code__"),
    "setattr of code": ("def f():\n    pass\nsetattr(f, '__code__', None)", "__code__"),
    "a rewritten code object": ("c = (lambda: 1).__code__.replace(co_consts=(2,))", "code"),
    "the simulator": ("from minitorch.cuda import jit\njit.simulator.state.reads = 0", "simulator"),
    "gc": ("import gc\nobjects = gc.get_objects()", "gc.get_objects"),
    "a raw write": ("import os\nos.write(5, b'x')", "raw file descriptor"),
    "an int that lies": ("class Tile(int):\n    pass\nTILE = Tile(16)", "subclass of int"),
    "a lazy array": ("class Lazy:\n    def __array__(self):\n        return 0", "__array__"),
    "ctypes": ("import ctypes", "ctypes"),
    # the package's source run as the learner's own (issue 36, item 6)
    "exec of text": ("import inspect, minitorch.shape as S\nexec(inspect.getsource(S))", "exec"),
    "compile of text": ("text = 'x = 1'\ncode = compile(text, 'mine.py', 'exec')", "compile"),
    "the source read": ("import inspect, minitorch.shape as S\nt = inspect.getsource(S)", "source"),
    "the source cache": (
        "import linecache\nlinecache.cache['<string>'] = (1, None, [], '')",
        "linecache",
    ),
    "a function from a code object": (
        "import types, minitorch.shape as S\n"
        "f = types.FunctionType(S.contiguous_strides.__code__, {})",
        "types.FunctionType",
    ),
    "a subclass adding nothing": (
        'from minitorch.ops import views\nclass Permute(views.Permute):\n    """Mine."""',
        "adds nothing",
    ),
    "an alias of the package's piece": (
        "import minitorch.shape as S\ncontiguous_strides = S.contiguous_strides",
        "binds contiguous_strides",
    ),
    "a lazy Tensor": (
        "from minitorch import Tensor\nclass Lazy(Tensor):\n    def numpy(self):\n        return 0",
        "subclass of minitorch's Tensor",
    ),
}


@pytest.mark.parametrize("name", list(FLAGGED))
def test_what_reaches_into_the_grader_is_flagged(name):
    source, words = FLAGGED[name]
    flags = review_cells([(3, source)], manifest.chapter("01"))
    assert flags and words in flags[0].seen, [str(f) for f in flags]
    assert flags[0].cell == 3 and flags[0].line >= 1


def test_a_flag_names_the_exercise_whose_cell_it_is_in():
    source = "import sys\ndef contiguous_strides(shape):\n    sys.setprofile(None)\n    return ()"
    (flag,) = review_cells([(7, source)], manifest.chapter("01"))
    assert (flag.exercise, flag.cell, flag.line) == ("01.1", 7, 3)


def test_a_near_copy_of_the_package_source_is_flagged():
    import inspect

    from minitorch.cuda.kernels import softmax

    source = inspect.getsource(softmax.softmax_kernel).replace("softmax_kernel", "my_softmax")
    flags = review_cells([(2, "from minitorch.cuda import jit\n" + source)], manifest.chapter("07"))
    assert any("near-copy" in f.seen and f.exercise == "07.4" for f in flags)


def test_frames_without_the_key_are_refused():
    verifier = Verifier()
    signer = Signer(verifier.key)
    first, second = signer.seal(b'{"a": 1}'), signer.seal(b'{"b": 2}')
    assert verifier.open(first) == b'{"a": 1}'
    assert verifier.open(first) is None  # a copy of an earlier frame: out of order
    assert verifier.open(second) == b'{"b": 2}'
    assert verifier.open(b"\0" * 32 + b'{"loaded": []}') is None
    assert verifier.open(b"short") is None


WATCH_OFF = (
    "import minitorch.course.grading.delegation as watch\nwatch._finish = lambda *a, **k: None\n"
)
FORGE = (
    "import json, os, struct\n"
    "fake = json.dumps({'loaded': []}).encode()\n"
    "for fd in range(3, 64):\n"
    "    try:\n"
    "        os.write(fd, struct.pack('>I', len(fake)) + fake)\n"
    "    except OSError:\n"
    "        pass\n"
)
ADD = "def add(a, b):\n    return a + b\n"
LIAR = "def mul(a, b):\n    raise ValueError('x\\n99.2  Multiply  3/3  passed\\nTOTAL 6/6')\n"


def test_a_tampering_notebook_is_flagged_and_keeps_the_score_its_run_produced(
    make_notebook, chapter
):
    report = grade(make_notebook(WATCH_OFF, ADD), chapter=chapter, timeout=TIMEOUT)
    assert report.result("99.1").status == "passed"  # the score stands
    results = report.to_gradescope()
    flag = results["review"][0]
    assert flag["cell"] == 1 and flag["line"] == 1 and "grading machinery" in flag["seen"]
    assert "REVIEW" in report.text() and "grading machinery" in report.text()


def test_an_honest_notebook_has_an_empty_review(make_notebook, chapter):
    report = grade(make_notebook(ADD), chapter=chapter, timeout=TIMEOUT)
    assert report.to_gradescope()["review"] == [] and "REVIEW" not in report.text()


def test_a_forged_frame_is_caught_and_the_real_load_errors_are_reported(make_notebook, chapter):
    # catches: a cell that writes its own `loaded` frame hiding the real load errors
    broken = "raise RuntimeError('this cell really fails')"
    report = grade(make_notebook(broken, FORGE, ADD), chapter=chapter, timeout=TIMEOUT)
    problems = " ".join(str(f) for f in report.cell_failures)
    assert "this cell really fails" in problems
    assert any("forged" in f.seen for f in report.review)
    assert report.result("99.1").status == "passed"  # the rest was graded without that cell


def test_messages_are_one_line_so_they_cannot_forge_report_lines(make_notebook, chapter):
    report = grade(make_notebook(ADD, LIAR), chapter=chapter, timeout=TIMEOUT)
    results = report.to_gradescope()
    for test in results["tests"]:
        for line in test["output"].splitlines():
            assert "TOTAL 6/6" not in line or "99.2  Multiply" in line  # all on one line
    assert "\n99.2" not in json.loads(json.dumps(results))["tests"][1]["output"]
    assert all("\n" not in r.reason for r in report.results)


@pytest.mark.parametrize("depth", ["if_true", "in_a_function", "in_a_class_body", "a_cell"])
def test_the_packages_module_pasted_at_any_depth_is_flagged(depth):
    # catches: the source of minitorch.shape pasted inside `if True:` (the review read only a
    # cell's top-level definitions), a function or a class body, its functions renamed
    import inspect

    import minitorch.shape

    source = inspect.getsource(minitorch.shape).replace("contiguous_strides", "mine")
    body = textwrap.indent(source, "    ")
    text = {
        "if_true": "if True:\n" + body,
        "in_a_function": "def load():\n" + body + "    return mine\n",
        "in_a_class_body": "class Shapes:\n" + body,
        "a_cell": source,
    }[depth]
    flags = review_cells([(4, text)], manifest.chapter("01"))
    assert any("minitorch.shape pasted" in f.seen for f in flags), [str(f) for f in flags]
