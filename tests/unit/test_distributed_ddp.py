"""DistributedDataParallel: training on N ranks equals training on the full batch in one
process (float32 tolerance), with no_sync accumulation, bucket views, unused parameters,
and under MPI (``mpiexec -n 2``, when mpi4py is installed).

Run as a script (``mpiexec -n 2 python tests/unit/test_distributed_ddp.py OUT.npz``) it is
the MPI worker of ``test_equivalence_under_mpiexec``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch
import minitorch.distributed as dist
import minitorch.nn.functional as F
from minitorch import nn, optim

BATCH, STEPS = 24, 4


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((BATCH, 6)).astype(np.float32), rng.integers(0, 3, BATCH)


def _model():
    minitorch.manual_seed(1)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 3))


def _train(rank, world, options=None, accumulate=1, backend="local"):
    """Params after STEPS of SGD with momentum; world=0 is one process on the full batch.
    Each rank takes its slice of the batch; ``accumulate`` micro-batches per step, all but
    the last under no_sync()."""
    X, y = _data()
    model = _model()
    if world:
        if not minitorch.distributed.is_initialized():
            dist.init_process_group(backend, timeout=30)
        if rank == 1:  # a different start: DDP must broadcast rank 0's parameters
            with minitorch.no_grad():
                for p in model.parameters():
                    p.add_(1.0)
        model = dist.DistributedDataParallel(model, **(options or {}))
        part = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
        X, y = X[part], y[part]
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(STEPS):
        opt.zero_grad()
        micro = np.array_split(np.arange(len(y)), accumulate)
        for j, idx in enumerate(micro):
            quiet = world and j < accumulate - 1
            with model.no_sync() if quiet else contextlib.nullcontext():
                loss = F.cross_entropy(
                    model(minitorch.from_numpy(X[idx])), minitorch.tensor(y[idx])
                )
                (loss * (len(idx) / len(y))).backward()
        opt.step()
    inner = model.module if world else model
    return [p.detach().numpy().copy() for p in inner.parameters()]


@pytest.fixture(scope="module")
def reference():
    return _train(0, 0)


def _assert_same(results, reference):
    for rank, params in enumerate(results):
        for got, want in zip(params, reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"rank {rank}")


@pytest.mark.parametrize(
    ("world", "options", "accumulate"),
    [
        (2, {}, 1),
        (4, {}, 1),
        (2, {"bucket_cap_mb": 0.0004}, 2),  # several buckets, no_sync accumulation
        (4, {"bucket_cap_mb": 0.0004, "gradient_as_bucket_view": True}, 3),
        (2, {"gradient_as_bucket_view": True, "broadcast_buffers": False}, 1),
    ],
)
def test_n_ranks_equal_one_process_on_the_full_batch(world, options, accumulate, reference):
    results = dist.spawn(_train, world, (world, options, accumulate), timeout=60)
    _assert_same(results, reference)


def _buckets_and_overlap(rank):
    dist.init_process_group(timeout=30)
    model = dist.DistributedDataParallel(_model(), bucket_cap_mb=0.0004)
    loss = model(minitorch.ones(4, 6)).sum()
    loss.backward()
    kinds = [what.split()[0] for what, _, _ in model.timeline]
    sync_count = [0]
    real = dist.all_reduce

    def counting(*args, **kwargs):
        sync_count[0] += 1
        return real(*args, **kwargs)

    import minitorch.distributed.ddp as ddp_module

    ddp_module.all_reduce = counting
    try:
        with model.no_sync():
            model(minitorch.ones(4, 6)).sum().backward()
        quiet = sync_count[0]
        model(minitorch.ones(4, 6)).sum().backward()
    finally:
        ddp_module.all_reduce = real
    return model.bucket_indices, kinds, quiet, sync_count[0], repr(model)


def test_buckets_fill_in_reverse_and_start_during_backward():
    indices, kinds, quiet, synced, text = dist.spawn(_buckets_and_overlap, 2)[0]
    assert indices == [[5, 4, 3, 2], [1, 0]]  # 419-byte buckets, from the last parameter
    assert kinds[0] == "forward"
    # the first bucket's all-reduce starts before the last gradient is ready
    first_launch = kinds.index("all_reduce")
    assert "grad" in kinds[first_launch:]
    assert (quiet, synced) == (0, 2)  # no_sync: no all-reduce; then one per bucket
    assert "world_size=2" in text


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        minitorch.manual_seed(0)
        self.body = nn.Linear(4, 4)
        self.left = nn.Linear(4, 2)
        self.right = nn.Linear(4, 2)

    def forward(self, x, head):
        return getattr(self, head)(self.body(x))


def _unused(rank, find_unused, heads=("left", "left")):
    dist.init_process_group(timeout=30)
    model = dist.DistributedDataParallel(_TwoHeads(), find_unused_parameters=find_unused)
    try:
        model(minitorch.ones(2, 4) * (rank + 1), heads[rank]).sum().backward()
    except RuntimeError as exc:
        return str(exc)
    return [None if p.grad is None else p.grad.tolist() for p in model.module.parameters()]


def test_an_unused_parameter_is_an_error_naming_it():
    message = dist.spawn(_unused, 2, (False,))[0]
    assert "['right.weight', 'right.bias'] received no gradient" in message
    assert "find_unused_parameters=True" in message


def test_a_parameter_no_rank_used_keeps_its_grad_none_as_in_pytorch():
    # PyTorch's reducer leaves a globally unused parameter's .grad untouched
    for grads in dist.spawn(_unused, 2, (True,)):
        assert all(g is not None for g in grads[:4]) and grads[4:] == [None, None]


def test_a_parameter_only_some_ranks_used_gets_the_average_with_their_zeros():
    left, right = dist.spawn(_unused, 2, (True, ("left", "right")))
    assert left == right  # every rank holds the same averaged gradients
    body_w, body_b, left_w, left_b, right_w, right_b = left
    # rank 0's input is ones, rank 1's twos: the left head's gradient is rank 0's over 2
    single = dist.spawn(_unused, 1, (True, ("left",)))[0]
    np.testing.assert_allclose(np.array(left_w), np.array(single[2]) / 2, rtol=1e-6)
    assert np.abs(np.array(right_w)).sum() > 0 and np.abs(np.array(left_b)).sum() > 0


def test_ddp_needs_a_group_and_a_module():
    with pytest.raises(RuntimeError, match="DistributedDataParallel: the default process group"):
        dist.DistributedDataParallel(_model())
    dist.init_process_group(init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    try:
        with pytest.raises(TypeError, match="module must be a Module, got function"):
            dist.DistributedDataParallel(_model)
        with pytest.raises(ValueError, match="bucket_cap_mb must be positive"):
            dist.DistributedDataParallel(_model(), bucket_cap_mb=0)
        model = dist.DistributedDataParallel(_model())
        assert list(model.state_dict())[0] == "module.0.weight"  # as PyTorch names them
    finally:
        dist.destroy_process_group()


def test_assign_buckets():
    assert dist.assign_buckets([4, 4, 4, 4, 4], 8) == [[4, 3], [2, 1], [0]]
    assert dist.assign_buckets([100, 1, 1], 8) == [[2, 1, 0]]
    assert dist.assign_buckets([1, 2, 3], 1000) == [[2, 1, 0]]
    # one open bucket per key (dtype): a float64 parameter does not join the float32 bucket
    assert dist.assign_buckets([4, 8, 4, 4], 8, ["f", "d", "f", "f"]) == [[3, 2], [1], [0]]
    with pytest.raises(ValueError, match="cap_bytes must be positive"):
        dist.assign_buckets([1], 0)


# --- MPI ------------------------------------------------------------------------------------
def _mpiexec():
    pytest.importorskip("mpi4py", reason="the mpi extra (mpi4py + mpich) is not installed")
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec"
    )
    if found is None:
        pytest.skip("no mpiexec (pip install -e '.[mpi]' installs MPICH's)")
    return found


def test_equivalence_under_mpiexec(tmp_path, reference):
    mpiexec = _mpiexec()
    out = tmp_path / "params.npz"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run(
        [mpiexec, "-n", "2", sys.executable, __file__, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    saved = np.load(out)
    results = [[saved[f"r{r}_{k}"] for k in range(len(reference))] for r in range(2)]
    _assert_same(results, reference)
    assert saved["backend"] == "mpi"
    # sum, max, all_gather (2), broadcast from 0, reduce_scatter's share of rank 0
    assert saved["collectives"].tolist() == [3.0, 2.0, 0.0, 1.0, 3.0, 1.0]


def _mpi_main(out):
    dist.init_process_group("mpi", timeout=60)
    rank, world = dist.get_rank(), dist.get_world_size()
    params = _train(rank, world, {"bucket_cap_mb": 0.0004}, accumulate=2, backend="mpi")
    t = minitorch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    m = minitorch.tensor([float(rank + 1)])
    dist.all_reduce(m, op="max")
    gathered = [minitorch.zeros(1) for _ in range(world)]
    dist.all_gather(gathered, minitorch.tensor([float(rank)]))
    b = minitorch.tensor([float(rank + 3)])
    dist.broadcast(b, src=0)
    rs = minitorch.zeros(1)
    dist.reduce_scatter(rs, [minitorch.tensor([float(rank + j)]) for j in range(world)])
    collectives = t.tolist() + m.tolist() + [g.item() for g in gathered] + b.tolist()
    collectives.append(rs.item())
    flat = minitorch.from_numpy(np.concatenate([p.ravel() for p in params]))
    parts = [minitorch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(parts, flat)
    if rank == 0:
        arrays = {"backend": np.array(dist.get_backend())}
        sizes = [p.size for p in params]
        for r, part in enumerate(parts):
            chunks = np.split(part.numpy(), np.cumsum(sizes)[:-1])
            for k, (c, p) in enumerate(zip(chunks, params, strict=True)):
                arrays[f"r{r}_{k}"] = c.reshape(p.shape)
        arrays["collectives"] = np.array(collectives)
        np.savez(out, **arrays)
    dist.destroy_process_group()


if __name__ == "__main__":
    _mpi_main(sys.argv[1])


def test_ddp_bucket_cap_must_be_a_number():
    # catches: bucket_cap_mb="25" failing later in an arithmetic on a str
    dist.init_process_group(init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    try:
        with pytest.raises(TypeError, match="bucket_cap_mb must be a number, but got str '25'"):
            dist.DistributedDataParallel(_model(), bucket_cap_mb="25")
    finally:
        dist.destroy_process_group()
