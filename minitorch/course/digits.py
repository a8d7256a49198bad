"""One small, seeded training run on the digits in float32, float16-AMP or bfloat16-AMP.

Chapter 04's lesson plots these runs, the tests compare their accuracy and the benchmark
times their steps: all three use this one loop, which is the recipe of the chapter::

    with autocast("cpu", dtype=float16):        # forward in mixed precision
        loss = cross_entropy(model(x), y)       # (the loss itself runs in float32)
    scaler.scale(loss).backward()               # backward outside autocast
    scaler.step(optimizer)                      # skipped when a gradient overflowed
    scaler.update()
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import nn, optim
from ..amp.autocast_mode import autocast
from ..amp.grad_scaler import GradScaler
from ..autograd import no_grad
from ..creation import randperm
from ..data import load_digits
from ..dtypes import bfloat16, float16
from ..random import Generator, manual_seed

#: precision name -> the autocast dtype (None: plain float32)
PRECISIONS = {"fp32": None, "fp16": float16, "bf16": bfloat16}


@dataclass
class TrainingRun:
    """What one run recorded: per step the loss, the scale and whether it was skipped; per
    epoch the test accuracy."""

    precision: str
    losses: list[float] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)


def digits_tensors(split: str) -> tuple:
    """The digits as (N, 64) float32 images in [0, 1] and int64 labels."""
    data = load_digits(split)
    images, labels = data.tensors
    return images.reshape(images.shape[0], -1), labels


def make_model(seed: int = 0, hidden: int = 128) -> nn.Module:
    manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def accuracy(model: nn.Module, images, labels, dtype=None) -> float:
    """Fraction of correct predictions (forward under autocast when ``dtype`` is given)."""
    with no_grad(), autocast("cpu", dtype=dtype or float16, enabled=dtype is not None):
        predicted = model(images).argmax(1)
    return float((predicted == labels).float().mean().item())


def train(
    precision: str = "fp32",
    epochs: int = 12,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    init_scale: float = 2.0**16,
    growth_interval: int = 2000,
) -> TrainingRun:
    """Train ``make_model(seed)`` with Adam; float16 uses a GradScaler, bfloat16 needs none."""
    if precision not in PRECISIONS:
        raise ValueError(f"train: precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
    dtype = PRECISIONS[precision]
    x_train, y_train = digits_tensors("train")
    x_test, y_test = digits_tensors("test")
    model = make_model(seed)
    opt = optim.Adam(model.parameters(), lr=lr)
    scaler = GradScaler(
        init_scale=init_scale, growth_interval=growth_interval, enabled=precision == "fp16"
    )
    generator = Generator(seed)
    run = TrainingRun(precision)
    n = x_train.shape[0]
    for _ in range(epochs):
        order = randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            index = order[start : start + batch_size]
            x, y = x_train[index], y_train[index]
            opt.zero_grad()
            with autocast("cpu", dtype=dtype or float16, enabled=dtype is not None):
                loss = nn.functional.cross_entropy(model(x), y)
            scale = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.step(opt)
            stepped = _took_step(scaler, opt)
            scaler.update()
            run.losses.append(loss.item())
            run.scales.append(scale)
            if not stepped:
                run.skipped.append(len(run.losses) - 1)
        run.accuracy.append(accuracy(model, x_test, y_test, dtype))
    return run


def _took_step(scaler: GradScaler, opt: optim.Optimizer) -> bool:
    """Whether ``scaler.step`` ran the optimizer (no inf/NaN among the gradients)."""
    if not scaler.is_enabled():
        return True
    found = scaler._per_optimizer_states[id(opt)]["found_inf_per_device"]
    return not sum(f.item() for f in found.values())
