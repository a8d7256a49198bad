"""The switches every op consults, in one leaf module that imports nothing of minitorch.

``Function.apply`` reads them on every call, so they live where anything can import them
without an import cycle: grad mode (chapter 02), anomaly mode (chapter 02), autocast
(chapter 04), and the hooks later chapters add to ``apply`` (the tracer of chapter 05 is
one). Grad, anomaly and autocast state are thread-local, as in PyTorch: ``no_grad()`` in one
thread leaves the others recording.
"""

from __future__ import annotations

import os
import threading
import traceback


class _GradState(threading.local):
    enabled = True  # every new thread starts with grad mode on


class _AnomalyState(threading.local):
    enabled = False


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtypes: dict = {}  # device type -> the low-precision dtype; absent: autocast off
        self.cache_enabled = True
        self.depth = 0  # how many autocast regions are open
        self.cache: dict = {}  # id(weight) -> (weight, version, dtype, its cast)


#: ``grad.enabled``: whether ``Function.apply`` records graph nodes.
grad = _GradState()
#: ``anomaly.enabled``: whether nodes keep their forward stack and backward checks for NaN.
anomaly = _AnomalyState()
#: ``autocast.dtypes``: where ``Function.apply`` casts inputs by the autocast policy.
autocast = _AutocastState()
#: Observers of ``Function.apply``: ``hook(function, args, kwargs, output)`` after each op.
#: Filled through ``minitorch.function.register_apply_hook``; empty costs one check per op.
apply_hooks: dict = {}
#: Observers of tensor -> Python conversions (``item()``, ``bool(t)``, ``float(t)``, ``int(t)``,
#: ``tolist()``, ``numpy()``): ``hook(tensor, kind, result)``. Chapter 05's tracer warns there.
conversion_hooks: dict = {}


# --- anomaly mode: where was this node made? ---------------------------------------------
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_OPS_DIR = os.path.join(_PACKAGE, "ops") + os.sep
_DISPATCH_FILES = {os.path.join(_PACKAGE, name) for name in ("function.py", "tensor.py")}


def forward_trace() -> list[str]:
    """The current stack without the dispatch frames on top (ops, ``Function.apply``)."""
    frames = traceback.extract_stack()[:-1]
    while frames and _is_dispatch(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames[-8:])


def _is_dispatch(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_OPS_DIR) or path in _DISPATCH_FILES
