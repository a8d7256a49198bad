"""DDP's constraints: a DistributedSampler so ranks see different data, the model and
the data on the rank's own device, and find_unused_parameters=True for a model with a
branch some steps skip.

Source: engineering notes, 4.3 (on CPU with gloo, so the device is the CPU).
"""
# compare: exact

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.head_a = nn.Linear(4, 1)
        self.head_b = nn.Linear(4, 1)  # only used when the flag is set

    def forward(self, x, use_b=False):
        h = torch.relu(self.trunk(x))
        return self.head_b(h) if use_b else self.head_a(h)


def worker(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    device = torch.device("cpu")  # torch.device(f"cuda:{rank}") on a GPU machine
    model = Branchy().to(device)
    ddp = DDP(model, find_unused_parameters=True)
    data = TensorDataset(torch.arange(32, dtype=torch.float32).view(8, 4) / 32, torch.ones(8, 1))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=False)
    loader = DataLoader(data, batch_size=2, sampler=sampler)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    seen = []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        seen.append(int(x[0, 0] * 32))
        optimizer.zero_grad()
        loss = ((ddp(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    untouched = model.head_b.weight.grad is None
    summary = torch.tensor([float(sum(seen)), float(untouched)])
    gathered = [torch.zeros(2) for _ in range(world_size)]
    dist.all_gather(gathered, summary)
    weight = model.head_a.weight.detach().clone()
    dist.all_reduce(weight)
    if rank == 0:
        print("samples per rank:", len(sampler))
        print("gathered:", [g.tolist() for g in gathered])
        print("weights agree:", torch.allclose(weight / world_size, model.head_a.weight))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2, join=True)
