"""RMSprop: divide each gradient by a running root mean square of its past values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..checks import as_bool, as_number
from ..creation import zeros_like
from ..ops import (
    _foreach_add,
    _foreach_add_,
    _foreach_addcdiv_,
    _foreach_addcmul_,
    _foreach_clone,
    _foreach_lerp_,
    _foreach_mul_,
    _foreach_neg,
    _foreach_sqrt,
)
from .optimizer import Optimizer, check_common, implementation_flags


class RMSprop(Optimizer):
    """``p -= lr * g / (sqrt(v) + eps)`` with ``v = alpha v + (1 - alpha) g^2`` (PyTorch's
    formulas). ``centered`` divides by the root of the *variance* instead
    (``v - mean(g)^2``, the mean also a running average); ``momentum`` accumulates the
    divided gradients in a buffer and steps by the buffer.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ):
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            **implementation_flags("RMSprop", capturable=capturable, foreach=foreach),
            maximize=maximize,
            **implementation_flags("RMSprop", differentiable=differentiable),
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_common("RMSprop", group)
        as_number(group["alpha"], "RMSprop", "alpha", low=0.0)
        as_number(group["eps"], "RMSprop", "eps", low=0.0)
        as_number(group["momentum"], "RMSprop", "momentum", low=0.0)
        as_bool(group["centered"], "RMSprop", "centered")

    @no_grad()
    def step(self) -> None:
        """One update of every parameter with a gradient: a few multi-tensor ops per group."""
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            grads = [p.grad for p in params]
            if group["maximize"]:
                grads = _foreach_neg(grads)
            if group["weight_decay"]:
                grads = _foreach_add(grads, params, alpha=group["weight_decay"])
            states = [self._state_of(p, group) for p in params]
            for s in states:
                s["step"] += 1
            square_avg = [s["square_avg"] for s in states]
            _foreach_mul_(square_avg, alpha)  # v = alpha v + (1 - alpha) g^2
            _foreach_addcmul_(square_avg, grads, grads, 1 - alpha)
            if group["centered"]:
                grad_avg = [s["grad_avg"] for s in states]
                _foreach_lerp_(grad_avg, grads, 1 - alpha)  # mean = alpha mean + (1 - alpha) g
                variance = _foreach_clone(square_avg)
                _foreach_addcmul_(variance, grad_avg, grad_avg, -1.0)
                denom = _foreach_sqrt(variance)
            else:
                denom = _foreach_sqrt(square_avg)
            _foreach_add_(denom, eps)
            if momentum > 0:
                buf = [s["momentum_buffer"] for s in states]
                _foreach_mul_(buf, momentum)  # buf = momentum buf + g / denom
                _foreach_addcdiv_(buf, grads, denom, 1.0)
                _foreach_add_(params, buf, alpha=-lr)
            else:
                _foreach_addcdiv_(params, grads, denom, -lr)

    def _state_of(self, p: Any, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {"step": 0, "square_avg": zeros_like(p)}
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        return state
