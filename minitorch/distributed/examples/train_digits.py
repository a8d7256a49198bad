"""Data-parallel training of an MLP on the digits, resumable: chapter 06's script.

    python -m minitorch.distributed.run --nproc 2 minitorch/distributed/examples/train_digits.py
    mpiexec -n 2 python minitorch/distributed/examples/train_digits.py --backend mpi

Each rank reads its share of the data (``DistributedSampler``, reshuffled by
``set_epoch``), DDP averages the gradients, rank 0 saves a checkpoint after every epoch
(atomically, in minitorch's pickle-free format) and every rank resumes from it when the
group is restarted. The test accuracy is counted on every rank's share of the test set
and summed with ``all_reduce``. ``--die-at-step S --die-rank R`` kills rank R at step S of
the first attempt (the fault tests use it).
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

import minitorch
import minitorch.distributed as dist
import minitorch.nn.functional as F
from minitorch import nn, optim
from minitorch.data import DataLoader, load_digits


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="local")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64, help="global batch (all ranks)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--checkpoint", default=None, help="checkpoint file (resume if it exists)")
    p.add_argument("--out", default=None, help="save the final state_dict here (rank 0)")
    p.add_argument("--die-at-step", type=int, default=-1)
    p.add_argument("--die-rank", type=int, default=1)
    return p.parse_args()


def make_model() -> nn.Module:
    minitorch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def evaluate(model: nn.Module, test: object, world: int) -> float:
    """Accuracy over the whole test set: each rank counts its share, all_reduce sums."""
    sampler = dist.DistributedSampler(test, shuffle=False)
    counts = minitorch.zeros(2)
    with minitorch.no_grad():
        for x, y in DataLoader(test, batch_size=128, sampler=sampler):
            right = (model(x).argmax(dim=1) == y).sum().item()
            counts += minitorch.tensor([float(right), float(len(y))])
    dist.all_reduce(counts)
    return counts[0].item() / counts[1].item()  # padding repeats a few samples: close enough


def main() -> None:
    args = parse_args()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    train, test = load_digits("train"), load_digits("test")
    model = make_model()
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start = 0
    ckpt = Path(args.checkpoint) if args.checkpoint else None
    if ckpt is not None and ckpt.exists():
        state = minitorch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
        if rank == 0:
            print(f"resumed from {ckpt.name} at epoch {start}")
    ddp = dist.DistributedDataParallel(model)
    sampler = dist.DistributedSampler(train, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(train, batch_size=args.batch_size // world, sampler=sampler, drop_last=True)
    first_attempt = os.environ.get("MINITORCH_RESTART_COUNT", "0") == "0"
    step = start * len(loader)
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        total = 0.0
        for x, y in loader:
            if first_attempt and rank == args.die_rank and step == args.die_at_step:
                os.kill(os.getpid(), signal.SIGKILL)
            loss = F.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            step += 1
        accuracy = evaluate(model, test, world)
        if rank == 0:
            print(f"epoch {epoch}: loss {total / len(loader):.3f}, test accuracy {accuracy:.3f}")
            if ckpt is not None:
                state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}
                minitorch.save(state, ckpt)  # atomic: a crash never leaves half a file
        dist.barrier()  # nobody starts the next epoch before the checkpoint exists
    if rank == 0 and args.out:
        minitorch.save(model.state_dict(), args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
