"""minitorch.mine: the framework runs the learner's pieces, and the package's again after.

Three things are checked for every chapter with pieces: the solutions' pieces, put in the
framework, reproduce the package's results (the workload is the real thing: a training
run, tensor programs, mixed precision); a broken piece changes the result or fails with
an error naming its exercise; the blank exercise notebook leaves every piece the
package's. And nothing stays replaced after the block.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch as mt
from minitorch import mine, nn
from minitorch.course import manifest
from minitorch.data import DataLoader, load_digits


def _train_digits(steps: int = 12, amp: bool = False) -> tuple[list[float], float]:
    """A small digits MLP: loader, Linear, loss, Adam, clipping, a GradScaler."""
    mt.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    opt = mt.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(load_digits("train"), 64, shuffle=True, generator=mt.Generator(0))
    scaler = mt.amp.GradScaler(init_scale=2.0**20)
    losses = []
    for _, (x, y) in zip(range(steps), loader, strict=False):
        opt.zero_grad()
        with mt.autocast("cpu", dtype=mt.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses, scaler.get_scale()


def _tensor_program() -> list:
    x = mt.arange(24).view(2, 3, 4).float()
    y = x.permute(2, 0, 1) * mt.ones(2, 1)
    return [
        x.stride(),
        x[1, 2, 3].item(),
        y.shape,
        y.sum(1).tolist(),
        x.sum().item(),
        x.mT.sum(dim=(0, 2), keepdim=True).tolist(),
    ]


def _gradients() -> list:
    mt.manual_seed(1)
    w = mt.randn(3, 4, requires_grad=True)
    b = mt.randn(4, requires_grad=True)
    x = mt.randn(5, 3)
    ((x @ w + b).exp().log() * 2.0 / 3.0).sum(dim=0).sum().backward()
    return [w.grad.numpy(), b.grad.numpy()]


def _jit() -> list:
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = mt.randn(5, 8)

    def f(x):
        a = x * 2.0 + 1.0
        b = a.exp() * a - (x * 2.0 + 1.0)
        return model(b.tanh()).sum(1) + (mt.ones(3) * 2).sum()

    with mt.no_grad():
        traced = mt.jit.trace(f, (x,))
        compiled = mt.compile(f)
        return [traced(x).numpy(), compiled(x).numpy(), compiled(x * 3).numpy()]


def _ddp_rank(rank: int, world: int) -> tuple:
    import minitorch.distributed as dist

    dist.init_process_group()
    mt.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    model = dist.DistributedDataParallel(net, bucket_cap_mb=0.0002)
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    data = mt.data.TensorDataset(mt.randn(40, 8), mt.randint(0, 3, (40,)))
    sampler = dist.DistributedSampler(data, num_replicas=world, rank=rank, seed=0)
    losses = []
    for x, y in DataLoader(data, batch_size=5, sampler=sampler):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    active = mine.active()
    ran = {} if active is None else {e: s.ran for e, s in active.statuses.items()}
    dist.destroy_process_group()
    return losses, [p.detach().numpy() for p in net.parameters()], ran


def _ddp() -> list:
    import minitorch.distributed as dist

    results = dist.spawn(_ddp_rank, 2, (2,), timeout=60)
    _ddp.ran = results[0][2]  # type: ignore[attr-defined]
    return [r[:2] for r in results]


def _kernels() -> list:
    from minitorch.cuda import dispatch

    mt.manual_seed(0)
    x, w = mt.randn(8, 16), mt.randn(10, 16)
    dispatch.enable("cpu")
    try:
        logits = x @ w.T
        return [
            logits.numpy(),
            logits.softmax(-1).numpy(),
            (logits.exp() * 2.0 + 1.0).sum(-1).numpy(),
            logits.sum().numpy(),
        ]
    finally:
        dispatch.disable("cpu")


WORKLOADS = {
    "01": _tensor_program,
    "02": _gradients,
    "03": _train_digits,
    "05": _jit,
    "06": _ddp,
    "07": _kernels,
}


def _same(a, b, tol=1e-6) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray | float):
        return np.allclose(a, b, atol=tol, rtol=tol)
    return a == b


def _patched_objects() -> list:
    from minitorch import shape
    from minitorch.amp import grad_scaler
    from minitorch.autograd import engine
    from minitorch.ops import elementwise, reduce, views

    return [
        shape.contiguous_strides,
        shape.broadcast_shapes,
        views.Slice.__dict__["forward"],
        reduce.Sum.__dict__["forward"],
        elementwise.Mul.__dict__["backward"],
        elementwise.unbroadcast,
        engine.backward,
        engine._run,
        nn.Module.named_parameters,
        nn.Linear.__init__,
        nn.functional.cross_entropy,
        mt.optim.Adam.step,
        mt.data.DataLoader.__iter__,
        grad_scaler.update_scale,
        grad_scaler.GradScaler.step,
    ]


CHAPTERS_WITH_PIECES = ["01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_PIECES)
def test_the_solutions_pieces_run_the_framework_and_reproduce_its_results(chapter: str) -> None:
    ch = manifest.chapter(chapter)
    before = _patched_objects()
    # Every chapter's workload (pieces of one chapter run under the others' workloads too).
    workloads = {k: f for k, f in WORKLOADS.items() if k in ("01", "02", "03", chapter)}
    expected = {k: f() for k, f in workloads.items()}
    expected_amp = _train_digits(amp=True)
    with mine.use(ch.solution) as m:
        graded = [e.id for e in ch.exercises if e.id in mine.pieces.PIECES]
        assert graded and all(m.statuses[e].yours for e in graded), m
        got = {k: f() for k, f in workloads.items()}
        got_amp = _train_digits(amp=True)
        ran = sum(s.ran for s in m.statuses.values()) + sum(getattr(_ddp, "ran", {}).values())
    assert ran > 0, "no piece of the solutions ran"
    for k in workloads:
        assert _same(expected[k], got[k], 1e-5), (k, expected[k], got[k])
    assert _same(expected_amp, got_amp, 1e-2)
    assert _patched_objects() == before, "a piece stayed in the framework after the block"


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_PIECES)
def test_every_piece_the_manifest_names_has_a_place_in_the_framework(chapter: str) -> None:
    ch = manifest.chapter(chapter)
    with mine.use(ch.solution):
        pass
    # (A piece of the course tooling, such as 04.6's training loop, is no framework piece.)
    named = [
        e.id for e in ch.exercises if any(not p.startswith("minitorch.course") for p in e.pieces)
    ]
    assert named and all(e in mine.pieces.PIECES for e in named)


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_PIECES)
def test_the_blank_exercise_notebook_leaves_every_piece_the_packages(chapter: str) -> None:
    ch = manifest.chapter(chapter)
    with mine.use(ch.exercise_notebook) as m:
        assert not m.yours(), m
        assert any("not finished" in s.why for s in m.statuses.values()), m
        assert _same(_gradients(), _gradients())


def test_a_whole_folder_runs_every_chapters_pieces_together() -> None:
    expected = _train_digits(steps=6)
    with mine.use(manifest.ROOT / "solutions") as m:
        assert {e[:2] for e in m.yours()} >= set(CHAPTERS_WITH_PIECES), m
        assert _same(expected, _train_digits(steps=6), 1e-5)
        assert "yours" in repr(m) and "ran" in repr(m)


# --- wrong pieces show up: a changed result, or an error that names the exercise --------
def test_wrong_strides_change_what_the_framework_computes() -> None:
    def contiguous_strides(shape):  # forgets the running product: every dim steps by 1
        return tuple(1 for _ in shape)

    with mine.use({"contiguous_strides": contiguous_strides}) as m:
        assert m.yours() == ["01.1"]
        x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        assert x.stride() == (1, 1)
        assert x[1, 0].item() != 4.0  # the element is looked up where the strides say
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.stride() == (3, 1) and x[1, 0].item() == 4.0


def test_a_wrong_backward_changes_the_gradient_and_a_raising_one_names_its_exercise() -> None:
    from minitorch import Function

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * a, grad * b  # swapped

    class Div(Function):
        @staticmethod
        def backward(ctx, grad):
            raise ZeroDivisionError("oops")

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with mine.use({"Mul": Mul, "Div": Div}):
        (x * 3.0).sum().backward()
        assert x.grad.tolist() == [1.0, 2.0]  # the swapped formula: grad * x, not grad * 3
        with pytest.raises(ZeroDivisionError) as caught:
            (x / 2.0).sum().backward()
    assert "exercise 02.1" in "".join(caught.value.__notes__)
    x.grad = None
    (x * 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_a_wrong_topological_order_is_named() -> None:
    def topological_order(tensor):  # leaves first: the reverse of what the engine needs
        order, stack, seen = [], [tensor.grad_fn], set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            order.append(node)
            stack.extend(c for c, _ in node.next_functions if c is not None)
        return order[::-1]

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with mine.use({"topological_order": topological_order}), pytest.raises(RuntimeError) as caught:
        (x.exp() * x).sum().backward()
    assert "exercise 02.6" in str(caught.value)


def test_a_piece_with_the_wrong_signature_names_its_exercise_in_the_message() -> None:
    # catches: the exercise named only in an exception note, which str(err) omits
    def topological_order():  # takes no tensor
        return []

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with mine.use({"topological_order": topological_order}), pytest.raises(TypeError) as caught:
        (x * 2).sum().backward()
    assert "exercise 02.6" in str(caught.value) and "positional argument" in str(caught.value)


def test_an_adam_with_a_wrong_update_trains_differently() -> None:
    from minitorch.optim import Optimizer

    class Adam(Optimizer):
        def step(self):
            with mt.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.sub_(group["lr"] * p.grad)  # plain SGD, no moments

    expected = _train_digits(steps=4)
    with mine.use({"Adam": Adam}) as m:
        assert m.yours() == ["03.5"]
        got = _train_digits(steps=4)
    assert expected[0][0] == got[0][0] and not _same(expected[0][1:], got[0][1:], 1e-4)


def test_a_scale_update_that_never_backs_off_keeps_the_overflowing_scale() -> None:
    def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, interval):
        return scale, growth_tracker  # ignores the overflow

    w = nn.Parameter(mt.ones(2))
    opt = mt.optim.SGD([w], lr=0.1)
    with mine.use({"update_scale": update_scale}) as m:
        assert m.yours() == ["04.2"]
        scaler = mt.amp.GradScaler(init_scale=2.0**16)
        with np.errstate(over="ignore"):
            (scaler.scale((w * 1e35).sum())).backward()  # the scaled gradient overflows float32
        scaler.step(opt)
        scaler.update()
        assert scaler.get_scale() == 2.0**16
    assert w.tolist() == [1.0, 1.0]  # the step was still skipped: the package's check ran


def test_calls_beyond_the_exercise_run_the_packages_piece_and_are_counted() -> None:
    def named_parameters(module, prefix=""):
        yield from module._parameters.items()  # forgets the children

    net = nn.Sequential(nn.Linear(2, 2))
    with mine.use({"named_parameters": named_parameters}) as m:
        assert list(net.named_parameters()) == []
        assert len(list(net.named_parameters(recurse=False))) == 0
        assert m.statuses["03.1"].package_ran["recurse=False"] == 1
    assert len(list(net.named_parameters())) == 2


def test_nothing_of_the_package_is_taken_for_the_learners() -> None:
    from minitorch.shape import contiguous_strides

    with mine.use({"contiguous_strides": contiguous_strides, "x": 1}) as m:
        assert m.statuses == {}


def test_use_names_a_source_it_cannot_read(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="holds no notebooks"), mine.use(tmp_path):
        pass
    with pytest.raises(TypeError, match="exercise notebook, a folder"), mine.use(42):
        pass


def test_minitorch_mine_in_the_environment_runs_a_whole_process_on_the_pieces() -> None:
    code = (
        "import minitorch as mt\n"
        "m = mt.mine.active()\n"
        "print(sorted(m.yours())[:2], mt.ones(2, 3).stride())\n"
    )
    env = dict(os.environ, MINITORCH_MINE=str(manifest.chapter("01").solution))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "['01.1', '01.2'] (3, 1)"
    assert "7 of 7 pieces are yours" in out.stderr


def test_the_solutions_pieces_of_chapters_05_to_07_run_where_the_framework_calls_them() -> None:
    for chapter, workload in (("05", _jit), ("07", _kernels)):
        with mine.use(manifest.chapter(chapter).solution) as m:
            workload()
        assert all(s.ran for s in m.statuses.values()), m
    with mine.use(manifest.chapter("06").solution):
        _ddp()
    assert all(_ddp.ran[e] > 0 for e in ("06.3", "06.4", "06.5", "06.6")), _ddp.ran


def test_compare_names_the_exercise_whose_piece_changes_the_result() -> None:
    def shard(indices, num_replicas, rank, drop_last):
        return list(indices)  # every rank gets the whole epoch

    with pytest.raises(mine.Mismatch, match="exercise 06.4 change"):
        mine.compare(_ddp, {"shard": shard})
    ok = mine.compare(_kernels, manifest.chapter("07").solution)
    assert _same(ok.package, ok.yours)


def _tensors() -> list:
    x = mt.arange(24.0).reshape(2, 3, 4)
    return [x.permute(2, 0, 1).contiguous().numpy(), x.sum(1).numpy(), x[1, 2, 3].item()]


# catches: a culprit search that blames the pieces beside the wrong one (every piece of the
# learner's is in use, as in a finished notebook; only the wrong one may be named)
def test_compare_names_only_the_wrong_piece_among_a_whole_chapters_pieces() -> None:
    from minitorch.course.grading.notebook import code_cells, load_cells

    source = dict(load_cells(code_cells(manifest.chapter("01").solution), "solution")._globals)

    def permute(t, dims):  # the inverse permutation: right for (1, 0), wrong for (2, 0, 1)
        shape, strides = [0] * len(dims), [0] * len(dims)
        for i, d in enumerate(dims):
            shape[d], strides[d] = t.shape[i], t.stride()[i]
        return t.as_strided(tuple(shape), tuple(strides), t.storage_offset())

    with pytest.raises(mine.Mismatch) as caught:
        mine.compare(_tensors, {**source, "permute": permute})
    assert caught.value.exercises == ["01.6"], caught.value.exercises
    ok = mine.compare(_tensors, source)  # (and the same pieces, all right, pass)
    assert _same(ok.package, ok.yours)


# catches: MINITORCH_MINE set in an instructor's shell running a (hostile) notebook's cells
# inside the grading command, outside any sandbox, or reaching the workers it starts
@pytest.mark.parametrize("command", ["minitorch.grade", "minitorch.course.gradescope"])
def test_the_grading_commands_ignore_minitorch_mine_and_say_so(tmp_path, command) -> None:
    import nbformat

    marker = tmp_path / "ran"
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').write('x')"))
    nbformat.write(notebook, tmp_path / "01_tensors.ipynb")
    env = dict(os.environ, MINITORCH_MINE=str(tmp_path / "01_tensors.ipynb"))
    out = subprocess.run(
        [sys.executable, "-m", command, "--help"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert not marker.exists(), "the notebook ran inside the grading command"
    assert f"is ignored by python -m {command}" in out.stderr
    assert mine.grading_command(["python", "-m", command, "x"]) == command
    assert mine.grading_command(["python", "-c", "import minitorch.grade"]) is None
    assert mine.grading_command(["python", "script.py", "-m", command]) is None  # its own args
    assert mine.grading_command(["python", "-X", "dev", f"-m{command}"]) == command
    # the same notebook outside a grading command runs (the check above can fail)
    subprocess.run([sys.executable, "-c", "import minitorch"], env=env, check=True)
    assert marker.exists()


# catches: only= with an id of another chapter or an unknown id silently running nothing
# of the learner's (the package's pieces all along, and a run that "agrees")
def test_use_only_names_an_exercise_it_cannot_run(tmp_path) -> None:
    import nbformat

    notebook = tmp_path / "01_tensors_exercises.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, notebook)
    with pytest.raises(ValueError, match="exercise 02.1 is chapter 02's, and the notebooks"):
        with mine.use(notebook, only=["02.1"]):
            pass
    with pytest.raises(ValueError, match="no exercise '09.9' has a piece.*01.1"):
        with mine.use(notebook, only=["09.9"]):
            pass
    with mine.use(notebook, only="01.1") as m:  # one id as a string is one id
        assert set(m.statuses) <= {"01.1"}
