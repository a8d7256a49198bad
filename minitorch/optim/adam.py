"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..device import array_module_of
from ..tensor import Tensor
from .optimizer import Optimizer, bump


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
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        maximize: bool = False,
    ):
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"{type(self).__name__}: invalid lr={lr}, eps={eps} or betas={betas}")
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def step(self) -> None:
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = -p.grad._data if group["maximize"] else p.grad._data
                x = p._data
                if decay and self.decoupled:
                    x *= 1 - lr * decay
                elif decay:
                    g = g + decay * x
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = self._initial_state(x, group["amsgrad"])
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                xp = array_module_of(x)
                tmp = self._scratch(x)  # one reused buffer: no allocation per step
                xp.multiply(g, 1 - beta1, out=tmp)
                m *= beta1
                m += tmp
                xp.multiply(g, g, out=tmp)
                tmp *= 1 - beta2
                v *= beta2
                v += tmp
                if group["amsgrad"]:
                    vmax = state["max_exp_avg_sq"]._data
                    xp.maximum(vmax, v, out=vmax)
                    v = vmax
                bias1 = 1 - beta1**t
                bias2_sqrt = math.sqrt(1 - beta2**t)
                # step = lr * m_hat / (sqrt(v_hat) + eps), with v_hat's correction moved into
                # the scalars: sqrt(v) + eps * bias2_sqrt = bias2_sqrt * (sqrt(v_hat) + eps)
                xp.sqrt(v, out=tmp)
                tmp += eps * bias2_sqrt
                xp.divide(m, tmp, out=tmp)
                tmp *= lr * bias2_sqrt / bias1
                x -= tmp
                bump(p)

    def _scratch(self, x: Any) -> Any:
        """A work array shaped like ``x``, kept between steps (not part of the state)."""
        scratch = self.__dict__.setdefault("_scratch_arrays", {})
        key = (x.shape, x.dtype, type(x))
        if key not in scratch:
            scratch[key] = x.copy()
        return scratch[key]

    @staticmethod
    def _initial_state(x: Any, amsgrad: bool) -> dict[str, Any]:
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
        return {"step": 0, **{name: Tensor._from_array(x * 0) for name in names}}


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
        maximize: bool = False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)
