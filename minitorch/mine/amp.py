"""Chapter 04's pieces in the framework: the inf check, unscaling, the scale update, the
autocast rule and the loss scaler's decisions inside ``amp.GradScaler``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from .. import dtypes
from ..amp import autocast_mode, grad_scaler
from ..creation import tensor
from ..tensor import Tensor
from .pieces import piece


def _holders(grads: list) -> list:
    """What the exercises take: things with a ``.grad`` (parameters)."""
    return [SimpleNamespace(grad=g) for g in grads]


def _flag(found: Any) -> Tensor:
    if isinstance(found, Tensor):
        found = bool(found.item())
    return tensor(1.0 if found else 0.0, dtype=dtypes.float32)


@piece("04.1", "found_inf", site="GradScaler's inf/NaN check of the gradients")
def _found_inf(mine: Any, found_inf: Any) -> None:
    learner = mine.wrap("04.1", "found_inf", found_inf)

    def check_and_unscale(grads: list, inv_scale: float) -> Tensor:
        found = learner(_holders(grads))
        for g in grads:
            g.mul_(inv_scale)
        return _flag(found)

    mine.patches.replace(grad_scaler, "non_finite_check_and_unscale_", check_and_unscale)


@piece("04.2", "update_scale", site="GradScaler.update: the next scale and growth count")
def _update_scale(mine: Any, update_scale: Any) -> None:
    learner = mine.wrap("04.2", "update_scale", update_scale)

    def update(*args: Any) -> tuple[float, int]:
        scale, tracker = learner(*args)
        return float(scale), int(tracker)

    mine.patches.replace(grad_scaler, "update_scale", update)


@piece("04.3", "unscale_", site="GradScaler.unscale_ and step: dividing the gradients by the scale")
def _unscale(mine: Any, unscale_: Any) -> None:
    learner = mine.wrap("04.3", "unscale_", unscale_)

    def check_and_unscale(grads: list, inv_scale: float) -> Tensor:
        return _flag(learner(_holders(grads), 1.0 / inv_scale))

    mine.patches.replace(grad_scaler, "non_finite_check_and_unscale_", check_and_unscale)


@piece("04.4", "autocast_dtypes", site="every op inside autocast: the dtypes its inputs get")
def _autocast(mine: Any, autocast_dtypes: Any) -> None:
    learner = mine.wrap("04.4", "autocast_dtypes", autocast_dtypes)
    state = autocast_mode._state

    def cast_inputs(op: str, args: tuple) -> tuple:
        device_type = next((a.device.type for a in args if isinstance(a, Tensor)), None)
        if device_type not in state.dtypes:
            return args
        policy = autocast_mode.POLICY[device_type]
        if op not in policy:
            return args
        tensors = [a for a in args if isinstance(a, Tensor)]
        wanted = list(learner(op, [t.dtype for t in tensors], state.dtypes[device_type], policy))
        if len(wanted) != len(tensors):
            raise ValueError(
                f"autocast_dtypes (exercise 04.4) returned {len(wanted)} dtypes for {op}'s "
                f"{len(tensors)} tensor inputs"
            )
        chosen = iter(wanted)
        return tuple(a.to(dtype=next(chosen)) if isinstance(a, Tensor) else a for a in args)

    mine.patches.replace(autocast_mode, "cast_inputs", cast_inputs)


@piece(
    "04.5",
    "LossScaler",
    site="amp.GradScaler's scale, step and update (the package keeps its checks)",
    uses=("04.2", "04.3"),
)
def _loss_scaler(mine: Any, loss_scaler: Any) -> None:
    cls = grad_scaler.GradScaler
    package_scale, package_step, package_update = cls.scale, cls.step, cls.update
    OptState = grad_scaler.OptState

    def yours(self: Any) -> Any:
        theirs = self.__dict__.get("_yours")
        if theirs is None:
            theirs = self._yours = loss_scaler(
                self._init_scale, self._growth_factor, self._backoff_factor, self._growth_interval
            )
        theirs.scale_value = self.get_scale()
        theirs.growth_tracker = self._get_growth_tracker()
        return theirs

    scale_of = mine.wrap("04.5", "LossScaler.scale", lambda s, loss: s.scale(loss))
    step_of = mine.wrap("04.5", "LossScaler.step", lambda s, opt: s.step(opt))
    update_of = mine.wrap("04.5", "LossScaler.update", lambda s: s.update())

    def scale(self: Any, outputs: Any) -> Any:
        if not self._enabled or not isinstance(outputs, Tensor):
            return package_scale(self, outputs)
        if self._scale is None:
            self._lazy_init(outputs.device)
        return scale_of(yours(self), outputs)

    def step(self: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._enabled or args or kwargs:
            mine.package_ran("04.5", "a disabled scaler or arguments for the optimizer")
            return package_step(self, optimizer, *args, **kwargs)
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        theirs = yours(self)
        if state["stage"] is OptState.UNSCALED:
            # unscale_ ran already (to clip): its check stands, as in the package's step
            # (the clipped gradients would be checked again otherwise)
            found = sum(f.item() for f in state["found_inf_per_device"].values()) > 0
            if not found:
                optimizer.step()
            theirs.found_inf = found
            mine.package_ran("04.5", "a step after unscale_ (its inf check stands)")
        else:
            step_of(theirs, optimizer)
        state["found_inf_per_device"] = {"cpu": _flag(theirs.found_inf)}
        state["stage"] = OptState.STEPPED
        return None

    def update(self: Any, new_scale: Any = None) -> None:
        if not self._enabled or new_scale is not None:
            return package_update(self, new_scale)
        scale_tensor = self._check_scale("update")
        found = [
            f
            for s in self._per_optimizer_states.values()
            for f in s["found_inf_per_device"].values()
        ]
        if not found:
            return package_update(self)  # (its error: no inf checks were recorded)
        theirs = yours(self)
        theirs.found_inf = sum(f.item() for f in found) > 0
        update_of(theirs)
        with np.errstate(over="ignore"):
            value = float(np.float32(theirs.scale_value))
        from ..autograd.grad_mode import no_grad

        with no_grad():
            scale_tensor.fill_(value)
        self._growth_tracker = int(theirs.growth_tracker)
        self._per_optimizer_states = {}

    mine.patches.replace(cls, "scale", scale)
    mine.patches.replace(cls, "step", step)
    mine.patches.replace(cls, "update", update)
