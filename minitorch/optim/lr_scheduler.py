"""Learning-rate schedules: call ``scheduler.step()`` once per epoch (or per step)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..checks import as_callable, as_number, describe
from .optimizer import Optimizer


class LRScheduler:
    """Sets each group's ``lr`` at every ``step()``, as PyTorch's schedulers do: from the
    group's current ``lr`` (chainable: two schedulers on one optimizer compose, and a
    scheduler restored from its ``state_dict`` goes on from the optimizer's restored lr),
    ``initial_lr`` (kept in the group) and the step count ``last_epoch``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: expected an Optimizer, but got {describe(optimizer)}")
        as_number(last_epoch, name, "last_epoch", low=-1, integer=True)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:  # resuming needs the optimizer's saved state
                raise KeyError(
                    f"{name}: param 'initial_lr' is not specified in param_groups[{i}] when "
                    f"resuming scheduler with last_epoch >= 0 (last_epoch={last_epoch}); load "
                    "the optimizer's state_dict first, or start with last_epoch=-1"
                )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (and LambdaLR's functions), copied: a later step
        changes neither the dict nor a scheduler it was loaded into."""
        return {
            k: list(v) if isinstance(v, list) else v
            for k, v in self.__dict__.items()
            if k not in ("optimizer", "lr_lambdas")
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.__dict__.update({k: list(v) if isinstance(v, list) else v for k, v in state.items()})


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch=-1):
        as_number(step_size, "StepLR", "step_size", low=1, integer=True)
        as_number(gamma, "StepLR", "gamma")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        as_number(gamma, "ExponentialLR", "gamma")
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each of the epochs in ``milestones``."""

    def __init__(
        self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1, last_epoch=-1
    ):
        if isinstance(milestones, (str, bytes)) or not hasattr(milestones, "__iter__"):
            raise TypeError(f"MultiStepLR: milestones must be a list of ints, got {milestones!r}")
        for m in milestones:
            as_number(m, "MultiStepLR", "milestones", low=0, integer=True)
        as_number(gamma, "MultiStepLR", "gamma")
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.count(self.last_epoch)  # a milestone listed twice: gamma**2
        if not times:
            return self._current()
        return [lr * self.gamma**times for lr in self._current()]


class CosineAnnealingLR(LRScheduler):
    """Follow half a cosine from the initial lr down to ``eta_min`` over ``T_max`` epochs."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch=-1):  # noqa: N803
        as_number(T_max, "CosineAnnealingLR", "T_max", low=1, integer=True)
        as_number(eta_min, "CosineAnnealingLR", "eta_min")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, low = self.last_epoch, self.T_max, self.eta_min  # noqa: N806
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and t > 0:  # resumed: the closed form
            return [
                low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs
            ]
        if (t - 1 - T) % (2 * T) == 0:  # the bottom of the cosine: turn back up
            return [
                lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                for base, lr in zip(self.base_lrs, self._current(), strict=True)
            ]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - low) + low for lr in self._current()]


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; one function, or one per parameter group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list[Callable], last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = (
            list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        )
        if len(self.lr_lambdas) != n:
            raise ValueError(f"LambdaLR: expected {n} lr_lambdas, got {len(self.lr_lambdas)}")
        for f in self.lr_lambdas:
            as_callable(f, "LambdaLR", "lr_lambda")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base * f(self.last_epoch)
            for base, f in zip(self.base_lrs, self.lr_lambdas, strict=True)
        ]


class LinearLR(LRScheduler):
    """Linear warmup: scale the lr from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ):
        as_number(start_factor, "LinearLR", "start_factor", low=0, high=1, low_open=True)
        as_number(end_factor, "LinearLR", "end_factor", low=0, high=1)
        as_number(total_iters, "LinearLR", "total_iters", low=1, integer=True)
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        start, end, n = self.start_factor, self.end_factor, self.total_iters
        if self.last_epoch == 0:
            return [lr * start for lr in self._current()]
        if self._is_initial or self.last_epoch > n:
            return self._current()
        factor = 1.0 + (end - start) / (n * start + (self.last_epoch - 1) * (end - start))
        return [lr * factor for lr in self._current()]
