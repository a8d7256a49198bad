"""Creating tensors, dtypes, devices, seeding, conversion and printing."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import random as mt_random


@pytest.fixture
def restore_rng():
    """Leave the default generator as this test found it."""
    generator = mt_random.default_generator
    state, seed = generator.get_state(), generator.initial_seed()
    yield
    generator.manual_seed(seed)
    generator.set_state(state)


@pytest.fixture
def restore_default_dtype():
    before = minitorch.get_default_dtype()
    yield
    minitorch.set_default_dtype(before)


# --- dtype inference ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        (1.5, minitorch.float32),
        ([1.0, 2.0], minitorch.float32),
        ([1, 2.5], minitorch.float32),
        ([[1, 2], [3, 4]], minitorch.int64),
        (7, minitorch.int64),
        (True, minitorch.bool),
        ([True, False], minitorch.bool),
        (np.array([1.0, 2.0]), minitorch.float64),
        (np.float64(2.0), minitorch.float64),
        (np.array([1, 2], dtype=np.int32), minitorch.int32),
        (np.array([1.0], dtype=np.float16), minitorch.float16),
        (np.array([1, 2], dtype=np.uint8), minitorch.uint8),
    ],
)
def test_tensor_infers_dtype_like_pytorch(data, dtype):
    t = minitorch.tensor(data)
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(data))
    assert t.device == "cpu" and t.device == minitorch.device("cpu")


def test_tensor_copies_its_data():
    array = np.array([1.0, 2.0])
    t = minitorch.tensor(array)
    array[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    u = minitorch.tensor(t)
    assert u.untyped_storage() is not t.untyped_storage()
    assert minitorch.tensor([t, t]).shape == (2, 2)
    assert minitorch.tensor([1, 2], dtype=minitorch.float64).dtype is minitorch.float64
    assert minitorch.tensor([1.7, -1.7], dtype=minitorch.int32).tolist() == [1, -1]
    assert minitorch.tensor([1, 2], dtype="float16").dtype is minitorch.float16
    assert minitorch.tensor([1, 2], dtype=float).dtype is minitorch.float32
    assert minitorch.tensor([], dtype=minitorch.int64).shape == (0,)


def test_tensor_of_a_tensor_keeps_its_dtype():
    # PyTorch: torch.tensor(t) copies t with t's dtype (float64 stays float64, int32 stays int32)
    for dtype in (minitorch.float64, minitorch.int32, minitorch.float16):
        t = minitorch.tensor([1, 2], dtype=dtype)
        copy = minitorch.tensor(t)
        assert copy.dtype is dtype, (dtype, copy.dtype)
        assert copy.untyped_storage() is not t.untyped_storage()
        assert copy.tolist() == [1, 2]


def test_dtype_aliases_and_properties():
    assert minitorch.long is minitorch.int64 and minitorch.double is minitorch.float64
    assert minitorch.half is minitorch.float16
    assert repr(minitorch.float32) == "minitorch.float32"
    assert minitorch.float32.itemsize == 4 and minitorch.float32.is_floating_point
    assert not minitorch.int64.is_floating_point
    assert minitorch.zeros(2, dtype=minitorch.int16).element_size() == 2


def test_default_dtype_applies_to_python_floats(restore_default_dtype):
    minitorch.set_default_dtype(minitorch.float64)
    assert minitorch.get_default_dtype() is minitorch.float64
    assert minitorch.tensor([1.5]).dtype is minitorch.float64
    assert minitorch.zeros(2).dtype is minitorch.float64
    with pytest.raises(TypeError, match="set_default_dtype"):
        minitorch.set_default_dtype(minitorch.int64)


# --- creation functions -------------------------------------------------------------------
@pytest.mark.parametrize("device", [None, "cpu", minitorch.device("cpu")])
def test_filled_creation_functions(device):
    z = minitorch.zeros(2, 3, device=device)
    assert z.shape == (2, 3) and z.dtype is minitorch.float32 and z.tolist() == [[0.0] * 3] * 2
    assert z.device == minitorch.device("cpu") and not z.is_cuda
    assert minitorch.zeros((2, 3)).shape == minitorch.zeros([2, 3]).shape == (2, 3)
    assert minitorch.zeros(()).shape == () and minitorch.zeros(0).shape == (0,)
    o = minitorch.ones(4, dtype=minitorch.int32, device=device)
    assert o.dtype is minitorch.int32 and o.tolist() == [1, 1, 1, 1]
    assert minitorch.empty(2, 2).shape == (2, 2)
    f = minitorch.full((2, 2), 7, device=device)
    assert f.dtype is minitorch.int64 and f.tolist() == [[7, 7], [7, 7]]
    assert minitorch.full((2,), 2.5).dtype is minitorch.float32
    assert minitorch.full((2,), True).dtype is minitorch.bool
    assert minitorch.full([3], 1, dtype=minitorch.float64).tolist() == [1.0, 1.0, 1.0]


def test_ranges_match_numpy():
    a = minitorch.arange(5)
    assert a.dtype is minitorch.int64 and a.tolist() == [0, 1, 2, 3, 4]
    assert minitorch.arange(2, 8, 3).tolist() == [2, 5]
    b = minitorch.arange(0, 1, 0.25)
    assert b.dtype is minitorch.float32 and b.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert minitorch.arange(3.0).dtype is minitorch.float32
    assert minitorch.arange(4, dtype=minitorch.float64).dtype is minitorch.float64
    s = minitorch.linspace(0, 1, 5)
    assert s.dtype is minitorch.float32
    np.testing.assert_allclose(s.numpy(), np.linspace(0, 1, 5, dtype=np.float32))
    assert minitorch.linspace(-1, 1, 3, dtype=minitorch.float64).tolist() == [-1.0, 0.0, 1.0]
    e = minitorch.eye(3)
    assert e.dtype is minitorch.float32
    np.testing.assert_array_equal(e.numpy(), np.eye(3))
    np.testing.assert_array_equal(minitorch.eye(2, 3, dtype=minitorch.int64).numpy(), np.eye(2, 3))


def test_random_creation_functions(restore_rng):
    r = minitorch.rand(1000)
    assert r.dtype is minitorch.float32 and r.shape == (1000,)
    assert 0.0 <= r.min().item() and r.max().item() < 1.0
    assert minitorch.rand(2, 3, dtype=minitorch.float64).dtype is minitorch.float64
    n = minitorch.randn(10_000, dtype=minitorch.float64)
    assert abs(n.mean().item()) < 0.05 and abs(n.numpy().std() - 1.0) < 0.05
    assert minitorch.randn((2, 3)).shape == (2, 3)
    i = minitorch.randint(3, 7, (500,))
    assert i.dtype is minitorch.int64
    assert set(i.tolist()) == {3, 4, 5, 6}
    assert minitorch.randint(0, 2, (2, 2), dtype=minitorch.int32).dtype is minitorch.int32
    p = minitorch.randperm(10)
    assert p.dtype is minitorch.int64 and sorted(p.tolist()) == list(range(10))


def test_like_functions_copy_shape_dtype_and_device():
    x = minitorch.arange(6, dtype=minitorch.int32).view(2, 3).T
    for fn, value in ((minitorch.zeros_like, 0), (minitorch.ones_like, 1)):
        y = fn(x)
        assert y.shape == (3, 2) and y.dtype is minitorch.int32 and y.device == x.device
        assert y.tolist() == [[value] * 2] * 3
        assert y.untyped_storage() is not x.untyped_storage() and y.is_contiguous()
    assert minitorch.empty_like(x).shape == (3, 2)
    assert minitorch.full_like(x, 4).tolist() == [[4, 4]] * 3
    assert minitorch.full_like(x, 4, dtype=minitorch.float64).dtype is minitorch.float64
    assert minitorch.zeros_like(x, dtype=minitorch.float32).dtype is minitorch.float32
    assert minitorch.ones_like(x, device="cpu").device == "cpu"
    f = minitorch.zeros(4, 5)
    assert minitorch.rand_like(f).shape == (4, 5) and minitorch.rand_like(f).dtype is f.dtype
    assert minitorch.randn_like(f, dtype=minitorch.float64).dtype is minitorch.float64


# --- seeding ------------------------------------------------------------------------------
def test_manual_seed_repeats_every_random_function(restore_rng):
    def draw():
        return (
            minitorch.rand(5).tolist(),
            minitorch.randn(2, 2).tolist(),
            minitorch.randint(0, 100, (5,)).tolist(),
            minitorch.randperm(8).tolist(),
        )

    g = minitorch.manual_seed(123)
    assert isinstance(g, minitorch.Generator) and minitorch.initial_seed() == 123
    first = draw()
    minitorch.manual_seed(123)
    assert draw() == first
    minitorch.manual_seed(124)
    assert draw() != first


def test_a_generator_is_independent_of_the_default_one(restore_rng):
    minitorch.manual_seed(7)
    expected = minitorch.rand(4).tolist()
    minitorch.manual_seed(7)
    g = minitorch.Generator(99)
    own = minitorch.rand(4, generator=g).tolist()
    assert minitorch.rand(4).tolist() == expected  # the default stream did not advance
    assert minitorch.rand(4, generator=minitorch.Generator(99)).tolist() == own
    assert g.initial_seed() == 99
    assert minitorch.rand(4, generator=g).tolist() != own  # g advanced on its own
    h = minitorch.Generator(5)
    state = h.get_state()
    once = minitorch.randn(3, generator=h).tolist()
    h.set_state(state)
    assert minitorch.randn(3, generator=h).tolist() == once
    assert h.manual_seed(5) is h
    assert minitorch.randn(3, generator=h).tolist() == once


# --- printing -----------------------------------------------------------------------------
def test_repr_looks_like_pytorch():
    assert repr(minitorch.arange(4.0).view(2, 2)) == "tensor([[0., 1.],\n        [2., 3.]])"
    assert repr(minitorch.tensor(3.5)) == "tensor(3.5000)"
    assert repr(minitorch.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"
    assert repr(minitorch.tensor([-1.0, 2.0])) == "tensor([-1.,  2.])"
    assert repr(minitorch.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
    assert repr(minitorch.tensor([1, 2], dtype=minitorch.int32)) == (
        "tensor([1, 2], dtype=minitorch.int32)"
    )
    assert repr(minitorch.tensor([1.0, 2.0], dtype=minitorch.float64)) == (
        "tensor([1., 2.], dtype=minitorch.float64)"
    )
    assert repr(minitorch.tensor([True, False])) == "tensor([ True, False])"
    assert repr(minitorch.tensor(7)) == "tensor(7)"
    assert repr(minitorch.zeros(0)) == "tensor([])"
    assert repr(minitorch.zeros(2, 0)) == "tensor([], size=(2, 0))"
    assert repr(minitorch.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert "..." in repr(minitorch.arange(5000))
    # a view prints its own elements, not the storage's
    assert repr(minitorch.arange(6).view(2, 3).T[1]) == "tensor([1, 4])"
    assert str(minitorch.tensor([0.5])) == repr(minitorch.tensor([0.5]))


# --- conversion ---------------------------------------------------------------------------
def test_to_converts_dtype_and_returns_self_when_nothing_changes():
    x = minitorch.tensor([1.7, -2.5, 0.0])
    assert x.to(minitorch.float32) is x
    assert x.to("cpu") is x and x.cpu() is x and x.to(device="cpu", dtype=x.dtype) is x
    d = x.to(minitorch.float64)
    assert d.dtype is minitorch.float64 and d.untyped_storage() is not x.untyped_storage()
    np.testing.assert_array_equal(d.numpy(), x.numpy().astype(np.float64))
    assert x.to(dtype=minitorch.int64).tolist() == [1, -2, 0]
    assert x.long().dtype is minitorch.int64 and x.int().dtype is minitorch.int32
    assert x.double().dtype is minitorch.float64 and x.half().dtype is minitorch.float16
    assert x.bool().tolist() == [True, True, False]
    assert minitorch.tensor([1, 2]).float().dtype is minitorch.float32
    other = minitorch.zeros(1, dtype=minitorch.int16)
    assert x.to(other).dtype is minitorch.int16 and x.type_as(other).dtype is minitorch.int16
    assert x.to("cpu", minitorch.float64).dtype is minitorch.float64
    v = minitorch.arange(6.0).view(2, 3).T  # converting a view reads it through its strides
    assert v.to(minitorch.int64).tolist() == [[0, 3], [1, 4], [2, 5]]
    assert v.to(minitorch.int64).is_contiguous()


def test_numpy_shares_memory_with_the_tensor():
    x = minitorch.arange(6.0).view(2, 3)
    a = x.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    a[0, 1] = 100.0
    assert x[0, 1].item() == 100.0
    x[1, 2] = -1.0
    assert a[1, 2] == -1.0
    t = x.T.numpy()
    assert np.shares_memory(t, a) and t.strides == (4, 12)
    np.testing.assert_array_equal(np.asarray(x.T), a.T)


def test_from_numpy_shares_memory_and_keeps_dtype():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = minitorch.from_numpy(a)
    assert t.dtype is minitorch.int32 and t.stride() == (3, 1)
    a[1, 1] = 42
    assert t[1, 1].item() == 42
    t[0, 0] = -5
    assert a[0, 0] == -5
    assert t.data_ptr() == a.__array_interface__["data"][0]
    assert t[1].data_ptr() == t.data_ptr() + 3 * 4
    with pytest.raises(ValueError, match="not C-contiguous"):
        minitorch.from_numpy(a.T)
    with pytest.raises(TypeError, match="from_numpy"):
        minitorch.from_numpy([1, 2])


def test_item_and_tolist_give_python_scalars():
    assert minitorch.tensor(2.5).item() == 2.5 and type(minitorch.tensor(2.5).item()) is float
    assert type(minitorch.tensor([[3]]).item()) is int and minitorch.tensor([[3]]).item() == 3
    assert minitorch.tensor(True).item() is True
    x = minitorch.arange(6).view(2, 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert type(x.tolist()[0][0]) is int
    assert x.T.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert minitorch.tensor(1.5).tolist() == 1.5
    assert float(minitorch.tensor([2.0])) == 2.0 and int(minitorch.tensor(3.9)) == 3
    assert bool(minitorch.tensor([1])) is True
    assert [1, 2, 3][minitorch.tensor(1)] == 2  # __index__


def test_python_protocol():
    x = minitorch.arange(6).view(2, 3)
    assert len(x) == 2
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    assert all(r.untyped_storage() is x.untyped_storage() for r in rows)
    assert x.size() == (2, 3) and x.size(-1) == 3 and x.size(0) == 2
    assert x.dim() == x.ndim == 2 and x.numel() == 6
    assert x.T.stride(0) == 1 and x.stride(-2) == 3
    assert x.is_floating_point() is False and minitorch.zeros(1).is_floating_point()
    with pytest.raises(TypeError, match="0-d"):
        len(minitorch.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(minitorch.tensor(1.0))
    with pytest.raises(TypeError):
        minitorch.Tensor([1, 2])


# --- devices ------------------------------------------------------------------------------
def test_device_objects():
    cpu = minitorch.device("cpu")
    assert cpu.type == "cpu" and cpu.index is None and str(cpu) == "cpu"
    assert repr(cpu) == "device(type='cpu')"
    gpu = minitorch.device("cuda")
    assert gpu.index == 0 and str(gpu) == "cuda:0" and gpu == "cuda:0" and gpu == "cuda"
    assert repr(minitorch.device("cuda:1")) == "device(type='cuda', index=1)"
    assert minitorch.device("cuda", 2) == minitorch.device("cuda:2")
    assert minitorch.device(gpu) == gpu and hash(minitorch.device("cuda:0")) == hash(gpu)
    assert cpu != gpu
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        minitorch.device("tpu")


def test_cuda_availability_is_consistent():
    available = minitorch.cuda.is_available()
    assert isinstance(available, bool)
    assert (minitorch.cuda.device_count() > 0) == available
