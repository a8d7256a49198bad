"""Linear warmup, then cosine decay: the learning rate of nanoGPT (and of most transformers).

At first the weights are random and the gradients large and noisy, so the rate climbs
from almost zero to ``max_lr`` over ``warmup_steps`` steps; then it follows half a cosine
down to ``min_lr`` at ``max_steps``, and stays there. ``warmup_cosine`` is the formula (as
nanoGPT's ``get_lr``); ``WarmupCosineLR`` sets it on an optimizer once per step.
"""

from __future__ import annotations

import math

from ..checks import as_number
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer


def warmup_cosine(
    step: int, warmup_steps: int, max_steps: int, max_lr: float, min_lr: float
) -> float:
    """The learning rate at ``step`` (counted from 0): ``max_lr * (step + 1) / warmup_steps``
    while warming up, then ``min_lr + (max_lr - min_lr) * (1 + cos(pi * t)) / 2`` with ``t``
    going from 0 to 1 between ``warmup_steps`` and ``max_steps``, then ``min_lr``."""
    _check("warmup_cosine", warmup_steps, max_steps, min_lr)
    as_number(step, "warmup_cosine", "step", low=0, integer=True)
    as_number(max_lr, "warmup_cosine", "max_lr", low=0)
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > max_steps:
        return min_lr
    decay_ratio = (step - warmup_steps) / (max_steps - warmup_steps)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (max_lr - min_lr)


def _check(op: str, warmup_steps: int, max_steps: int, min_lr: float) -> None:
    as_number(warmup_steps, op, "warmup_steps", low=0, integer=True)
    as_number(max_steps, op, "max_steps", low=0, integer=True)
    as_number(min_lr, op, "min_lr", low=0)
    if max_steps <= warmup_steps:
        raise ValueError(
            f"{op}: max_steps ({max_steps}) must be larger than warmup_steps ({warmup_steps})"
        )


class WarmupCosineLR(LRScheduler):
    """``warmup_cosine`` on every parameter group, its ``max_lr`` being the group's initial
    lr. Call ``step()`` after each ``optimizer.step()``: the first step runs at
    ``max_lr / warmup_steps``, as nanoGPT's loop sets ``get_lr(0)`` before step 0."""

    def __init__(
        self,
        optimizer: Optimizer,
        warmup_steps: int,
        max_steps: int,
        min_lr: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        _check("WarmupCosineLR", warmup_steps, max_steps, min_lr)
        self.warmup_steps, self.max_steps, self.min_lr = warmup_steps, max_steps, min_lr
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            warmup_cosine(self.last_epoch, self.warmup_steps, self.max_steps, base, self.min_lr)
            for base in self.base_lrs
        ]
