"""``GradScaler``: dynamic loss scaling, with PyTorch's semantics.

float16 flushes values below about 6e-8 to zero, and small gradients live down there. So
the loss is multiplied by a large *scale* before backward (every gradient is scaled by the
same factor, by the chain rule), and the gradients are divided by it again before the
optimizer uses them (``unscale_``). If the scale was too large, some gradient overflowed
to inf or NaN: that step is skipped and the scale backed off. After ``growth_interval``
steps without overflow, the scale grows again. A training step::

    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)          # optional: only to look at or clip the gradients
    scaler.step(optimizer)              # skipped if a gradient is inf/NaN
    scaler.update()                     # back off (after a skip) or grow the scale

All arithmetic on gradients and on the scale runs through ``Function.apply``
(``_foreach_`` ops and ``fill_``), so the tracer and DDP see it like any other write.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from enum import Enum
from typing import Any

import numpy as np

from ..autograd import no_grad
from ..backend import array_module_of
from ..checks import as_bool, as_number, describe
from ..creation import full, zeros
from ..dtypes import float16, float32
from ..ops import _foreach_mul_, stack
from ..ops.foreach import ForeachFunction
from ..ops.registry import register
from ..tensor import Tensor
from .autocast_mode import cuda_available


class OptState(Enum):
    READY = 0  # nothing done to this optimizer's gradients since the last update()
    UNSCALED = 1  # unscale_() ran
    STEPPED = 2  # step() ran (or was skipped)


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class ForeachNonFinite(ForeachFunction):
    """New 0-d float32 tensors: 1.0 for each tensor holding an inf or NaN, else 0.0."""

    name = "_foreach_non_finite"
    inplace = False

    @staticmethod
    def forward(ctx: Any, ts: list) -> list:
        out = []
        for t in ts:
            xp = array_module_of(t)
            out.append(xp.asarray(0.0 if bool(xp.isfinite(t).all()) else 1.0, dtype=np.float32))
        return out


def non_finite_check_and_unscale_(grads: list[Tensor], inv_scale: float) -> Tensor:
    """Multiply every gradient by ``inv_scale`` in place; return a 0-d float32 tensor that
    is 1.0 if any of them held an inf or NaN (PyTorch's
    ``_amp_foreach_non_finite_check_and_unscale_``)."""
    if not grads:
        return zeros((), dtype=float32)
    flags = ForeachNonFinite.apply(grads)
    _foreach_mul_(grads, inv_scale)
    return stack(flags).max()


def update_scale(
    scale: float,
    growth_tracker: int,
    found_inf: bool,
    growth_factor: float,
    backoff_factor: float,
    growth_interval: int,
) -> tuple[float, int]:
    """The next (scale, growth_tracker), as PyTorch's ``_amp_update_scale_`` computes them.

    An overflow multiplies the scale by ``backoff_factor`` and restarts the count of clean
    steps; the ``growth_interval``-th clean step in a row multiplies it by ``growth_factor``
    (unless that would overflow float32, where the scale is kept) and restarts the count.
    """
    if found_inf:
        return float(np.float32(scale * backoff_factor)), 0
    tracker = growth_tracker + 1
    if tracker == growth_interval:
        with np.errstate(over="ignore"):
            grown = float(np.float32(scale * growth_factor))
        return (grown if math.isfinite(grown) else scale), 0
    return scale, tracker


class GradScaler:
    """Scale the loss up for backward, the gradients down for the step; skip steps whose
    gradients overflowed. See the module docstring for the loop."""

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        _check_factors("GradScaler", init_scale, growth_factor, backoff_factor, growth_interval)
        self._device = _check_device(device)
        self._enabled = as_bool(enabled, "GradScaler", "enabled")
        if self._enabled and self._device == "cuda" and not cuda_available():
            warnings.warn(
                "minitorch.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2 + int(type(self) is not GradScaler),  # (cuda.amp's: its caller)
            )
            self._enabled = False
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Tensor | None = None  # made on the device of the first scaled output
        self._growth_tracker = 0
        self._per_optimizer_states: dict[int, dict] = {}

    # --- scaling the loss ----------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """``outputs * scale`` (a tensor, or tensors in lists/tuples)."""
        if not self._enabled:
            return outputs
        return self._scaled(outputs, outputs)

    def _scaled(self, outputs: Any, given: Any) -> Any:
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, Iterable) and not isinstance(outputs, (str, dict, np.ndarray)):
            scaled = [self._scaled(o, given) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        where = "" if outputs is given else f" (it holds {describe(outputs)})"
        raise ValueError(
            f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, but got "
            f"{describe(given)}{where}"
        )

    def _lazy_init(self, device: Any) -> None:
        self._scale = full((), self._init_scale, dtype=float32, device=device)
        self._growth_tracker = self._init_growth_tracker

    def _check_scale(self, funcname: str) -> Tensor:
        if self._scale is None:
            raise RuntimeError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )
        return self._scale

    def _state(self, optimizer: Any, funcname: str = "step") -> dict:
        if not isinstance(getattr(optimizer, "param_groups", None), list):
            raise TypeError(
                f"GradScaler.{funcname}: expected an optimizer (with param_groups), but got "
                f"{describe(optimizer)}"
            )
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    # --- unscaling the gradients ---------------------------------------------------------
    def unscale_(self, optimizer: Any) -> None:
        """Divide this optimizer's gradients by the scale, in place, and note whether any
        is inf/NaN. Call it before clipping or inspecting gradients; at most once per step."""
        if not self._enabled:
            return
        scale = self._check_scale("unscale_")
        state = self._state(optimizer, "unscale_")
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # 1/scale in double, rounded to float32, as PyTorch does
        inv_scale = float(np.float32(1.0 / scale.item()))
        by_device: dict[str, list[Tensor]] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.dtype is float16:
                    raise ValueError(
                        "GradScaler.unscale_: attempting to unscale FP16 gradients (a float16 "
                        f"gradient of shape {tuple(p.grad.shape)}); keep the parameters in "
                        "float32 and let autocast cast"
                    )
                by_device.setdefault(str(p.grad.device), []).append(p.grad)
        with no_grad():
            found = {
                device: non_finite_check_and_unscale_(grads, inv_scale)
                for device, grads in by_device.items()
            }
        state["found_inf_per_device"] = found
        state["stage"] = OptState.UNSCALED

    # --- the step ------------------------------------------------------------------------
    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless a gradient was inf/NaN (then the step is skipped).
        Unscales first if ``unscale_`` was not called. Returns what ``step`` returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise RuntimeError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    # --- the scale update ----------------------------------------------------------------
    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if any optimizer's step was skipped this iteration, or grow it
        after ``growth_interval`` clean iterations; ``new_scale`` sets it instead."""
        if not self._enabled:
            return
        scale = self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError(
                        "GradScaler.update: new_scale should be a float or a 1-element Tensor "
                        f"with requires_grad=False, got shape {tuple(new_scale.shape)}"
                    )
                new_scale = new_scale.item()
            new_scale = as_number(new_scale, "GradScaler.update", "new_scale", low=0, low_open=True)
            value = float(np.float32(new_scale))
        else:
            found_infs = [
                f
                for state in self._per_optimizer_states.values()
                for f in state["found_inf_per_device"].values()
            ]
            if not found_infs:
                raise RuntimeError(
                    "GradScaler.update: no inf checks were recorded prior to update() (call "
                    "step(optimizer) first)."
                )
            found = sum(f.item() for f in found_infs) > 0
            value, self._growth_tracker = update_scale(
                scale.item(),
                self._growth_tracker,
                found,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        with no_grad():
            scale.fill_(value)
        self._per_optimizer_states = {}

    # --- inspection and checkpoints ------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (``init_scale`` before the first ``scale``; 1.0 if disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(
            as_number(
                new_factor, "GradScaler.set_growth_factor", "growth_factor", low=1.0, low_open=True
            )
        )

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(
            as_number(
                new_factor,
                "GradScaler.set_backoff_factor",
                "backoff_factor",
                low=0.0,
                high=1.0,
                low_open=True,
                high_open=True,
            )
        )

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(
            as_number(
                new_interval,
                "GradScaler.set_growth_interval",
                "growth_interval",
                low=1,
                integer=True,
            )
        )

    def _get_growth_tracker(self) -> int:
        return self._init_growth_tracker if self._scale is None else self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """Plain numbers (a disabled scaler returns ``{}``), saved with the checkpoint."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore ``state_dict()``'s numbers; checked whole before anything changes."""
        if not self._enabled:
            return
        op = "GradScaler.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{op}: expected a dict, but got {describe(state_dict)}")
        if len(state_dict) == 0:
            raise RuntimeError(
                f"{op}: the source state dict is empty, possibly because it was saved from a "
                "disabled instance of GradScaler."
            )
        missing = [k for k in _STATE_KEYS if k not in state_dict]
        if missing:
            raise KeyError(f"{op}: the state dict lacks {missing}")
        scale = state_dict["scale"]
        _check_factors(
            op,
            scale,
            state_dict["growth_factor"],
            state_dict["backoff_factor"],
            state_dict["growth_interval"],
        )
        tracker = as_number(
            state_dict["_growth_tracker"], op, "_growth_tracker", low=0, integer=True
        )
        self._init_scale = float(scale)
        if self._scale is not None:
            with no_grad():
                self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(tracker)
        if self._scale is not None:
            self._growth_tracker = self._init_growth_tracker


_STATE_KEYS = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")


def _check_factors(op: str, scale: Any, growth: Any, backoff: Any, interval: Any) -> None:
    """GradScaler's hyper-parameters: a positive finite scale, growth > 1, backoff in
    (0, 1), a positive int interval."""
    as_number(scale, op, "init_scale" if op == "GradScaler" else "scale", low=0, low_open=True)
    as_number(growth, op, "growth_factor", low=1.0, low_open=True)
    as_number(backoff, op, "backoff_factor", low=0.0, high=1.0, low_open=True, high_open=True)
    as_number(interval, op, "growth_interval", low=1, integer=True)


def _check_device(device: Any) -> str:
    name = str(getattr(device, "type", device))
    if not isinstance(device, str) and not hasattr(device, "type"):
        raise TypeError(f"GradScaler: device must be a str or a device, but got {describe(device)}")
    if name.split(":")[0] not in ("cpu", "cuda"):
        raise ValueError(f"GradScaler: device must be 'cpu' or 'cuda', but got {device!r}")
    return name.split(":")[0]


register(
    ForeachNonFinite,
)
