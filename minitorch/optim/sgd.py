"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's formulas)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..checks import as_bool, as_number
from ..ops import _foreach_add, _foreach_add_, _foreach_clone, _foreach_mul_, _foreach_neg
from .optimizer import Optimizer, check_common, implementation_flags


class SGD(Optimizer):
    """``p -= lr * d`` where d is the (momentum-averaged) gradient.

    With momentum m: ``buf = m * buf + (1 - dampening) * g`` (the first step sets buf = g),
    and ``d = g + m * buf`` for Nesterov, else ``d = buf``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ):
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            **implementation_flags(
                "SGD", foreach=foreach, differentiable=differentiable, fused=fused
            ),
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_common("SGD", group)
        momentum = as_number(group["momentum"], "SGD", "momentum", low=0)
        dampening = as_number(group["dampening"], "SGD", "dampening")
        if as_bool(group["nesterov"], "SGD", "nesterov") and (momentum <= 0 or dampening != 0):
            raise ValueError(
                f"SGD: Nesterov momentum requires a momentum and zero dampening, but got "
                f"momentum={momentum}, dampening={dampening}"
            )

    @no_grad()
    def step(self) -> None:
        """One update of every parameter with a gradient: a few multi-tensor ops per group."""
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            grads = [p.grad for p in params]
            if group["maximize"]:
                grads = _foreach_neg(grads)
            if group["weight_decay"]:
                grads = _foreach_add(grads, params, alpha=group["weight_decay"])
            if momentum:
                grads = self._momentum(params, grads, momentum, dampening, group["nesterov"])
            _foreach_add_(params, grads, alpha=-lr)

    def _momentum(
        self, params: list, grads: list, momentum: float, dampening: float, nesterov: bool
    ) -> list:
        """``buf = momentum * buf + (1 - dampening) * g``; the first step starts ``buf = g``
        (a copy: the buffer must not alias ``.grad``, which zero_grad may reuse)."""
        states = [self.state.setdefault(p, {}) for p in params]
        has_buf = [s.get("momentum_buffer") is not None for s in states]
        old = [s["momentum_buffer"] for s, has in zip(states, has_buf, strict=True) if has]
        if old:
            _foreach_mul_(old, momentum)
            old_grads = [g for g, has in zip(grads, has_buf, strict=True) if has]
            _foreach_add_(old, old_grads, alpha=1 - dampening)
        starting = [k for k, has in enumerate(has_buf) if not has]
        if starting:
            copies = _foreach_clone([grads[k] for k in starting])
            for k, buf in zip(starting, copies, strict=True):
                states[k]["momentum_buffer"] = buf
        bufs = [s["momentum_buffer"] for s in states]
        return _foreach_add(grads, bufs, alpha=momentum) if nesterov else bufs
