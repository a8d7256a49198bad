"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..checks import as_bool, as_number, describe
from ..creation import zeros_like
from ..ops import (
    _foreach_add,
    _foreach_add_,
    _foreach_addcdiv_,
    _foreach_addcmul_,
    _foreach_lerp_,
    _foreach_maximum_,
    _foreach_mul_,
    _foreach_neg,
    _foreach_sqrt,
)
from .optimizer import Optimizer, check_common, implementation_flags


class Adam(Optimizer):
    """Adaptive moments: ``p -= lr * m_hat / (sqrt(v_hat) + eps)``.

    ``m`` and ``v`` are running averages of the gradient and its square; the hats undo
    their bias towards zero in the first steps. Adam adds weight decay to the gradient;
    AdamW instead shrinks the weights directly (``decoupled``), which is what most
    training recipes want.
    """

    decoupled = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool | None = None,
    ):
        op = type(self).__name__
        decoupled = self.decoupled if decoupled_weight_decay is None else decoupled_weight_decay
        defaults = dict(
            lr=lr,
            betas=tuple(betas) if isinstance(betas, (list, tuple)) else betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            **implementation_flags(
                op,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
            ),
            decoupled_weight_decay=as_bool(decoupled, op, "decoupled_weight_decay"),
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        op = type(self).__name__
        check_common(op, group)
        as_number(group["eps"], op, "eps", low=0)
        as_bool(group["amsgrad"], op, "amsgrad")
        betas = group["betas"]
        if not isinstance(betas, (list, tuple)) or len(betas) != 2:
            raise ValueError(
                f"{op}: betas must be a pair (beta1, beta2), but got {describe(betas)}"
            )
        for i, beta in enumerate(betas):
            as_number(beta, op, f"beta{i + 1} (betas[{i}])", low=0.0, high=1.0, high_open=True)

    @no_grad()
    def step(self) -> None:
        """One update of every parameter with a gradient: a few multi-tensor ops per group.

        Each parameter keeps its own step count (its first gradient may come late, e.g. an
        embedding row), so the bias corrections are per-parameter scalars.
        """
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            decay, amsgrad = group["weight_decay"], group["amsgrad"]
            grads = [p.grad for p in params]
            if group["maximize"]:
                grads = _foreach_neg(grads)
            if decay and group["decoupled_weight_decay"]:
                _foreach_mul_(params, 1 - lr * decay)
            elif decay:
                grads = _foreach_add(grads, params, alpha=decay)
            states = [self._state_of(p, amsgrad) for p in params]
            for s in states:
                s["step"] += 1
            m = [s["exp_avg"] for s in states]
            v = [s["exp_avg_sq"] for s in states]
            _foreach_lerp_(m, grads, 1 - beta1)  # m = beta1 m + (1 - beta1) g
            _foreach_mul_(v, beta2)  # v = beta2 v + (1 - beta2) g^2
            _foreach_addcmul_(v, grads, grads, 1 - beta2)
            if amsgrad:
                vmax = [s["max_exp_avg_sq"] for s in states]
                _foreach_maximum_(vmax, v)
                v = vmax
            # p -= lr * m_hat / (sqrt(v_hat) + eps), with v_hat's correction moved into the
            # scalars: sqrt(v) + eps * c2 = c2 * (sqrt(v_hat) + eps) where c2 = sqrt(1 - beta2^t)
            corr2 = [math.sqrt(1 - beta2 ** s["step"]) for s in states]
            denom = _foreach_sqrt(v)
            _foreach_add_(denom, [eps * c for c in corr2])
            steps = [-lr * c / (1 - beta1 ** s["step"]) for s, c in zip(states, corr2, strict=True)]
            _foreach_addcdiv_(params, m, denom, steps)

    def _state_of(self, p: Any, amsgrad: bool) -> dict[str, Any]:
        state = self.state.get(p)
        if state is None:
            names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
            state = self.state[p] = {"step": 0, **{name: zeros_like(p) for name in names}}
        return state


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01): ``p *= 1 - lr * weight_decay``."""

    decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
