"""DDP housekeeping: rank 0 alone saves ddp_model.module.state_dict(), every rank loads
it after a barrier, evaluation gathers every rank's predictions with all_gather, and
destroy_process_group ends the run.

Source: hybrid frontend, 3.2 (checkpoints on rank 0; all_gather for evaluation).
"""
# compare: exact

import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def run(rank, world_size, path):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "29513")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    try:
        model = nn.Linear(4, 2)
        with torch.no_grad():
            model.weight.copy_(torch.arange(8.0).view(2, 4) / 10)
            model.bias.fill_(float(rank))  # differs by rank until broadcast
        ddp_model = DDP(model)
        if rank == 0:
            torch.save(ddp_model.module.state_dict(), path)  # rank 0 only
        dist.barrier()  # the file is there for everyone
        state = torch.load(path, map_location="cpu", weights_only=True)
        ddp_model.module.load_state_dict(state)
        ddp_model.eval()
        with torch.no_grad():  # evaluation: no gradients
            local = ddp_model(torch.full((2, 4), float(rank + 1))).argmax(dim=1)
        everyone = [torch.zeros_like(local) for _ in range(world_size)]
        dist.all_gather(everyone, local)
        if rank == 0:
            print("keys:", list(state.keys()))
            print("predictions:", torch.cat(everyone).tolist())
            print("bias after broadcast:", model.bias.tolist())
    finally:
        dist.destroy_process_group()  # no rank left waiting


if __name__ == "__main__":
    checkpoint = os.path.join(tempfile.mkdtemp(), "model.checkpoint")
    mp.spawn(run, args=(2, checkpoint), nprocs=2, join=True)
    print("checkpoint saved:", os.path.exists(checkpoint))
