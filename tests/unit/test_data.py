"""minitorch.data: datasets, samplers, collation and the DataLoader, with PyTorch's
semantics, plus the offline digits data set loaded through the user-data path."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import minitorch
from minitorch import data
from minitorch.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def xy(n: int = 10) -> TensorDataset:
    """Sample i is (x[i] = [i, i], y[i] = i)."""
    x = minitorch.arange(n, dtype=minitorch.float32).reshape(n, 1).expand(n, 2).contiguous()
    return TensorDataset(x, minitorch.arange(n))


class Squares(Dataset):
    """A user-defined dataset: samples are dicts."""

    def __len__(self) -> int:
        return 7

    def __getitem__(self, i: int) -> dict:
        return {"i": i, "sq": np.array([i * i], dtype=np.int32), "name": f"s{i}"}


# --- datasets -------------------------------------------------------------------------------
def test_tensor_dataset_indexes_rows():
    ds = xy(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.tolist() == [3.0, 3.0] and y.item() == 3
    x, y = ds[1:3]
    assert x.shape == (2, 2) and y.tolist() == [1, 2]


def test_tensor_dataset_errors_name_the_sizes():
    with pytest.raises(ValueError, match=r"same size in dim 0.*\[4, 3\].*\(4, 2\), \(3,\)"):
        TensorDataset(minitorch.zeros(4, 2), minitorch.zeros(3))
    with pytest.raises(TypeError, match="from_numpy"):
        TensorDataset(np.zeros(3))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(minitorch.tensor(1.0))


def test_dataset_base_class_must_be_implemented():
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(NotImplementedError):
        len(Dataset())
    with pytest.raises(NotImplementedError):
        iter(Sampler())


def test_subset_maps_indices():
    sub = Subset(xy(10), minitorch.tensor([7, 2, 5]))
    assert len(sub) == 3
    assert [sub[i][1].item() for i in range(3)] == [7, 2, 5]
    assert sub.indices == [7, 2, 5] and all(type(i) is int for i in sub.indices)


def test_random_split_partitions_reproducibly():
    ds = xy(10)
    parts = random_split(ds, [3, 7], generator=minitorch.Generator(1))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(ds, [3, 7], generator=minitorch.Generator(1))
    assert [p.indices for p in again] == [p.indices for p in parts]
    other = random_split(ds, [3, 7], generator=minitorch.Generator(2))
    assert [p.indices for p in other] != [p.indices for p in parts]


def test_random_split_fractions_hand_out_the_remainder_like_pytorch():
    parts = random_split(xy(10), [0.33, 0.33, 0.34], generator=minitorch.Generator(0))
    assert [len(p) for p in parts] == [4, 3, 3]  # floor gives 3, 3, 3; one left over
    assert sorted(sum((p.indices for p in parts), [])) == list(range(10))


def test_random_split_bad_lengths():
    with pytest.raises(ValueError, match=r"sum to 9, but the dataset has 10 samples"):
        random_split(xy(10), [4, 5])
    with pytest.raises(ValueError, match="non-negative"):
        random_split(xy(10), [12, -2])


# --- samplers -------------------------------------------------------------------------------
def test_sequential_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert len(SequentialSampler(range(4))) == 4


def test_random_sampler_is_a_seeded_permutation_that_changes_each_epoch():
    sampler = RandomSampler(range(20), generator=minitorch.Generator(0))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second  # successive epochs differ
    replay = RandomSampler(range(20), generator=minitorch.Generator(0))
    assert [list(replay), list(replay)] == [first, second]  # and the sequence repeats
    assert len(sampler) == 20


def test_random_sampler_uses_the_default_generator():
    minitorch.manual_seed(3)
    a = list(RandomSampler(range(50)))
    minitorch.manual_seed(3)
    assert list(RandomSampler(range(50))) == a
    assert a != list(range(50))


def test_random_sampler_num_samples_and_replacement():
    g = minitorch.Generator(0)
    many = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(many) == 10
    assert sorted(many[:4]) == sorted(many[4:8]) == [0, 1, 2, 3]  # whole permutations first
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=300, generator=g))
    assert len(drawn) == 300 and set(drawn) == {0, 1, 2}
    assert max(np.bincount(drawn)) > 100  # with replacement, not a permutation
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(0))
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)


def test_batch_sampler_like_pytorch_docs():
    seq = SequentialSampler(range(10))
    assert list(BatchSampler(seq, 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(seq, 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(seq, 3, False)) == 4 and len(BatchSampler(seq, 3, True)) == 3
    assert len(BatchSampler(seq, 5, False)) == 2 == len(list(BatchSampler(seq, 5, False)))
    assert list(BatchSampler([4, 2], 5, False)) == [[4, 2]]  # any iterable of indices
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="batch_size"):
            BatchSampler(seq, bad, False)
    with pytest.raises(ValueError, match="drop_last"):
        BatchSampler(seq, 2, drop_last=None)


class EveryOther(Sampler[int]):
    """A custom sampler, the way chapter 06's DistributedSampler plugs in."""

    def __init__(self, n: int, rank: int) -> None:
        self.n, self.rank = n, rank

    def __iter__(self):
        return iter(range(self.rank, self.n, 2))

    def __len__(self) -> int:
        return len(range(self.rank, self.n, 2))


def test_custom_sampler_plugs_into_the_loader():
    loader = DataLoader(xy(10), batch_size=2, sampler=EveryOther(10, rank=1))
    assert [y.tolist() for _, y in loader] == [[1, 3], [5, 7], [9]]
    assert len(loader) == 3


# --- collate ------------------------------------------------------------------------------------
def test_default_collate_follows_pytorch_types():
    batch = default_collate(
        [(1, 2.5, True, "a", np.float32(1.5)), (2, 3.5, False, "b", np.float32(2))]
    )
    assert isinstance(batch, list)  # tuples give a list, as in PyTorch
    ints, floats, bools, strings, np_scalars = batch
    assert ints.dtype == minitorch.int64 and ints.tolist() == [1, 2]
    assert floats.dtype == minitorch.float64 and floats.tolist() == [2.5, 3.5]
    assert bools.dtype == minitorch.bool and bools.tolist() == [True, False]
    assert strings == ["a", "b"]
    assert np_scalars.dtype == minitorch.float32 and np_scalars.tolist() == [1.5, 2.0]


def test_default_collate_stacks_tensors_and_arrays():
    t = default_collate([minitorch.ones(2, 3), minitorch.zeros(2, 3)])
    assert t.shape == (2, 2, 3) and t[0].tolist() == [[1.0] * 3] * 2
    a = default_collate([np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)])
    assert isinstance(a, minitorch.Tensor) and a.dtype == minitorch.int16 and a.shape == (2, 3)


def test_default_collate_recurses_into_dicts_lists_and_namedtuples():
    Point = namedtuple("Point", "x y")
    samples = [{"p": Point(i, [float(i), minitorch.tensor([i])]), "tag": "t"} for i in range(3)]
    batch = default_collate(samples)
    assert set(batch) == {"p", "tag"} and batch["tag"] == ["t", "t", "t"]
    assert isinstance(batch["p"], Point) and batch["p"].x.tolist() == [0, 1, 2]
    floats, tensors = batch["p"].y
    assert floats.dtype == minitorch.float64 and tensors.shape == (3, 1)


def test_default_collate_names_mismatched_shapes():
    samples = [(minitorch.zeros(3), 0), (minitorch.zeros(3), 1), (minitorch.zeros(4), 2)]
    with pytest.raises(
        RuntimeError, match=r"sample\[0\].*\(3,\) in batch item 0.*\(4,\) in batch item 2"
    ):
        default_collate(samples)
    arrays = [{"img": np.zeros((2, 2))}, {"img": np.zeros((2, 3))}]
    with pytest.raises(RuntimeError, match=r"sample\['img'\].*\(2, 2\).*\(2, 3\)"):
        default_collate(arrays)
    with pytest.raises(RuntimeError, match="same length"):
        default_collate([[1, 2], [1, 2, 3]])
    with pytest.raises(RuntimeError, match="keys"):
        default_collate([{"a": 1}, {"b": 1}])


def test_default_collate_rejects_what_it_cannot_batch():
    with pytest.raises(TypeError, match=r"sample\[1\] is a object"):
        default_collate([(1, object()), (2, object())])
    with pytest.raises(TypeError, match="dtype"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(TypeError, match="batch item 1"):
        default_collate([minitorch.zeros(2), np.zeros(2)])
    with pytest.raises(ValueError, match="empty"):
        default_collate([])


# --- DataLoader -----------------------------------------------------------------------------
def test_loader_batches_in_order():
    loader = DataLoader(xy(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    x, _ = batches[0]
    assert x.shape == (4, 2) and x.dtype == minitorch.float32


def test_drop_last():
    loader = DataLoader(xy(10), batch_size=4, drop_last=True)
    assert len(loader) == 2 and [len(y) for _, y in loader] == [4, 4]


def test_shuffle_is_seedable_and_differs_between_epochs():
    loader = DataLoader(xy(30), batch_size=8, shuffle=True, generator=minitorch.Generator(7))
    epoch1 = [i for _, y in loader for i in y.tolist()]
    epoch2 = [i for _, y in loader for i in y.tolist()]
    assert sorted(epoch1) == sorted(epoch2) == list(range(30))
    assert epoch1 != epoch2 and epoch1 != list(range(30))
    replay = DataLoader(xy(30), batch_size=8, shuffle=True, generator=minitorch.Generator(7))
    assert [i for _, y in replay for i in y.tolist()] == epoch1
    assert isinstance(loader.sampler, RandomSampler)


def test_custom_dataset_of_dicts_and_collate_fn():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["i"].tolist() == [0, 1, 2]
    assert batch["sq"].dtype == minitorch.int32 and batch["sq"].shape == (3, 1)
    assert batch["name"] == ["s0", "s1", "s2"]
    names = DataLoader(Squares(), batch_size=4, collate_fn=lambda b: [s["name"] for s in b])
    assert list(names) == [["s0", "s1", "s2", "s3"], ["s4", "s5", "s6"]]


def test_batch_sampler_and_unbatched_loading():
    loader = DataLoader(xy(6), batch_sampler=[[5, 0], [1, 2, 3]])
    assert [y.tolist() for _, y in loader] == [[5, 0], [1, 2, 3]] and len(loader) == 2
    single = DataLoader(Squares(), batch_size=None)
    first = next(iter(single))
    assert first["i"] == 0 and isinstance(first["sq"], minitorch.Tensor)
    assert len(single) == 7


@pytest.mark.parametrize(
    "kwargs, phrase",
    [
        ({"shuffle": True, "sampler": SequentialSampler(range(3))}, "sampler option"),
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option"),
        ({"batch_sampler": [[0]], "shuffle": True}, "batch_sampler option"),
        ({"batch_sampler": [[0]], "drop_last": True}, "batch_sampler option"),
        ({"batch_sampler": [[0]], "sampler": [0]}, "batch_sampler option"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None"),
        ({"batch_size": 0}, "batch_size"),
        ({"num_workers": -1}, "num_workers"),
    ],
)
def test_conflicting_options_raise_value_error(kwargs, phrase):
    with pytest.raises(ValueError, match=phrase):
        DataLoader(xy(3), **kwargs)


def test_worker_options_need_workers():
    # (worker processes themselves: tests/unit/test_pytorch_surface_data.py)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(xy(3), prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(xy(3), persistent_workers=True)


# --- real data ----------------------------------------------------------------------------------
def test_from_arrays_is_the_user_data_path():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(6, 5, 4), dtype=np.uint8)
    ds = data.from_arrays(images, [0, 1, 2, 0, 1, 2])
    x, y = ds.tensors
    assert x.shape == (6, 1, 5, 4) and x.dtype == minitorch.float32
    assert y.dtype == minitorch.int64 and y.tolist() == [0, 1, 2, 0, 1, 2]
    np.testing.assert_allclose(x.numpy()[:, 0], images / 255.0, rtol=1e-6)
    rgb = data.from_arrays(np.ones((2, 3, 4, 4)), np.array([1.0, 0.0]), max_value=2.0)
    assert rgb.tensors[0].shape == (2, 3, 4, 4) and rgb.tensors[0].numpy().max() == 0.5


@pytest.mark.parametrize(
    "images, labels, error, phrase",
    [
        (np.zeros((3, 4)), [0, 1, 2], ValueError, r"\(N, H, W\) or \(N, C, H, W\)"),
        (np.zeros((3, 2, 2)), [0, 1], ValueError, r"labels of shape \(3,\).*\(2,\)"),
        (np.zeros((2, 2, 2)), [0.5, 1], TypeError, "integers"),
        (np.zeros((2, 2, 2)), [-1, 1], ValueError, "non-negative"),
        (np.full((2, 2, 2), np.nan), [0, 1], ValueError, "NaN"),
        (np.array([[["a"]]]), [0], TypeError, "numeric"),
    ],
)
def test_from_arrays_errors(images, labels, error, phrase):
    with pytest.raises(error, match=phrase):
        data.from_arrays(images, labels)


def test_stratified_split_is_fixed_disjoint_and_proportional():
    labels = np.repeat([0, 1, 2], [50, 30, 20])
    train, test = data.stratified_split(labels, 0.2, seed=0)
    assert len(test) == 20 and len(train) == 80
    assert np.intersect1d(train, test).size == 0 and np.union1d(train, test).size == 100
    assert np.bincount(labels[test]).tolist() == [10, 6, 4]
    again = data.stratified_split(labels, 0.2, seed=0)
    assert np.array_equal(again[1], test)
    assert not np.array_equal(data.stratified_split(labels, 0.2, seed=1)[1], test)
    with pytest.raises(ValueError, match="test_fraction"):
        data.stratified_split(labels, 1.0)


def test_load_digits_train_and_test():
    train, test = data.load_digits("train"), data.load_digits("test")
    assert (len(train), len(test)) == (1437, 360)
    for ds in (train, test):
        x, y = ds.tensors
        assert x.shape[1:] == (1, 8, 8) and x.dtype == minitorch.float32
        assert y.dtype == minitorch.int64 and set(y.tolist()) == set(range(10))
        assert x.numpy().min() == 0.0 and x.numpy().max() == 1.0
    counts = np.bincount(test.tensors[1].numpy())
    assert counts.min() >= 35 and counts.max() <= 37  # stratified: ~20% of each ~180
    again = data.load_digits("test")
    assert np.array_equal(again.tensors[0].numpy(), test.tensors[0].numpy())
    with pytest.raises(ValueError, match="split"):
        data.load_digits("val")


def test_load_digits_goes_through_from_arrays(monkeypatch):
    calls = []
    real = data.datasets.from_arrays

    def spy(images, labels, **kwargs):
        calls.append((images.shape, labels.shape, kwargs))
        return real(images, labels, **kwargs)

    monkeypatch.setattr(data.datasets, "from_arrays", spy)
    data.load_digits("test")
    assert calls == [((360, 8, 8), (360,), {"max_value": 16.0})]


def test_digits_through_a_shuffled_loader():
    loader = DataLoader(
        data.load_digits(), batch_size=64, shuffle=True, generator=minitorch.Generator(0)
    )
    assert len(loader) == 23
    x, y = next(iter(loader))
    assert x.shape == (64, 1, 8, 8) and y.shape == (64,)
    assert sum(len(y) for _, y in loader) == 1437
