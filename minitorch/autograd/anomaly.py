"""Anomaly mode: remember where each node was created, and fail fast on NaN/inf gradients.

Inside ``detect_anomaly()``, every recorded node keeps the stack of the forward call that
made it. If a backward formula then returns NaN or inf, the engine raises an error that
names the node *and* shows that forward line, which is usually where the bug is
(``log(0)``, ``sqrt(0)``, a division by a value that underflowed).
"""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any

from .grad_mode import _GradModeManager


class _AnomalyState(threading.local):
    enabled = False


_state = _AnomalyState()

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OPS_DIR = os.path.join(_PACKAGE, "ops") + os.sep
_DISPATCH_FILES = {os.path.join(_PACKAGE, name) for name in ("function.py", "tensor.py")}


def is_anomaly_enabled() -> bool:
    return _state.enabled


class detect_anomaly(_GradModeManager):  # noqa: N801 - PyTorch's name
    """Context manager / decorator that turns anomaly detection on (it slows everything)."""

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class set_detect_anomaly(_GradModeManager):  # noqa: N801 - PyTorch's name
    """``set_detect_anomaly(True)`` switches at once; as a ``with`` block it restores on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __call__(self, fn: Any) -> Any:
        _state.enabled = self.prev
        return super().__call__(fn)

    def _clone(self) -> set_detect_anomaly:
        return set_detect_anomaly(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


def forward_trace() -> list[str]:
    """The current stack without the dispatch frames on top (ops, ``Function.apply``)."""
    frames = traceback.extract_stack()[:-1]
    while frames and _is_dispatch(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames[-8:])


def _is_dispatch(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_OPS_DIR) or path in _DISPATCH_FILES
