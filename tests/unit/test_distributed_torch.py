"""Differential tests against PyTorch's DistributedSampler, ReduceOp and DDP bucketing
defaults (the parts of torch.distributed whose results do not depend on its RNG)."""

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
