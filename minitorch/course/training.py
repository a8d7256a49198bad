"""The lessons' training runs (chapter 03's real run and its checkpoint demo), kept here.

Exercise 03.8 asks for the training loop, so the lesson does not print one: it describes
the loop and calls these. They are the loop of chapter 03, section 4, with the usual
extras (train/eval modes, a cosine learning-rate schedule, gradient clipping, a progress
bar).
"""

from __future__ import annotations

import time
from typing import Any

import minitorch as mt
from minitorch import nn, optim
from minitorch.data import DataLoader
from minitorch.nn import functional as F


def accuracy(model: nn.Module, dataset: Any) -> float:
    """The share of ``dataset``'s examples the model classifies right (in eval mode)."""
    model.eval()
    images, labels = dataset.tensors
    with mt.no_grad():
        predictions = model(images).argmax(dim=1)
    return (predictions == labels).float().mean().item()


def fit(
    model: nn.Module,
    optimizer: optim.Optimizer,
    epochs: int,
    train_set: Any,
    test_set: Any,
    batch_size: int = 64,
    seed: int = 0,
) -> dict[str, Any]:
    """Train ``epochs`` epochs; per epoch the mean training loss and the test accuracy
    (and, under ``"seconds"``, how long it all took)."""
    from minitorch.course.notebook import progress

    loader = DataLoader(train_set, batch_size, shuffle=True, generator=mt.Generator(seed))
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history: dict[str, Any] = {"train_loss": [], "test_acc": []}
    start = time.perf_counter()
    bar = progress(range(epochs), desc="epochs")
    for _ in bar:
        losses = train_epoch(model, optimizer, loader, max_norm=5.0)
        scheduler.step()
        history["train_loss"].append(sum(losses) / len(losses))
        history["test_acc"].append(accuracy(model, test_set))
        bar.set_postfix(loss=f"{history['train_loss'][-1]:.4f}", test=history["test_acc"][-1])
    history["seconds"] = time.perf_counter() - start
    return history


def train_epoch(
    model: nn.Module, optimizer: optim.Optimizer, loader: Any, max_norm: float | None = None
) -> list[float]:
    """One pass over ``loader`` in training mode; each batch's loss."""
    model.train()
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if max_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
        optimizer.step()
        losses.append(loss.item())
    return losses
