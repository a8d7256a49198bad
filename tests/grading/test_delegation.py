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


# --- the package's source run as the learner's own (issue 36, item 6) -------------------------
RECOMPILED = {
    # the module's source, compiled under another file name, its function renamed
    "exec_getsource_renamed": "import inspect, minitorch.shape as S\n"
    "exec(inspect.getsource(S.contiguous_strides).replace('contiguous_strides', 'mine'))\n"
    "def f(s):\n    return mine(s)\n",
    "compile_getsource": "import inspect, minitorch.shape as S\n"
    "exec(compile(inspect.getsource(S), 'my_shape.py', 'exec'), ns := {})\n"
    "f = ns['contiguous_strides']\n",
    # the source text built and run inside the answer, nested in a function of its own
    "nested_in_a_function": "import inspect, textwrap, minitorch.shape as S\n"
    "body = textwrap.indent(inspect.getsource(S.contiguous_strides), '    ')\n"
    "def f(s):\n"
    "    scope = {}\n"
    "    exec('def outer():\\n' + body + '    return contiguous_strides\\n', scope)\n"
    "    return scope['outer']()(s)\n",
    # in a class body, as a static method
    "in_a_class_body": "import inspect, textwrap, minitorch.shape as S\n"
    "src = textwrap.indent(inspect.getsource(S.contiguous_strides), '    ')\n"
    "exec('class Shapes:\\n    @staticmethod\\n' + src)\n"
    "def f(s):\n    return Shapes.contiguous_strides(s)\n",
}


@pytest.mark.parametrize("how", sorted(RECOMPILED))
def test_the_packages_source_run_as_the_learners_is_caught(how):
    # catches: exec/compile of inspect.getsource(...), renamed or nested, which gives code
    # of the learner's file that the watch of calls took for the learner's own
    with pytest.raises(Delegated, match="contiguous_strides, its source run as your code"):
        _calls(RECOMPILED[how])


def test_the_same_code_written_in_a_cell_is_the_learners_own():
    # an honest answer can compile to the package's instructions: its source is in view
    import inspect

    source = inspect.getsource(minitorch.shape.contiguous_strides).replace(
        "contiguous_strides", "f"
    )
    assert _calls("from typing import Sequence\nShape = tuple\n" + source) == (3, 1)


def _block_probe(source, targets):
    from minitorch.models import gpt

    nb = _nb(source)
    config = gpt.GPTConfig(8, 16, 1, 2, 8)
    with forbidding(targets, nb):
        block = nb.Block(config)
        return block(minitorch.randn(1, 3, 8)).shape


@pytest.mark.parametrize(
    "source",
    [
        "from minitorch.models import gpt\nclass Block(gpt.Block):\n    pass\n",
        "from minitorch.models import gpt\nclass Block(gpt.Block):\n    '''Mine.'''\n",
        # a recompiled copy whose forward the package's Module.__call__ calls
        "import inspect\nfrom minitorch.models import gpt\n"
        "from minitorch.models.gpt import *\nfrom minitorch import nn\n"
        "exec(inspect.getsource(gpt.Block).replace('class Block', 'class Block2'))\n"
        "Block = Block2\n",
    ],
    ids=["subclass", "subclass_with_docstring", "recompiled"],
)
def test_a_forbidden_method_the_framework_calls_is_caught(source):
    # catches: class Block(gpt.Block): pass where only Block.forward is forbidden (the
    # package's Module.__call__ calls forward, not the learner's code)
    from minitorch.models import gpt

    with pytest.raises(Delegated, match="forward"):
        _block_probe(source, forbid(gpt.Block.forward))


@pytest.mark.parametrize(
    "wrapped",
    [
        "minitorch.no_grad()(S.contiguous_strides)",
        "minitorch.enable_grad()(minitorch.no_grad()(S.contiguous_strides))",
        "minitorch.no_grad()(np.zeros)",
    ],
)
def test_the_packages_piece_in_the_packages_own_decorator_is_caught(wrapped):
    # catches: the package's wrapper frame taken for the package calling its own piece
    source = f"import numpy as np\nimport minitorch, minitorch.shape as S\ng = {wrapped}\n"
    with pytest.raises(Delegated):
        _calls(source + "def f(s):\n    g(s)\n    return s\n")


def test_the_learners_own_function_in_the_packages_decorator_is_fine():
    source = "import minitorch\n@minitorch.no_grad()\ndef f(s):\n    return tuple(s)\n"
    assert _calls(source) == (2, 3)


def test_a_tensor_that_computes_when_read_shows_what_it_holds():
    # catches: a Tensor subclass that does the work (here the package's) when the probe
    # reads it, after the watch's window has closed
    from minitorch.course.grading import tensor_data

    source = (
        "import numpy as np, minitorch, minitorch.shape as S\n"
        "class Lazy(minitorch.Tensor):\n"
        "    def numpy(self):\n"
        "        return np.array(S.contiguous_strides(self._wanted), dtype=np.float32)\n"
        "    def detach(self):\n"
        "        return self\n"
        "def f(s):\n"
        "    t = minitorch.zeros(len(s))\n"
        "    t.__class__ = Lazy\n"
        "    t._wanted = s\n"
        "    return t\n"
    )
    nb = _nb(source)
    with forbidding(STRIDES, nb):
        lazy = nb.f((2, 3))
    data = tensor_data(lazy)
    assert data["type"] == "Tensor" and data["values"].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("forbidden", ["__mul__", "mul"])
def test_an_operator_and_its_named_method_are_one_route(forbidden):
    # catches: a.mul(b) where only the operator a * b was forbidden (and the other way round)
    targets = forbid(minitorch.Tensor.__dict__[forbidden])
    for call in ("a.mul(b)", "a * b", "a.multiply(b)"):
        source = f"import minitorch\ndef f(s):\n    a = b = minitorch.ones(2)\n    {call}\n"
        with pytest.raises(Delegated, match="mul"):
            _calls(source + "    return s\n", targets)
    assert _calls("def f(s):\n    return s\n", targets) == (2, 3)


def test_a_decorated_answer_written_in_a_cell_is_in_view():
    # a decorator over several lines: the code starts at the decorator, the def comes later
    import inspect

    body = inspect.getsource(minitorch.shape.contiguous_strides).replace("contiguous_strides", "f")
    source = (
        "import functools\nfrom typing import Sequence\nShape = tuple\n"
        "@functools.lru_cache(\n    maxsize=None,\n)\n"
    )
    assert _calls(source + body, args=((3, 1),)) == (1, 1)
