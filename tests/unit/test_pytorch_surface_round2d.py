"""Issue 40 part D: small API that real programs use, checked against PyTorch."""

import pytest

import minitorch

torch = pytest.importorskip("torch")


def test_generator_accepts_cpu_device_and_draws_as_seeded():
    g = minitorch.Generator(device="cpu").manual_seed(5)
    assert str(torch.Generator(device="cpu").device) == g.device == "cpu"
    same = minitorch.Generator(5)
    assert minitorch.rand(3, generator=g).tolist() == minitorch.rand(3, generator=same).tolist()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="the refusal needs a machine without GPU")
def test_generator_refuses_cuda_without_a_gpu_as_torch_does():
    with pytest.raises(RuntimeError):
        torch.Generator(device="cuda")
    with pytest.raises(RuntimeError, match="device='cpu'"):
        minitorch.Generator(device="cuda")
