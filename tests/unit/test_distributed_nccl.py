"""The NCCL backend on cuda tensors (one rank per GPU); skipped cleanly without cupy, NCCL
and a GPU. With one GPU it runs a group of one rank, which still goes through NCCL."""

from __future__ import annotations

import pytest

import minitorch
import minitorch.distributed as dist

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not (minitorch.cuda.is_available() and dist.is_nccl_available()),
        reason="needs cupy with NCCL and a CUDA GPU",
    ),
]


@pytest.fixture
def nccl_group():
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_collectives_on_the_gpu(nccl_group):
    assert dist.get_backend() == "nccl"
    t = minitorch.tensor([1.0, 2.0, 3.0], device="cuda")
    dist.all_reduce(t, op="avg")
    assert t.device.type == "cuda" and t.cpu().tolist() == [1.0, 2.0, 3.0]
    out = [minitorch.zeros(3, device="cuda")]
    dist.all_gather(out, t)
    assert out[0].cpu().tolist() == [1.0, 2.0, 3.0]
    dist.broadcast(t, src=0)
    dist.barrier()


def test_ddp_on_the_gpu(nccl_group):
    minitorch.manual_seed(0)
    model = dist.DistributedDataParallel(minitorch.nn.Linear(4, 2).to("cuda"))
    model(minitorch.ones(3, 4, device="cuda")).sum().backward()
    assert model.module.weight.grad.device.type == "cuda"
    assert model.module.weight.grad.cpu().tolist() == [[3.0] * 4] * 2
