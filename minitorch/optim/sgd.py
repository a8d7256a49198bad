"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's formulas)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer, bump


class SGD(Optimizer):
    """``p -= lr * d`` where d is the (momentum-averaged) gradient.

    With momentum m: ``buf = m * buf + (1 - dampening) * g`` (the first step sets buf = g),
    and ``d = g + m * buf`` for Nesterov, else ``d = buf``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        maximize: bool = False,
    ):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: invalid lr={lr}, momentum={momentum} or weight_decay")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def step(self) -> None:
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad._data
                if group["maximize"]:
                    g = -g
                if group["weight_decay"]:
                    g = g + group["weight_decay"] * p._data
                if momentum:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor._from_array(g.copy())
                    else:
                        buf._data *= momentum
                        buf._data += (1 - dampening) * g
                    g = g + momentum * buf._data if group["nesterov"] else buf._data
                p._data -= lr * g
                bump(p)
