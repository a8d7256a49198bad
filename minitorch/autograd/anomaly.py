"""Anomaly mode: remember where each node was created, and fail fast on NaN/inf gradients.

Inside ``detect_anomaly()``, every recorded node keeps the stack of the forward call that
made it. If a backward formula then returns NaN or inf, the engine raises an error that
names the node *and* shows that forward line, which is usually where the bug is
(``log(0)``, ``sqrt(0)``, a division by a value that underflowed).
"""

from __future__ import annotations

from typing import Any

from ..checks import as_bool
from ..state import anomaly, forward_trace  # noqa: F401 - re-exported
from .grad_mode import _GradModeManager

_state = anomaly  # the thread-local switch, kept in the leaf module minitorch.state


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
        self.mode = as_bool(mode, "set_detect_anomaly", "mode")
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
