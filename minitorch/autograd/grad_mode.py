"""Grad mode: whether ``Function.apply`` records graph nodes.

The switch is thread-local, as in PyTorch: ``no_grad()`` in one thread leaves the others
recording. Each manager works as a context manager and as a decorator::

    with minitorch.no_grad():
        y = model(x)          # no graph is built

    @minitorch.no_grad()      # or @minitorch.no_grad
    def evaluate(model, x): ...
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from ..checks import as_bool
from ..state import grad

_state = grad  # the thread-local switch, kept in the leaf module minitorch.state


def is_grad_enabled() -> bool:
    """True when ops record the backward graph."""
    return _state.enabled


class _GradModeManager:
    """Shared decorator logic: ``@manager()`` runs the function inside a fresh manager."""

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self) -> _GradModeManager:
        return type(self)()


class _NoParamManager(_GradModeManager):
    """Also allows the bare form: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamManager):  # noqa: N801 - PyTorch's name
    """Turn graph recording off inside the block (inference, optimizer updates)."""

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class enable_grad(_NoParamManager):  # noqa: N801 - PyTorch's name
    """Turn graph recording back on inside a ``no_grad`` block."""

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class set_grad_enabled(_GradModeManager):  # noqa: N801 - PyTorch's name
    """``set_grad_enabled(False)`` switches at once; as a ``with`` block it restores on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.enabled
        self.mode = as_bool(mode, "set_grad_enabled", "mode")
        _state.enabled = self.mode

    def __call__(self, fn: Callable) -> Callable:
        _state.enabled = self.prev  # as a decorator, it must not switch at definition time
        return super().__call__(fn)

    def _clone(self) -> set_grad_enabled:
        return set_grad_enabled(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class inference_mode(_GradModeManager):  # noqa: N801 - PyTorch's name
    """``no_grad`` for inference (PyTorch's faster variant; here the same switch):
    ``inference_mode()`` or ``inference_mode(False)``, as a block or a decorator."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # the bare decorator: @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = as_bool(mode, "inference_mode", "mode")

    def _clone(self) -> inference_mode:
        return inference_mode(self.mode)

    def __enter__(self) -> None:
        self.prev, self.prev_inference = _state.enabled, _inference.enabled
        if self.mode:
            _state.enabled = False
        _inference.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        _state.enabled, _inference.enabled = self.prev, self.prev_inference


class _InferenceState(threading.local):
    enabled = False


_inference = _InferenceState()


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block."""
    return _inference.enabled
