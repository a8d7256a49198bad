"""Automatic differentiation: the backward engine and everything around it.

- ``grad_mode``: ``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` switch recording off/on.
- ``engine``: ``backward`` and ``grad`` walk the recorded graph in dependency order.
- ``anomaly``: ``detect_anomaly`` points a NaN in backward at the forward line behind it.
- ``gradcheck``: compares analytic gradients with finite differences.
- ``graph_figure``: ``draw_graph`` pictures a tensor's backward graph.

The graph itself is recorded by ``Function.apply`` (``minitorch/function.py``).
"""

from ..function import AccumulateGrad, Context, Function, Node
from ..ops import unbroadcast
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad, queue_callback
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
    "queue_callback",
    "set_detect_anomaly",
    "set_grad_enabled",
    "unbroadcast",
]
