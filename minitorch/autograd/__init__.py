"""Automatic differentiation: the backward engine and everything around it.

- ``grad_mode``: ``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` switch recording off/on.
- ``engine``: ``backward`` and ``grad`` walk the recorded graph in dependency order.
- ``anomaly``: ``detect_anomaly`` points a NaN in backward at the forward line behind it.
- ``gradcheck``: compares analytic gradients with finite differences.
- ``graph_figure``: ``draw_graph`` pictures a tensor's backward graph.

The graph itself is recorded by ``Function.apply`` (``minitorch/function.py``).
"""

from typing import Any

from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph_figure import draw_graph, graph_layout

__all__ = [
    "AccumulateGrad",
    "Context",
    "Function",
    "GradcheckError",
    "Node",
    "backward",
    "detect_anomaly",
    "draw_graph",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph_layout",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
    "unbroadcast",
]

_REEXPORTS = {
    "Function": ("..function", "Function"),
    "Context": ("..function", "Context"),
    "Node": ("..function", "Node"),
    "AccumulateGrad": ("..function", "AccumulateGrad"),
    "unbroadcast": ("..ops.elementwise", "unbroadcast"),
}


def __getattr__(name: str) -> Any:
    # minitorch.function imports this package (for grad mode), so the names it defines
    # are re-exported lazily rather than imported while it is still half-initialised.
    if name in _REEXPORTS:
        import importlib

        module, attr = _REEXPORTS[name]
        return getattr(importlib.import_module(module, __name__), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
