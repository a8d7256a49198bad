"""The Optimizer base class: parameter groups, per-parameter state, state dicts.

Optimizers update parameters in place without recording history (as PyTorch's do under
``no_grad``). The update arithmetic is multi-tensor ops (``minitorch._foreach_*``): one
op per line of the formula for all parameters at once, each through ``Function.apply``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..ops import _foreach_zero_
from ..tensor import Tensor


class Optimizer:
    """Holds ``param_groups`` (lists of parameters with their hyper-parameters) and ``state``."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize Tensors, got {type(p)}")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: can't optimize a non-leaf Tensor")
            if id(p) in seen:
                raise ValueError("some parameters appear in more than one parameter group")
        full = {**self.defaults, **group, "params": params}
        self.param_groups.append(full)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward (they accumulate otherwise)."""
        grads = [p.grad for group in self.param_groups for p in group["params"]]
        grads = [g for g in grads if g is not None]
        if set_to_none:
            for group in self.param_groups:
                for p in group["params"]:
                    p.grad = None
        elif grads:
            with no_grad():
                _foreach_zero_(grads)

    def step(self) -> None:
        raise NotImplementedError

    # --- state dicts: parameters are named by their position across groups ---------------
    def state_dict(self) -> dict[str, Any]:
        index = {id(p): i for i, p in enumerate(self._all_params())}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(groups)} parameter groups, this optimizer has "
                f"{len(self.param_groups)}"
            )
        for mine, theirs in zip(self.param_groups, groups, strict=True):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group ({len(theirs['params'])} vs {len(mine['params'])})"
                )
        params = self._all_params()
        self.state = {}
        for key, value in state_dict["state"].items():
            p = params[int(key)]
            self.state[p] = {
                k: v.to(device=p.device) if isinstance(v, Tensor) else v for k, v in value.items()
            }
        for mine, theirs in zip(self.param_groups, groups, strict=True):
            mine.update({k: v for k, v in theirs.items() if k != "params"})

    def _all_params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"
