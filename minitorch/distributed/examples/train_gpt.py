"""Train chapter 08's GPT on Python's documentation: resumable, on one rank or several.

    python minitorch/distributed/examples/train_gpt.py --steps 2000 --checkpoint gpt.ckpt
    python minitorch/distributed/examples/train_gpt.py --steps 4000 --checkpoint gpt.ckpt --resume
    python -m minitorch.distributed.run --nproc-per-node 2 \\
        minitorch/distributed/examples/train_gpt.py --steps 2000 --checkpoint gpt.ckpt

The corpus is CPython's ``pydoc_data.topics`` (no download), tokenized with a byte-level
BPE trained on its first ``--bpe-chars`` characters; the last 10% is the validation set.
Each step draws one global batch of ``--batch-size`` windows from a seeded generator that
every rank holds alike, and rank r trains on its r-th share of it, with DDP averaging the
gradients: so 2 ranks compute what 1 rank computes (up to float rounding). AdamW with
warmup and cosine decay, gradient clipping, optionally bfloat16 autocast (``--amp``).

Every ``--checkpoint-every`` steps rank 0 saves the model, the optimizer, the step (the
schedule's place), the data generator's state and the tokenizer with ``minitorch.save``
(atomic, no pickle); ``--resume`` continues from that file exactly as the run would have gone on:
the same batches, and dropout masks drawn from a stream seeded by (seed, step, rank).
With the launcher's ``--max-restarts K`` and ``--resume``, a crashed group restarts from
its last checkpoint (``--die-at-step S`` crashes the first attempt at step S, for tests).
"""

from __future__ import annotations

import argparse
import os
import signal
from dataclasses import asdict
from pathlib import Path

import minitorch
import minitorch.distributed as dist
from minitorch.models import GPT, GPTConfig
from minitorch.nn.utils import clip_grad_norm_
from minitorch.optim.schedules import WarmupCosineLR
from minitorch.text import BPETokenizer, get_batch, load_corpus, train_val_split

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is the course's (tqdm), not the framework's
    tqdm = None


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="local", help="process group backend (launched runs)")
    p.add_argument("--steps", type=int, default=2000, help="train until this step")
    p.add_argument("--batch-size", type=int, default=16, help="global batch (all ranks)")
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--vocab-size", type=int, default=512)
    p.add_argument("--bpe-chars", type=int, default=100_000, help="train the BPE on these")
    p.add_argument("--max-chars", type=int, default=None, help="use only this much corpus")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--amp", action="store_true", help="bfloat16 autocast (float32 weights)")
    p.add_argument("--eval-interval", type=int, default=250)
    p.add_argument("--eval-iters", type=int, default=10)
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--checkpoint", default=None, help="checkpoint file")
    p.add_argument("--checkpoint-every", type=int, default=250)
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--sample-tokens", type=int, default=200, help="generate this many at the end")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--die-at-step", type=int, default=-1, help="(tests) crash at this step")
    p.add_argument("--die-rank", type=int, default=0, help="(tests) the rank that crashes")
    args = p.parse_args()
    if args.resume and not args.checkpoint:
        p.error("--resume needs --checkpoint")
    return args


def main() -> None:
    args = parse_args()
    launched = "WORLD_SIZE" in os.environ or args.backend == "mpi"
    if launched:
        dist.init_process_group(args.backend)
    rank = dist.get_rank() if launched else 0
    world = dist.get_world_size() if launched else 1
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must be divisible by {world} ranks")
    say = print if rank == 0 else (lambda *a, **k: None)

    ckpt = Path(args.checkpoint) if args.checkpoint else None
    state = None
    if args.resume and ckpt is not None and ckpt.exists():
        state = minitorch.load(ckpt)
        say(f"resuming from {ckpt} at step {state['step']}")
    elif args.resume:
        say(f"no checkpoint at {ckpt} yet: starting from step 0")

    # data: the tokenizer from the checkpoint, or trained afresh (deterministic)
    text = load_corpus(args.max_chars)
    if state is not None:
        tokenizer = BPETokenizer([tuple(m) for m in state["merges"]])
    else:
        tokenizer = BPETokenizer.train(text[: args.bpe_chars], args.vocab_size)
    train, val = train_val_split(tokenizer.encode(text), val_fraction=0.1)
    tokens = len(train) + len(val)
    say(f"corpus: {len(text):,} chars -> {tokens:,} tokens (vocab {tokenizer.vocab_size})")

    # model, optimizer, schedule: the same initial weights on every rank
    config = GPTConfig(
        block_size=args.block_size,
        vocab_size=tokenizer.vocab_size,
        n_layer=args.n_layer,
        n_head=args.n_head,
        n_embd=args.n_embd,
        dropout=args.dropout,
    )
    minitorch.manual_seed(args.seed)
    model = GPT(config)
    opt = model.configure_optimizers(args.weight_decay, args.lr, (0.9, 0.95))
    data_gen = minitorch.Generator(args.seed)
    step = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        data_gen.set_state(state["rng"]["data"])
        step = state["step"]
    # the schedule's shape from the arguments (as nanoGPT's get_lr), its place from the step
    sched = WarmupCosineLR(opt, args.warmup_steps, args.steps, args.min_lr, last_epoch=step - 1)
    say(f"model: {model.get_num_params():,} parameters, {world} rank(s)")
    net = dist.DistributedDataParallel(model) if world > 1 else model

    def save() -> None:
        if rank == 0 and ckpt is not None:
            minitorch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "step": step,
                    "rng": {"data": data_gen.get_state()},
                    "config": asdict(config),
                    "merges": [list(m) for m in tokenizer.merges],
                },
                ckpt,
            )  # atomic: a crash never leaves half a file
        if world > 1:
            dist.barrier()  # nobody goes on before the checkpoint exists

    def mean_over_ranks(value: float) -> float:
        if world == 1:
            return value
        total = minitorch.tensor([value])
        dist.all_reduce(total)
        return total.item() / world

    def estimate_loss() -> dict:
        """Mean loss over ``eval_iters`` batches of each split (a fixed draw each time)."""
        model.eval()
        out = {}
        with minitorch.no_grad():
            for name, data in (("train", train), ("val", val)):
                gen = minitorch.Generator(args.seed + 1 + rank)
                losses = [
                    model(*get_batch(data, args.batch_size // world, args.block_size, gen))[1]
                    for _ in range(args.eval_iters)
                ]
                out[name] = mean_over_ranks(sum(loss.item() for loss in losses) / len(losses))
        model.train()
        return out

    share = args.batch_size // world
    bar = None
    if rank == 0 and tqdm is not None and not args.no_progress:
        bar = tqdm(total=args.steps, initial=step, desc="training", unit="step")
    write = bar.write if bar is not None else say
    first_attempt = os.environ.get("MINITORCH_RESTART_COUNT", "0") == "0"
    while step < args.steps:
        if first_attempt and rank == args.die_rank and step == args.die_at_step:
            os.kill(os.getpid(), signal.SIGKILL)  # a crash: no cleanup, no checkpoint
        minitorch.manual_seed(_stream(args.seed, step, rank))  # dropout, resumable
        x, y = get_batch(train, args.batch_size, args.block_size, data_gen)  # same on all ranks
        x, y = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]
        lr = opt.param_groups[0]["lr"]
        with minitorch.autocast("cpu", dtype=minitorch.bfloat16, enabled=args.amp):
            _, loss = net(x, y)
        opt.zero_grad()
        loss.backward()
        if args.grad_clip > 0:
            clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        sched.step()
        step += 1
        if step % args.log_interval == 0 or step == args.steps:
            write(f"step {step}: loss {mean_over_ranks(loss.item()):.6f}, lr {lr:.3e}")
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        if step % args.eval_interval == 0 or step == args.steps:
            losses = estimate_loss()
            write(f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if step % args.checkpoint_every == 0 or step == args.steps:
            save()
    if bar is not None:
        bar.close()
    if rank == 0 and args.sample_tokens > 0:
        model.eval()
        prompt = minitorch.tensor([tokenizer.encode("The ")], dtype=minitorch.int64)
        out = model.generate(
            prompt, args.sample_tokens, temperature=0.8, top_k=50, generator=minitorch.Generator(0)
        )
        print("sample:\n" + tokenizer.decode(out[0].tolist()))
    if launched:
        dist.destroy_process_group()


def _stream(seed: int, step: int, rank: int) -> int:
    """The seed of step ``step``'s random draws on ``rank`` (a distinct stream for each)."""
    return (seed * 1_000_003 + step) * 4096 + rank


if __name__ == "__main__":
    main()
