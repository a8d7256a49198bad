"""The switches the core consults, in one leaf module that imports nothing of minitorch.

They live where anything can import them without an import cycle: grad mode and anomaly
mode (chapter 02), and the observers of tensor -> Python conversions. Grad and anomaly
state are thread-local, as in PyTorch: ``no_grad()`` in one thread leaves the others
recording. (Later chapters keep their own state with their layer: autocast's is in
``minitorch.amp``.)
"""

from __future__ import annotations

import os
import threading
import traceback


class _GradState(threading.local):
    enabled = True  # every new thread starts with grad mode on


class _AnomalyState(threading.local):
    enabled = False


#: ``grad.enabled``: whether ``Function.apply`` records graph nodes.
grad = _GradState()
#: ``anomaly.enabled``: whether nodes keep their forward stack and backward checks for NaN.
anomaly = _AnomalyState()
#: Observers of tensor -> Python conversions (``item()``, ``bool(t)``, ``float(t)``, ``int(t)``,
#: ``tolist()``, ``numpy()``): ``hook(tensor, kind, result)``. Chapter 05's tracer warns there.
conversion_hooks: dict = {}


# --- anomaly mode: where was this node made? ---------------------------------------------
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_OPS_DIR = os.path.join(_PACKAGE, "ops") + os.sep
#: The files of the dispatch machinery: ``Function.apply``, the tensor methods, and each
#: layer's module (``register_layer`` adds it). A node's forward trace starts below them.
dispatch_files = {os.path.join(_PACKAGE, name) for name in ("function.py", "tensor.py")}


def forward_trace() -> list[str]:
    """The current stack without the dispatch frames on top (ops, ``Function.apply``)."""
    frames = traceback.extract_stack()[:-1]
    while frames and _is_dispatch(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames[-8:])


def _is_dispatch(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_OPS_DIR) or path in dispatch_files
