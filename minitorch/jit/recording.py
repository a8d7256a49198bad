"""Which tracer records this thread's ops: ``record`` pushes its tracer here while the traced
code runs, so a scripted module called inside a trace can record its own graph (control flow
included) instead of the ops one run of it took."""

from __future__ import annotations

import threading
from typing import Any

_ACTIVE = threading.local()


def current_tracer() -> Any:
    """The tracer recording this thread's ops (None when no trace is running)."""
    stack = getattr(_ACTIVE, "stack", None)
    return stack[-1] if stack else None


def push(tracer: Any) -> None:
    _ACTIVE.__dict__.setdefault("stack", []).append(tracer)


def pop(tracer: Any) -> None:
    _ACTIVE.stack.remove(tracer)
