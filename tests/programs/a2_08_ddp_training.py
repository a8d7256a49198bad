"""The DDP training skeleton: mp.spawn starts one process per rank, each joins the
process group, wraps its model in DDP, reads its share of the data through a
DistributedSampler (set_epoch every epoch) and steps its optimizer; gradients are
averaged during backward, so the ranks' models stay identical.

Source: hybrid frontend, 3.1 (the 8-GPU script, here 2 CPU processes on gloo).
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


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


def train(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "29512")
    # join the process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)  # different seeds: DDP broadcasts rank 0's weights
    model = MyModel()
    ddp_model = DDP(model)
    inputs = torch.linspace(-1, 1, 64 * 6).view(64, 6)
    targets = inputs[:, :3].sum(dim=1, keepdim=True) - inputs[:, 3:].sum(dim=1, keepdim=True)
    train_dataset = TensorDataset(inputs, targets)
    # each process sees its own part of the data
    train_sampler = DistributedSampler(train_dataset, num_replicas=world_size, rank=rank)
    train_loader = DataLoader(train_dataset, batch_size=8, sampler=train_sampler)
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=0.02)
    criterion = nn.MSELoss()
    with torch.no_grad():  # the loss over the whole data set before training
        initial = criterion(model(inputs), train_dataset.tensors[1]).item()
    epochs = 5
    epoch_losses = []
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)  # important: reshuffle every epoch
        total = 0.0
        for batch in train_loader:
            data, target = batch
            output = ddp_model(data)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()  # gradients are synchronised during backward
            optimizer.step()
            total += loss.item()
        epoch_losses.append(total / len(train_loader))
    with torch.no_grad():  # and after
        final = criterion(model(inputs), train_dataset.tensors[1]).item()
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    copies = [torch.zeros_like(params) for _ in range(world_size)]
    dist.all_gather(copies, params)
    if rank == 0:
        print("batches per rank:", len(train_loader))
        print("ranks agree:", all(torch.allclose(c, params) for c in copies))
        print("loss went down:", final < initial / 2, len(epoch_losses))
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 2
    mp.spawn(train, args=(world_size,), nprocs=world_size, join=True)
