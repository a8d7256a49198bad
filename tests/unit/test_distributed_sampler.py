"""DistributedSampler: a partition of the dataset (padded or cut), the same on every rank,
reshuffled by set_epoch; and it plugs into chapter 03's DataLoader."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch.data import DataLoader, TensorDataset
from minitorch.distributed import DistributedSampler, shard_indices


def _shards(n, replicas, **kw):
    return [list(DistributedSampler(range(n), replicas, r, **kw)) for r in range(replicas)]


@given(st.integers(1, 40), st.integers(1, 6), st.booleans(), st.booleans())
def test_ranks_partition_the_epoch(n, replicas, shuffle, drop_last):
    shards = _shards(n, replicas, shuffle=shuffle, drop_last=drop_last, seed=3)
    sizes = {len(s) for s in shards}
    assert len(sizes) == 1  # every rank the same count: no rank waits at the last step
    size = sizes.pop()
    everything = [i for s in shards for i in s]
    if drop_last:
        assert size == n // replicas
        assert len(set(everything)) == len(everything)  # cut, never repeated
    else:
        assert size == -(-n // replicas)
        assert set(everything) == set(range(n))  # padded by repeating: nothing left out
    assert len(DistributedSampler(range(n), replicas, 0, drop_last=drop_last)) == size


def test_padding_repeats_the_first_indices_and_ranks_stride():
    assert shard_indices([5, 6, 7, 8, 9], 2, 0, False) == [5, 7, 9]
    assert shard_indices([5, 6, 7, 8, 9], 2, 1, False) == [6, 8, 5]
    assert shard_indices([5, 6, 7, 8, 9], 2, 1, True) == [6, 8]
    assert shard_indices([4], 3, 2, False) == [4]  # more ranks than samples


def test_set_epoch_reshuffles_and_every_rank_agrees():
    a = _shards(20, 2, seed=1)
    again = _shards(20, 2, seed=1)
    assert a == again  # same epoch, same order
    s = DistributedSampler(range(20), 2, 0, seed=1)
    s.set_epoch(1)
    assert list(s) != a[0]
    s.set_epoch(0)
    assert list(s) == a[0]
    assert sorted(list(s) + a[1]) == list(range(20))


def test_without_set_epoch_every_epoch_repeats():
    s = DistributedSampler(range(50), 2, 0)
    assert list(s) == list(s)  # the pitfall chapter 06 shows


def test_with_the_dataloader():
    ds = TensorDataset(minitorch.arange(10.0))
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0], [9.0]]


def test_bad_arguments():
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        DistributedSampler(range(4), 2, 2)
    with pytest.raises(ValueError, match="num_replicas must be a positive int"):
        DistributedSampler(range(4), 0, 0)
    with pytest.raises(RuntimeError, match="pass num_replicas and rank"):
        DistributedSampler(range(4))
