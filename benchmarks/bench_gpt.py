"""Chapter 08's GPT, minitorch vs PyTorch: a training step, compile, greedy generation.

Run: ``.venv/bin/python benchmarks/bench_gpt.py [--config NAME] [--threads N] [--repeat N]``
(from the repository root; ``PYTHONPATH=.`` for a worktree's own copy). Both frameworks run
the same model (nanoGPT's, PyTorch's twin from ``tests/unit/test_gpt_torch.py`` with
minitorch's initial weights) on the same batch, in this process, timed in turns
(``timing.best_times``); the best run is reported. Two configurations: chapter 08's own and
nanoGPT's CPU "baby GPT" (its README: 4 layers, 4 heads, 128 channels, block 64, batch 12,
a character vocabulary of 65).

- training step: forward + cross-entropy + backward + gradient clipping + AdamW, on
  (batch, block_size) tokens; eager, and with the forward ``minitorch.compile``-d;
- generation: 63 tokens from a one-token prompt, greedily, with the KV cache (each step
  runs the new token alone) and without it (each step runs the whole sequence again, as
  nanoGPT's own loop does): the cache's speed-up is the ratio of the two, and minitorch's
  cached loop is compared with PyTorch's loop without a cache.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import numpy as np
from timing import best_times

import minitorch
from minitorch.models import GPT, GPTConfig

try:
    import torch
except ImportError:  # the reference extra is optional
    torch = None

CONFIGS = {  # name -> (config, batch)
    "chapter 08": (GPTConfig(block_size=128, vocab_size=512, n_layer=4, n_head=4, n_embd=128), 8),
    "nanoGPT baby": (GPTConfig(block_size=64, vocab_size=65, n_layer=4, n_head=4, n_embd=128), 12),
}
NEW_TOKENS = 63


def torch_twin() -> type:
    """The PyTorch twin of the GPT, as the differential test defines it."""
    path = Path(__file__).resolve().parents[1] / "tests" / "unit" / "test_gpt_torch.py"
    spec = importlib.util.spec_from_file_location("gpt_twin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TorchGPT


def training_step(lib, model, x, y, forward=None):
    """One step: ``forward`` (the model itself, or its compiled form) and the update."""
    forward = model if forward is None else forward
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))

    def step():
        _, loss = forward(x, y)
        opt.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    return step


def generation(model, prompt, new_tokens: int, use_cache: bool):
    def run():
        model.generate(prompt, new_tokens, temperature=0.0, use_cache=use_cache)

    return run


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms"


def bench(name: str, repeat: int) -> None:
    config, batch = CONFIGS[name]
    minitorch.manual_seed(0)
    mine = GPT(config)
    data = np.random.default_rng(0).integers(0, config.vocab_size, (batch, config.block_size + 1))
    x, y, prompt = (minitorch.tensor(a) for a in (data[:, :-1], data[:, 1:], data[:1, :1]))
    print(f"\n{name}: GPT {config.n_layer} layers x {config.n_head} heads x {config.n_embd}, "
          f"block {config.block_size}, vocab {config.vocab_size}, batch {batch}")  # fmt: skip
    steps = {
        "minitorch": training_step(minitorch, mine, x, y),
        "compiled": training_step(minitorch, mine, x, y, minitorch.compile(mine)),
    }
    theirs = None
    if torch is not None:
        theirs = torch_twin()(config)
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
        tx, ty, tprompt = (torch.tensor(t.numpy()) for t in (x, y, prompt))
        steps["PyTorch"] = training_step(torch, theirs, tx, ty)
    train = best_times(steps, repeat)
    line = f"  training step            minitorch {ms(train['minitorch'])}"
    if theirs is not None:
        line += f"   PyTorch {ms(train['PyTorch'])}   ratio {ratio(train, 'PyTorch')}"
    print(line)
    print(f"  compiled training step    minitorch {ms(train['compiled'])}   "
          f"speed-up over eager {train['minitorch'] / train['compiled']:.2f}x")  # fmt: skip

    new = min(NEW_TOKENS, config.block_size - 1)
    mine.eval()
    runs = {
        "minitorch": generation(mine, prompt, new, True),
        "minitorch, no cache": generation(mine, prompt, new, False),
    }
    if theirs is not None:
        theirs.eval()
        runs["PyTorch"] = generation(theirs, tprompt, new, True)
        runs["PyTorch, no cache"] = generation(theirs, tprompt, new, False)
    gen = best_times(runs, max(2, repeat // 2), rounds=2)
    line = f"  {new} tokens, KV cache     minitorch {ms(gen['minitorch'])}"
    if theirs is not None:
        line += f"   PyTorch {ms(gen['PyTorch'])}   ratio {ratio(gen, 'PyTorch')}"
    print(line)
    line = f"  {new} tokens, no cache     minitorch {ms(gen['minitorch, no cache'])}"
    if theirs is not None:
        line += f"   PyTorch {ms(gen['PyTorch, no cache'])}"
        line += f"   cached minitorch / PyTorch without cache {ratio(gen, 'PyTorch, no cache')}"
    print(line)
    for lib in ("minitorch", "PyTorch")[: len(runs) // 2]:
        print(f"  KV-cache speed-up, {lib}: {gen[f'{lib}, no cache'] / gen[lib]:.2f}x")


def ratio(best: dict, other: str) -> str:
    return f"{best['minitorch'] / best[other]:5.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), default=None, help="one of them")
    parser.add_argument("--threads", type=int, default=None, help="threads for both libraries")
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    if args.threads:
        minitorch.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    threads = f"minitorch {minitorch.get_num_threads()} threads"
    if torch is not None:
        threads += f", PyTorch {torch.get_num_threads()}"
    print(f"GPT training and generation ({threads}; ratio: minitorch's time / PyTorch's)")
    for name in [args.config] if args.config else CONFIGS:
        bench(name, args.repeat)


if __name__ == "__main__":
    main()
