"""The Optimizer base class: parameter groups, per-parameter state, state dicts.

Optimizers update parameters in place without recording history (as PyTorch's do under
``no_grad``). The update arithmetic is multi-tensor ops (``minitorch._foreach_*``): one
op per line of the formula for all parameters at once, each through ``Function.apply``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..checks import as_bool, as_number, describe
from ..ops import _foreach_zero_
from ..tensor import Tensor


class ParamGroup(dict):
    """A parameter group: a dict whose hyper-parameters are checked when set, so that
    ``group["lr"] = "x"`` (by hand, or a scheduler's junk) fails there, not halfway
    through the next ``step`` with some groups already updated."""

    def __init__(self, check: Any, values: dict[str, Any]) -> None:
        super().__init__(values)
        self._check = check

    def __setitem__(self, key: str, value: Any) -> None:
        if key != "params":
            self._check({**self, key: value})
        super().__setitem__(key, value)

    def __reduce__(self) -> Any:  # copies and pickles are plain dicts
        return (dict, (dict(self),))


class Optimizer:
    """Holds ``param_groups`` (lists of parameters with their hyper-parameters) and ``state``."""

    #: Whether each per-parameter state tensor has its parameter's shape (checked on
    #: ``load_state_dict``); LBFGS keeps flat vectors of all parameters instead.
    state_shaped_like_params = True

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        name = type(self).__name__
        if isinstance(params, (Tensor, dict, str)) or not isinstance(params, Iterable):
            raise TypeError(
                f"{name}: params must be an iterable of Tensors or of dicts (parameter groups), "
                f"but got {describe(params)}"
            )
        params = list(params)
        if not params:
            raise ValueError(f"{name} got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Check one group's hyper-parameters (each optimizer says which values are valid)."""

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters (and hyper-parameters that override the defaults);
        checked whole before the optimizer changes."""
        name = type(self).__name__
        if not isinstance(group, dict):
            raise TypeError(
                f"{name}.add_param_group: param_group must be a dict, but got {describe(group)}"
            )
        if "params" not in group:
            raise ValueError(
                f"{name}.add_param_group: the parameter group has no 'params' key "
                f"(keys: {sorted(group)})"
            )
        params = group["params"]
        if isinstance(params, (set, dict, str)) or not isinstance(params, (Tensor, Iterable)):
            raise TypeError(
                f"{name}: a group's params must be a Tensor or an ordered sequence of Tensors, "
                f"but got {describe(params)}"
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        mine: set[int] = set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"{name} can only optimize Tensors, but parameter {i} is {describe(p)}"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"{name}: can't optimize a non-leaf Tensor (parameter {i}, shape "
                    f"{tuple(p.shape)}, made by {p.grad_fn.name()})"
                )
            if not p.dtype.is_floating_point:
                raise ValueError(
                    f"{name}: parameter {i} has dtype {p.dtype}; only floating "
                    "point tensors can be optimized"
                )
            if id(p) in mine:
                raise ValueError(
                    f"{name}: parameter {i} (shape {tuple(p.shape)}) appears more than once in "
                    "the parameter group (duplicate parameters would be updated twice)"
                )
            if id(p) in seen:
                raise ValueError(
                    f"{name}.add_param_group: some parameters appear in more than one parameter "
                    f"group (parameter {i}, shape {tuple(p.shape)}, is already in a group)"
                )
            mine.add(id(p))
        full = ParamGroup(self._check_group, {**self.defaults, **group, "params": params})
        self._check_group(full)
        self.param_groups.append(full)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward (they accumulate otherwise)."""
        as_bool(set_to_none, f"{type(self).__name__}.zero_grad", "set_to_none")
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
        """Restore ``state_dict()``: checked whole (groups, sizes, indices, shapes of the
        per-parameter state) before anything changes."""
        op = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{op}: expected a dict, but got {describe(state_dict)}")
        missing = [k for k in ("state", "param_groups") if k not in state_dict]
        if missing:
            raise ValueError(f"{op}: the state dict lacks {missing} (keys: {sorted(state_dict)})")
        groups, saved = state_dict["param_groups"], state_dict["state"]
        if not isinstance(groups, (list, tuple)) or not isinstance(saved, dict):
            raise TypeError(
                f"{op}: param_groups must be a list and state a dict, but got "
                f"{type(groups).__name__} and {type(saved).__name__}"
            )
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"{op}: loaded state dict has {len(groups)} parameter groups, this optimizer "
                f"has {len(self.param_groups)}"
            )
        for mine, theirs in zip(self.param_groups, groups, strict=True):
            if not isinstance(theirs, dict) or "params" not in theirs:
                raise ValueError(
                    f"{op}: each parameter group must be a dict with 'params', "
                    f"but got {describe(theirs)}"
                )
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError(
                    f"{op}: loaded state dict contains a parameter group that doesn't match "
                    f"the size of optimizer's group ({len(theirs['params'])} vs "
                    f"{len(mine['params'])})"
                )
            self._check_group({**mine, **{k: v for k, v in theirs.items() if k != "params"}})
        params = self._all_params()
        state = {}
        for key, value in saved.items():
            if isinstance(key, bool) or not isinstance(key, (int, str)) or not str(key).isdigit():
                raise ValueError(f"{op}: state key {key!r} is not a parameter index")
            if not 0 <= int(key) < len(params):
                raise ValueError(
                    f"{op}: state for parameter {key} but the optimizer has {len(params)} "
                    "parameters"
                )
            if not isinstance(value, dict):
                raise TypeError(
                    f"{op}: state of parameter {key} must be a dict, but got {describe(value)}"
                )
            p = params[int(key)]
            for k, v in value.items():
                if (
                    self.state_shaped_like_params
                    and isinstance(v, Tensor)
                    and v.ndim
                    and tuple(v.shape) != tuple(p.shape)
                ):
                    raise ValueError(
                        f"{op}: state {k!r} of parameter {key} has shape {tuple(v.shape)}, but "
                        f"the parameter has shape {tuple(p.shape)}"
                    )
            state[p] = {
                k: v.to(device=p.device) if isinstance(v, Tensor) else v for k, v in value.items()
            }
        self.state = state
        for mine, theirs in zip(self.param_groups, groups, strict=True):
            mine.update({k: v for k, v in theirs.items() if k != "params"})

    def _all_params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")  # (PyTorch leaves a blank line between groups)
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


def implementation_flags(op: str, **flags: Any) -> dict[str, Any]:
    """PyTorch's implementation switches (``foreach``, ``fused``, ``capturable``,
    ``differentiable``), kept in the parameter groups as PyTorch keeps them. minitorch's
    updates are always multi-tensor ops, so ``foreach`` takes any value; the others select
    kernels or graphs minitorch does not have, and only their off values are accepted."""
    for name, value in flags.items():
        if name == "foreach":
            if value is not None:
                as_bool(value, op, "foreach")
        elif value:  # fused / capturable / differentiable
            raise ValueError(
                f"{op}: {name}={value!r} is not supported (minitorch has no {name} "
                f"implementation); leave {name} at its default"
            )
    return flags


def check_common(op: str, group: dict[str, Any]) -> None:
    """The hyper-parameters SGD and Adam share: lr, weight_decay, maximize."""
    as_number(group["lr"], op, "lr", low=0)
    as_number(group["weight_decay"], op, "weight_decay", low=0)
    as_bool(group["maximize"], op, "maximize")
