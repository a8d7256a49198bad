"""The same ops on "cuda" (cupy) as on "cpu" (numpy). Skipped cleanly without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs cupy and a CUDA GPU"),
]


def pair(shape, seed=0, dtype=minitorch.float32):
    """The same values on cpu and on cuda."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    cpu = minitorch.tensor(values, dtype=dtype)
    return cpu, cpu.to("cuda")


def same(gpu: minitorch.Tensor, cpu: minitorch.Tensor, rtol=1e-5, atol=1e-6) -> None:
    assert gpu.device == "cuda:0" and gpu.is_cuda
    assert gpu.shape == cpu.shape and gpu.dtype is cpu.dtype
    host = gpu.cpu()
    assert host.device == "cpu"
    np.testing.assert_allclose(host.numpy(), cpu.numpy(), rtol=rtol, atol=atol)


def test_round_trip_through_the_gpu():
    x, g = pair((3, 4))
    assert g.device == minitorch.device("cuda", 0)
    assert g.untyped_storage().device == "cuda:0"
    back = g.to("cpu")
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    assert g.to("cuda") is g and g.cuda() is not None
    d = g.to(minitorch.float64)
    assert d.device == "cuda:0" and d.dtype is minitorch.float64
    assert g.to("cpu", minitorch.int64).tolist() == x.to(minitorch.int64).tolist()
    assert minitorch.tensor(g).device == "cuda:0"
    assert minitorch.tensor(g, device="cpu").device == "cpu"


def test_creation_on_the_gpu():
    z = minitorch.zeros(2, 3, device="cuda")
    assert z.device == "cuda:0" and z.cpu().tolist() == [[0.0] * 3] * 2
    assert minitorch.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]
    assert minitorch.ones_like(z).device == "cuda:0"
    minitorch.manual_seed(3)
    on_cpu = minitorch.rand(4).tolist()
    minitorch.manual_seed(3)
    on_gpu = minitorch.rand(4, device="cuda").cpu().tolist()
    assert on_gpu == on_cpu  # the same seed gives the same values on every device
    assert "device='cuda:0'" in repr(z)


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - b * 2.0,
        lambda a, b: a / b,
        lambda a, b: minitorch.maximum(a, b),
        lambda a, b: (a < b).float(),
        lambda a, b: minitorch.where(a > 0, a, b),
    ],
)
def test_elementwise_ops_match_cpu(op):
    a, ga = pair((2, 3, 4), seed=1)
    b, gb = pair((3, 1), seed=2)
    same(op(ga, gb), op(a, b))  # (2, 3, 4) with (3, 1): broadcasting


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "neg", "abs"])
def test_unary_ops_match_cpu(name):
    a, ga = pair((4, 5), seed=3)
    if name in ("log", "sqrt"):
        a, ga = a.abs(), ga.abs()
    same(getattr(ga, name)(), getattr(a, name)())


def test_reductions_match_cpu():
    a, ga = pair((3, 4, 5), seed=4)
    same(ga.sum(), a.sum())
    same(ga.sum(1, keepdim=True), a.sum(1, keepdim=True))
    same(ga.mean((0, 2)), a.mean((0, 2)))
    values, indices = ga.max(dim=2)
    expected = a.max(dim=2)
    same(values, expected.values)
    assert indices.cpu().tolist() == expected.indices.tolist()
    assert ga.argmin().item() == a.argmin().item()
    assert ga.min().item() == pytest.approx(a.min().item())


def test_matmul_matches_cpu():
    a, ga = pair((2, 3, 4), seed=5)
    b, gb = pair((4, 6), seed=6)
    same(ga @ gb, a @ b, rtol=1e-4)
    v, gv = pair((4,), seed=7)
    same(ga @ gv, a @ v, rtol=1e-4)
    same(gv @ gv, v @ v, rtol=1e-4)


def test_views_share_gpu_storage_and_match_cpu():
    a, ga = pair((2, 3, 4), seed=8)
    for view in (
        lambda t: t.permute(2, 0, 1),
        lambda t: t.transpose(0, 1)[:, 1:, ::2],
        lambda t: t[1, None, ..., 2],
        lambda t: t[:, :1].expand(2, 5, 4),
        lambda t: t.view(6, 4),
        lambda t: t.unsqueeze(1).squeeze(),
    ):
        gv = view(ga)
        assert gv.untyped_storage() is ga.untyped_storage()
        assert gv.stride() == view(a).stride()
        assert gv.storage_offset() == view(a).storage_offset()
        same(gv, view(a))
    r = ga.permute(2, 0, 1).reshape(-1)  # a copy, made on the GPU
    assert r.device == "cuda:0" and r.untyped_storage() is not ga.untyped_storage()
    same(r, a.permute(2, 0, 1).reshape(-1))
    ga[0, 0] = 7.0
    a[0, 0] = 7.0
    same(ga, a)
    same(minitorch.cat([ga, ga], 1), minitorch.cat([a, a], 1))
    same(ga[minitorch.tensor([1, 0], device="cuda")], a[minitorch.tensor([1, 0])])


def test_mixing_devices_is_an_error():
    a, ga = pair((2, 2))
    with pytest.raises(RuntimeError, match=r"^add: .*cuda:0.*cpu"):
        ga + a
    with pytest.raises(RuntimeError, match=r"^matmul: .*cpu.*cuda:0"):
        a @ ga
    with pytest.raises(RuntimeError, match=r"^copy_: the value is on cuda:0"):
        a.copy_(ga)
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        ga.numpy()


def test_cuda_device_functions_on_a_gpu():
    # catches: the GPU path of the device functions (capability as two ints, bf16 from 8.0)
    major, minor = minitorch.cuda.get_device_capability()
    assert isinstance(major, int) and isinstance(minor, int) and major >= 3
    assert minitorch.cuda.get_device_capability("cuda:0") == (major, minor)
    assert minitorch.cuda.is_bf16_supported(including_emulation=False) is (major >= 8)
    minitorch.cuda.set_device(0)
    assert minitorch.cuda.current_device() == 0
    minitorch.cuda.manual_seed_all(0)
