"""Differential tests against PyTorch: DistributedSampler (the parts that do not depend on
torch's RNG), ReduceOp names, DDP's defaults, and the collectives against gloo."""

from __future__ import annotations

import pytest

import minitorch.distributed as dist

torch = pytest.importorskip("torch")
from torch.utils.data.distributed import DistributedSampler as TorchSampler  # noqa: E402


@pytest.mark.parametrize("n", [1, 7, 10, 13])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_matches_torch_without_shuffle(n, replicas, drop_last):
    for rank in range(replicas):
        ours = dist.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_sampler_has_torch_counts(drop_last):
    for rank in range(3):
        ours = list(dist.DistributedSampler(range(11), 3, rank, drop_last=drop_last))
        theirs = list(TorchSampler(range(11), 3, rank, drop_last=drop_last))
        assert len(ours) == len(theirs)


def test_reduce_op_names_match_torch():
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
        assert hasattr(torch.distributed.ReduceOp, name)
        assert getattr(dist.ReduceOp, name).name == name


def test_ddp_defaults_match_torch():
    import inspect

    ours = inspect.signature(dist.DistributedDataParallel).parameters
    theirs = inspect.signature(torch.nn.parallel.DistributedDataParallel).parameters
    for name in ("bucket_cap_mb", "find_unused_parameters", "gradient_as_bucket_view"):
        assert name in theirs
        default = theirs[name].default
        if name == "bucket_cap_mb" and default is None:
            default = 25  # torch >= 2.4 spells its 25 MiB default as None
        assert ours[name].default == default, name


def _both(rank):
    """The same collectives on the same inputs through minitorch and through torch's gloo."""
    import numpy as np
    import torch.distributed as tdist

    import minitorch

    dist.init_process_group(timeout=30)
    tdist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{_port[0]}", rank=rank, world_size=2
    )
    rng = np.random.default_rng(rank)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    out = {}
    for name, ours_op, theirs_op in (
        ("sum", "sum", tdist.ReduceOp.SUM),
        ("max", "max", tdist.ReduceOp.MAX),
        ("min", "min", tdist.ReduceOp.MIN),
        ("product", "product", tdist.ReduceOp.PRODUCT),
    ):
        ours, theirs = minitorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
        dist.all_reduce(ours, op=ours_op)
        tdist.all_reduce(theirs, op=theirs_op)
        out[name] = np.allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    ours, theirs = minitorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    dist.broadcast(ours, src=1)
    tdist.broadcast(theirs, src=1)
    out["broadcast"] = np.array_equal(ours.numpy(), theirs.numpy())
    ours_list = [minitorch.zeros(3, 4) for _ in range(2)]
    theirs_list = [torch.zeros(3, 4) for _ in range(2)]
    dist.all_gather(ours_list, minitorch.from_numpy(x.copy()))
    tdist.all_gather(theirs_list, torch.from_numpy(x.copy()))
    out["all_gather"] = all(
        np.array_equal(a.numpy(), b.numpy()) for a, b in zip(ours_list, theirs_list, strict=True)
    )
    tdist.destroy_process_group()
    return out


_port = [0]


def test_collectives_match_torch_gloo():
    from minitorch.distributed.spawn import free_port

    _port[0] = free_port()
    results = dist.spawn(_both, 2, timeout=60)
    for rank, out in enumerate(results):
        assert all(out.values()), (rank, out)
