"""Warmup then cosine decay, as nanoGPT's get_lr, and the scheduler that sets it."""

import math

import pytest

import minitorch
from minitorch.optim.schedules import WarmupCosineLR, warmup_cosine


def nanogpt_get_lr(it, warmup_steps=10, max_steps=50, max_lr=6e-4, min_lr=6e-5):
    """build-nanogpt's get_lr, verbatim."""
    if it < warmup_steps:
        return max_lr * (it + 1) / warmup_steps
    if it > max_steps:
        return min_lr
    decay_ratio = (it - warmup_steps) / (max_steps - warmup_steps)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)


def test_warmup_cosine_is_nanogpt_s_get_lr():
    # catches: warmup from 0 (step 0 would train at lr 0), cosine to 0 instead of min_lr,
    # the decay measured from step 0 instead of the end of warmup
    for step in range(70):
        assert warmup_cosine(step, 10, 50, 6e-4, 6e-5) == pytest.approx(nanogpt_get_lr(step))
    assert warmup_cosine(9, 10, 50, 6e-4, 6e-5) == pytest.approx(6e-4)  # warm at step 9
    assert warmup_cosine(30, 10, 50, 6e-4, 6e-5) == pytest.approx((6e-4 + 6e-5) / 2)  # halfway
    assert warmup_cosine(0, 0, 50, 6e-4, 0.0) == pytest.approx(6e-4)  # no warmup


def test_the_scheduler_sets_each_step_s_lr_on_every_group():
    # catches: the scheduler one step late (step 0 must run at get_lr(0)), a group skipped
    w = minitorch.nn.Parameter(minitorch.ones(2, 2))
    b = minitorch.nn.Parameter(minitorch.ones(2))
    opt = minitorch.optim.AdamW([{"params": [w]}, {"params": [b], "weight_decay": 0.0}], lr=6e-4)
    sched = WarmupCosineLR(opt, warmup_steps=10, max_steps=50, min_lr=6e-5)
    seen = []
    for _ in range(60):
        seen.append([g["lr"] for g in opt.param_groups])
        opt.step()
        sched.step()
    for step, lrs in enumerate(seen):
        assert lrs == pytest.approx([nanogpt_get_lr(step)] * 2)
    assert sched.state_dict()["last_epoch"] == 60


@pytest.mark.parametrize(
    "args, message",
    [((0, 10, 10, 1e-3, 0.0), "larger than warmup_steps"), ((-1, 1, 5, 1e-3, 0.0), "step")],
)
def test_bad_arguments(args, message):
    # catches: a division by zero when max_steps == warmup_steps, negative steps
    with pytest.raises(ValueError, match=message):
        warmup_cosine(*args)
