"""The DDP tutorial's newer shape: setup reads the backend for the device, the model
on the rank's device (the CPU here), DDP with device_ids=None, dist.get_rank and
get_world_size, is_initialized, the wrapped module's repr, and ddp_model.module.

Source: PyTorch tutorial "Getting Started with Distributed Data Parallel" (demo_basic).
"""
# compare: exact
# order: unordered

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "12355")
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size):
    print(f"Running basic DDP example on rank {rank}.")
    setup(rank, world_size)
    print(f"rank {dist.get_rank()} of {dist.get_world_size()}, initialized {dist.is_initialized()}")
    print(f"rank {rank} backend {dist.get_backend()}")

    torch.manual_seed(0)
    device = torch.device("cpu")
    model = ToyModel().to(device)
    ddp_model = DDP(model, device_ids=None)
    if rank == 0:
        print(ddp_model.module)  # (minitorch's DDP repr adds its buckets)
        print(type(ddp_model.module).__name__, ddp_model.module is model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    torch.manual_seed(rank)
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(device)
    loss_fn(outputs, labels).backward()
    optimizer.step()

    w = model.net1.weight.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(gathered, w)
    print(f"rank {rank}: same weights {all(torch.equal(g, w) for g in gathered)}")
    t = torch.tensor([float(rank)])
    dist.broadcast(t, src=1)
    print(f"rank {rank}: broadcast {t.item()}")
    s = torch.tensor([rank + 1.0])
    dist.all_reduce(s, op=dist.ReduceOp.SUM)
    print(f"rank {rank}: sum {s.item()}")
    dist.barrier()
    cleanup()
    print(f"Finished running basic DDP example on rank {rank}.")


def run_demo(demo_fn, world_size):
    mp.spawn(demo_fn, args=(world_size,), nprocs=world_size, join=True)


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    world_size = n_gpus if n_gpus >= 2 else 2
    run_demo(demo_basic, world_size)
