"""Adadelta: steps scaled by the ratio of two running root mean squares, of past updates
and of past gradients, so that the step has the parameter's units and needs no tuned lr."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.grad_mode import enable_grad, no_grad
from ..checks import as_number
from ..creation import zeros_like
from ..ops import (
    _foreach_add,
    _foreach_add_,
    _foreach_addcdiv_,
    _foreach_addcmul_,
    _foreach_clone,
    _foreach_mul_,
    _foreach_neg,
    _foreach_sqrt,
    _foreach_zero_,
)
from .optimizer import Optimizer, check_common, implementation_flags


class Adadelta(Optimizer):
    """PyTorch's formulas: ``v = rho v + (1 - rho) g^2``, then the update
    ``delta = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho u + (1 - rho) delta^2`` and
    ``p -= lr * delta`` (``weight_decay`` adds ``wd * p`` to g; ``maximize`` negates g)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ):
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            **implementation_flags(
                "Adadelta", capturable=capturable, foreach=foreach, differentiable=differentiable
            ),
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_common("Adadelta", group)
        as_number(group["rho"], "Adadelta", "rho", low=0.0, high=1.0)
        as_number(group["eps"], "Adadelta", "eps", low=0.0)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter with a gradient (``closure``, if given, computes
        the loss first, with grad enabled, and its value is returned)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            grads = [p.grad for p in params]
            if group["maximize"]:
                grads = _foreach_neg(grads)
            if group["weight_decay"]:
                grads = _foreach_add(grads, params, alpha=group["weight_decay"])
            states = [self._state_of(p) for p in params]
            for s in states:
                s["step"] += 1
            square_avg = [s["square_avg"] for s in states]
            acc_delta = [s["acc_delta"] for s in states]
            _foreach_mul_(square_avg, rho)  # v = rho v + (1 - rho) g^2
            _foreach_addcmul_(square_avg, grads, grads, 1 - rho)
            std = _foreach_add(square_avg, eps)
            std = _foreach_sqrt(std)
            scale = _foreach_sqrt(_foreach_add(acc_delta, eps))
            _foreach_mul_(scale, grads)
            delta = _foreach_clone(scale)
            _foreach_zero_(delta)
            _foreach_addcdiv_(delta, scale, std, 1.0)  # sqrt(u + eps) g / sqrt(v + eps)
            _foreach_mul_(acc_delta, rho)  # u = rho u + (1 - rho) delta^2
            _foreach_addcmul_(acc_delta, delta, delta, 1 - rho)
            _foreach_add_(params, delta, alpha=-lr)
        return loss

    def _state_of(self, p: Any) -> dict[str, Any]:
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {
                "step": 0,
                "square_avg": zeros_like(p),
                "acc_delta": zeros_like(p),
            }
        return state
