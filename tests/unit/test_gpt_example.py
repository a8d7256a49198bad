"""The GPT training script (minitorch/distributed/examples/train_gpt.py) on a tiny config: it
trains, a crash resumes from the checkpoint exactly, and 2 DDP ranks compute what 1 does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import minitorch
from minitorch.distributed import examples

SCRIPT = str(Path(examples.__file__).with_name("train_gpt.py"))
ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--steps", 4, "--max-chars", 20000, "--bpe-chars", 20000, "--vocab-size", 300,
    "--block-size", 16, "--n-layer", 1, "--n-head", 2, "--n-embd", 16, "--batch-size", 4,
    "--warmup-steps", 2, "--log-interval", 1, "--eval-interval", 2, "--eval-iters", 2,
    "--checkpoint-every", 2, "--sample-tokens", 8,
]  # fmt: skip


def _run(*args, launcher=()):
    head = (
        [sys.executable, "-m", "minitorch.distributed.run", *map(str, launcher)]
        if launcher
        else [sys.executable]
    )
    cmd = [*head, SCRIPT, *map(str, TINY), *map(str, args)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _losses(stdout: str) -> dict[int, float]:
    """Step -> training loss, from the lines ``[rank0]: step 3: loss 5.123456, lr ...``."""
    found = re.findall(r"step (\d+): loss ([\d.]+),", stdout)
    return {int(step): float(loss) for step, loss in found}


def _weights(path: Path) -> dict:
    return {k: v.numpy() for k, v in minitorch.load(path)["model"].items()}


def test_train_crash_resume_and_ddp(tmp_path):
    # catches: a checkpoint without the optimizer state, the data generator or the schedule's
    # place (the resumed losses would differ), a non-atomic save, DDP not all-reducing the
    # gradients, ranks training on the same share of the batch
    straight = _run("--checkpoint", tmp_path / "straight.ckpt")
    losses = _losses(straight)
    assert sorted(losses) == [1, 2, 3, 4] and "val loss" in straight and "sample:" in straight

    # the first attempt dies after its step-2 checkpoint; the restart resumes from it
    crashed = _run(
        "--checkpoint", tmp_path / "crashed.ckpt", "--resume", "--die-at-step", 3,
        launcher=("--nproc", 1, "--max-restarts", 1),
    )  # fmt: skip
    assert "resuming from" in crashed and "at step 2" in crashed
    assert _losses(crashed) == losses  # bit for bit, as printed
    ours, theirs = _weights(tmp_path / "straight.ckpt"), _weights(tmp_path / "crashed.ckpt")
    assert all(np.array_equal(ours[k], theirs[k]) for k in ours)
    assert minitorch.load(tmp_path / "crashed.ckpt")["step"] == 4

    # two ranks, each half of every global batch, gradients averaged by DDP
    ddp = _run("--checkpoint", tmp_path / "ddp.ckpt", launcher=("--nproc", 2))
    two = _losses(ddp)
    assert sorted(two) == [1, 2, 3, 4]
    np.testing.assert_allclose([two[s] for s in range(1, 5)], [losses[s] for s in range(1, 5)],
                               rtol=1e-5)  # fmt: skip
    theirs = _weights(tmp_path / "ddp.ckpt")
    for k in ours:
        np.testing.assert_allclose(ours[k], theirs[k], atol=1e-5, err_msg=k)
