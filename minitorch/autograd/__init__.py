"""Automatic differentiation: the backward engine and everything around it.

- ``grad_mode``: ``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` switch recording off/on.
- ``engine``: ``backward`` and ``grad`` walk the recorded graph in dependency order.
- ``anomaly``: ``detect_anomaly`` points a NaN in backward at the forward line behind it.
- ``gradcheck``: compares analytic gradients with finite differences.

- ``graph``: the backward graph (``Node``, ``AccumulateGrad``, saved tensors), as
  ``torch.autograd.graph``.
- ``history``: the layer of ``Function.apply`` that records each op in the graph.
- ``variable``: ``Variable``, PyTorch's deprecated alias that returns a Tensor.

Importing this package puts the recording layer on ``apply``'s stack.
"""

from ..function import Context
from ..function import Function as _Function
from ..ops import unbroadcast
from . import history  # noqa: F401  (importing it puts the recording layer on the stack)
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad, queue_callback
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import AccumulateGrad, Node
from .variable import Variable


class Function(_Function):
    """PyTorch's ``torch.autograd.Function``: a custom op whose ``forward(ctx, *inputs)``
    and ``backward(ctx, *grads)`` both take and return Tensors, called as ``Fn.apply``.

    (``minitorch.Function``, the base of minitorch's own ops, gives ``forward`` the raw
    arrays: chapter 02 builds the ops that way. Here forward gets Tensors that record
    nothing, so it may call any Tensor method; the graph sees one node, this op.)
    """

    tensors_in = True


__all__ = [
    "AccumulateGrad",
    "Context",
    "Function",
    "GradcheckError",
    "Node",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "inference_mode",
    "is_inference_mode_enabled",
    "gradgradcheck",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "queue_callback",
    "set_detect_anomaly",
    "set_grad_enabled",
    "unbroadcast",
    "Variable",
]
