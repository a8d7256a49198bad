"""The one delegation mechanism: a call from the learner's code to a forbidden
implementation fails the probe (however the learner reached it); calls the package makes
on the learner's behalf do not."""

import numpy as np
import pytest

import minitorch
from minitorch import nn, optim
from minitorch.course.grading import Delegated, LocalRunner, forbid, forbidding, probe
from minitorch.course.grading.delegation import AFTER_A_HIT, is_delegation
from minitorch.course.grading.notebook import load_cells
from minitorch.course.grading.timelimit import can_limit_time, time_limit

STRIDES = forbid(minitorch.shape.contiguous_strides, np.unravel_index, np.zeros)


def _nb(source):
    return load_cells([(1, source)], "a test")


def _calls(source, targets=STRIDES, name="f", args=((2, 3),)):
    nb = _nb(source)
    with forbidding(targets, nb):
        return getattr(nb, name)(*args)


OWN = "def f(s):\n    return tuple(s)\n"
DELEGATING = {
    "direct": "import minitorch\ndef f(s):\n    return minitorch.shape.contiguous_strides(s)\n",
    "alias": "from minitorch.shape import contiguous_strides as f\n",
    "captured": "import minitorch.shape\n_o = minitorch.shape.contiguous_strides\n"
    "def f(s):\n    return _o(s)\n",
    "reloaded": "import importlib, minitorch.shape as m\n"
    "def f(s):\n    return importlib.reload(m).contiguous_strides(s)\n",
    "numpy_dispatcher": "import numpy as np\ndef f(s):\n    return np.unravel_index(1, s)\n",
    "numpy_c_function": "import numpy as np\ndef f(s):\n    return np.zeros(s).strides\n",
    "through_map": "import numpy as np\n"
    "def f(s):\n    return list(map(np.unravel_index, [1], [s]))\n",
    "caught_by_the_learner": "import numpy as np\ndef f(s):\n    try:\n"
    "        np.unravel_index(1, s)\n    except Exception:\n        pass\n    return s\n",
    "torch": "def f(s):\n    import torch\n    return torch.zeros(s).stride()\n",
    # a library function that calls what it is handed: the forbidden one's caller is a
    # library's frame, but the learner's code is the next one up
    "mock_side_effect": "from unittest import mock\nimport minitorch.shape as S\n"
    "f = mock.Mock(side_effect=S.contiguous_strides)\n",
    # a thread pool runs the forbidden function itself: no learner frame on its stack
    "thread_pool": "from concurrent.futures import ThreadPoolExecutor\n"
    "import minitorch.shape as S\n"
    "def f(s):\n    return ThreadPoolExecutor(1).submit(S.contiguous_strides, s).result()\n",
    "thread_pool_map": "from concurrent.futures import ThreadPoolExecutor\nimport numpy as np\n"
    "def f(s):\n    return next(ThreadPoolExecutor(1).map(np.zeros, [s])).strides\n",
    "singledispatch": "import functools, minitorch.shape as S\n"
    "f = functools.singledispatch(S.contiguous_strides)\n",
    "numpy_c_function_by_mock": "from unittest import mock\nimport numpy as np\n"
    "g = mock.Mock(side_effect=np.zeros)\ndef f(s):\n    return g(s).strides\n",
    # the learner's code under a library's file name: not what that file compiles to
    "compiled_as_numpy": "import numpy, minitorch.shape as S\n"
    "exec(compile('def f(s): return S.contiguous_strides(s)', numpy.__file__, 'exec'))\n",
    "compiled_as_minitorch": "import minitorch.shape as S\n"
    "exec(compile('def f(s): return S.contiguous_strides(s)', S.__file__, 'exec'))\n",
    "code_renamed": "import minitorch.shape as S\ndef f(s):\n    return S.contiguous_strides(s)\n"
    "f.__code__ = f.__code__.replace(co_filename=S.__file__)\n",
}


def test_own_code_passes():
    assert _calls(OWN) == (2, 3)


@pytest.mark.parametrize("how", sorted(DELEGATING))
def test_delegation_is_caught_however_reached(how):
    if how == "torch":
        pytest.importorskip("torch")
    with pytest.raises(Delegated) as caught:
        _calls(DELEGATING[how])
    assert is_delegation(str(caught.value)) and str(caught.value).endswith("write it yourself")


def test_a_thread_the_notebook_started_while_loading_is_watched_too():
    # catches: a worker thread started by a cell (before any probe, so threading.setprofile
    # in the probe never reaches it) calling minitorch's own function for the answer
    source = (
        "import queue, threading, minitorch.shape as S\n"
        "jobs, answers = queue.Queue(), queue.Queue()\n"
        "def serve():\n"
        "    while True:\n"
        "        answers.put(S.contiguous_strides(jobs.get()))\n"
        "threading.Thread(target=serve, daemon=True).start()\n"
        "def f(s):\n"
        "    jobs.put(s)\n"
        "    return answers.get(timeout=5)\n"
    )
    with pytest.raises(Delegated) as caught:
        _calls(source)
    assert "contiguous_strides" in str(caught.value)
    own = source.replace("S.contiguous_strides(jobs.get())", "tuple(jobs.get())")
    assert _calls(own) == (2, 3)  # the same worker doing its own work is fine


def test_a_thread_pool_running_the_learners_own_code_is_fine():
    source = (
        "from concurrent.futures import ThreadPoolExecutor\nimport minitorch\n"
        "def mine(s):\n    return tuple(minitorch.zeros(*s).shape)\n"
        "def f(s):\n    return ThreadPoolExecutor(1).submit(mine, s).result()\n"
    )
    assert _calls(source) == (2, 3)


def test_calls_the_package_makes_for_the_learner_are_allowed():
    # minitorch.zeros computes contiguous strides itself: not the learner's call
    source = "import minitorch\ndef f(s):\n    return tuple(minitorch.zeros(*s).shape)\n"
    assert _calls(source) == (2, 3)


def test_subclassing_or_rebinding_a_forbidden_class_is_caught():
    targets = forbid(minitorch.ops.elementwise.Mul, minitorch.nn.functional.linear)
    sub = "from minitorch.ops.elementwise import Mul as _M\nclass Mul(_M):\n    pass\n"
    with pytest.raises(Delegated, match="Mul"):
        _calls(sub + OWN, targets)
    bound = (
        "import minitorch.nn.functional as F\nfrom minitorch import nn\n"
        "class Linear(nn.Module):\n    forward = staticmethod(F.linear)\n" + OWN
    )
    with pytest.raises(Delegated, match="linear"):
        _calls(bound, targets)


def test_a_decorated_method_is_matched_through_its_wrapper():
    source = (
        "from minitorch import optim\nclass SGD(optim.SGD):\n    pass\n"
        "def f(opt):\n    opt.step()\n"
    )
    p = nn.Parameter(minitorch.ones(2))
    p.grad = minitorch.ones(2)
    nb = _nb(source)
    with pytest.raises(Delegated, match="SGD.step"):
        with forbidding(forbid(optim.SGD.step), nb):
            nb.f(nb.SGD([p], lr=0.1))
    with forbidding(forbid(optim.SGD.step), nb):  # Adam's step is another function
        nb.f(optim.Adam([p], lr=0.1))


def test_switching_the_watch_off_is_caught():
    source = "import sys\ndef f(s):\n    sys.setprofile(None)\n    return s\n"
    with pytest.raises(Delegated, match="setprofile"):
        _calls(source)


def test_guards_nest_and_restore_the_previous_profiler():
    import sys

    with forbidding(STRIDES):
        with forbidding(forbid(np.ones)):
            pass
        assert sys.getprofile() is not None
    assert sys.getprofile() is None


@probe(forbid=STRIDES)
def _strides_probe(nb, shape):
    return nb.f(shape)


def test_a_probe_reports_delegation_and_the_exercise_gets_no_points():
    from minitorch.course.grading.registry import ExerciseTests, Registration
    from minitorch.course.grading.runner import run_exercise

    def judge(run):
        assert run(_strides_probe, (2, 3)) == (2, 3)

    def other(run):
        pass  # a test that passes on its own

    tests = [Registration("99.1", f) for f in (judge, other)]
    exercise = ExerciseTests("99.1", "strides", 4, tests)
    result = run_exercise(exercise, LocalRunner(_nb(DELEGATING["direct"])))
    assert result.score == 0 and is_delegation(result.reason), result
    result = run_exercise(exercise, LocalRunner(_nb(OWN)))
    assert result.score == 4, result


def test_a_recursion_that_never_ends_is_the_learners_bug_not_a_switch_off():
    """At the recursion limit the watch's own hook raises, and Python drops it: that
    is not the learner switching the watch off (it said "your answer used
    sys.setprofile" and took the whole exercise's points)."""
    with pytest.raises(RecursionError):
        _calls("def f(s):\n    return f(s)\n")


@pytest.mark.skipif(not can_limit_time(), reason="needs SIGALRM and the main thread")
def test_a_forbidden_call_cuts_the_time_limit_short():
    # catches: a delegating answer left to run to its whole time limit (listing every
    # index of a huge shape with np.ndindex ran 30 s, its list growing by gigabytes)
    source = (
        "import signal\nimport numpy as np\nleft = []\n"
        "def f(s):\n    {}\n    left.append(signal.getitimer(signal.ITIMER_REAL)[0])\n"
    )
    delegating, own = _nb(source.format("np.unravel_index(1, s)")), _nb(source.format("pass"))
    with time_limit(60.0), pytest.raises(Delegated), forbidding(STRIDES, delegating):
        delegating.f((2, 3))
    with time_limit(60.0), forbidding(STRIDES, own):
        own.f((2, 3))
    assert 0 < delegating.left[0] <= AFTER_A_HIT
    assert own.left[0] > 50.0  # (an answer of its own keeps its time)


@pytest.mark.skipif(not can_limit_time(), reason="needs SIGALRM and the main thread")
def test_a_forbidden_call_inside_an_import_does_not_cut_it_short(tmp_path, monkeypatch):
    # catches: an import stopped halfway by the cut (torch's, imported by a delegating
    # answer, could then never load again in the grading process)
    (tmp_path / "learners_module.py").write_text(
        "import signal\nimport numpy as np\nnp.unravel_index(1, (2, 3))\n"
        "LEFT = signal.getitimer(signal.ITIMER_REAL)[0]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    nb = _nb(
        "import signal\nimport numpy as np\nleft = []\ndef f(s):\n    import learners_module\n"
        "    left.append(learners_module.LEFT)\n    np.unravel_index(1, s)\n"
        "    left.append(signal.getitimer(signal.ITIMER_REAL)[0])\n"
    )
    with time_limit(60.0), pytest.raises(Delegated), forbidding(STRIDES, nb):
        nb.f((2, 3))
    assert nb.left[0] > 50.0 and 0 < nb.left[1] <= AFTER_A_HIT
