"""Chapter 08's GPT: tokens per second of training and of generation, minitorch vs PyTorch.

Run: ``.venv/bin/python benchmarks/bench_gpt.py [--threads N] [--repeat N]``. Both
frameworks run the same model (nanoGPT's, PyTorch's twin from ``tests/unit/test_gpt_torch.py``
with minitorch's initial weights) on the same batch, in this process, timed in turns
(``timing.best_times``); the best run is reported.

- training step: forward + cross-entropy + backward + gradient clipping + AdamW, on
  (batch, block_size) tokens;
- generation: one sequence from a one-token prompt to the full window, greedily, with the
  KV cache (each step runs the new token alone) and without it (each step runs the whole
  sequence again), so the cache's speed-up is the ratio of the two.
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

CONFIG = GPTConfig(block_size=128, vocab_size=512, n_layer=4, n_head=4, n_embd=128)
BATCH = 8


def torch_twin() -> type:
    """The PyTorch twin of the GPT, as the differential test defines it."""
    path = Path(__file__).resolve().parents[1] / "tests" / "unit" / "test_gpt_torch.py"
    spec = importlib.util.spec_from_file_location("gpt_twin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TorchGPT


def training_step(lib, model, x, y):
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))

    def step():
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    return step


def generation(model, prompt, new_tokens: int, use_cache: bool):
    def run():
        model.generate(prompt, new_tokens, temperature=0.0, use_cache=use_cache)

    return run


def report(title: str, best: dict, tokens: int) -> None:
    line = f"{title:<40} minitorch {tokens / best['minitorch']:9.0f} tok/s"
    if "PyTorch" in best:
        ratio = best["minitorch"] / best["PyTorch"]
        line += f"   PyTorch {tokens / best['PyTorch']:9.0f} tok/s   ratio {ratio:5.2f}x"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="threads for both libraries")
    parser.add_argument("--repeat", type=int, default=6)
    args = parser.parse_args()
    if args.threads:
        minitorch.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    minitorch.manual_seed(0)
    mine = GPT(CONFIG)
    rng = np.random.default_rng(0)
    data = rng.integers(0, CONFIG.vocab_size, (BATCH, CONFIG.block_size + 1))
    x, y = minitorch.tensor(data[:, :-1]), minitorch.tensor(data[:, 1:])
    prompt = minitorch.tensor(data[:1, :1])
    models = {"minitorch": mine}
    if torch is not None:
        theirs = torch_twin()(CONFIG)
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
        models["PyTorch"] = theirs
    inputs = {"minitorch": (x, y, prompt)}
    if torch is not None:
        inputs["PyTorch"] = tuple(torch.tensor(t.numpy()) for t in (x, y, prompt))
    threads = f"minitorch {minitorch.get_num_threads()} threads"
    if torch is not None:
        threads += f", PyTorch {torch.get_num_threads()}"
    print(f"GPT {CONFIG.n_layer} layers x {CONFIG.n_head} heads x {CONFIG.n_embd}, "
          f"block {CONFIG.block_size}, vocab {CONFIG.vocab_size} ({threads})")  # fmt: skip

    libs = {"minitorch": minitorch, "PyTorch": torch}
    train = best_times(
        {name: training_step(libs[name], m, *inputs[name][:2]) for name, m in models.items()},
        args.repeat,
    )
    report(f"training step, batch {BATCH} x {CONFIG.block_size}", train, BATCH * CONFIG.block_size)

    new = CONFIG.block_size - 1
    for name in models:
        models[name].eval()
    cached = best_times(
        {name: generation(m, inputs[name][2], new, True) for name, m in models.items()},
        max(2, args.repeat // 2),
        rounds=2,
    )
    report(f"generation with KV cache ({new} tokens)", cached, new)
    recompute = best_times(  # the slow one: one timed run each
        {name: generation(m, inputs[name][2], new, False) for name, m in models.items()},
        1,
        rounds=1,
    )
    report(f"generation recomputing ({new} tokens)", recompute, new)
    for name in models:
        print(f"KV-cache speed-up, {name}: {recompute[name] / cached[name]:.1f}x")


if __name__ == "__main__":
    main()
