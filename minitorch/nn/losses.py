"""Two more losses in PyTorch's forms, and ``one_hot`` (``nn.functional`` re-exports them):

- ``binary_cross_entropy``: the loss of probabilities (after a sigmoid), with PyTorch's
  guards: each log is clamped at -100, so a probability of exactly 0 or 1 costs 100, not
  infinity, and the gradient divides by ``max(p (1 - p), 1e-12)``;
- ``smooth_l1_loss``: squared error below ``beta``, absolute error above it (Huber's
  shape, scaled by ``1/beta``); ``beta=0`` is the L1 loss;
- ``one_hot``: class indices to rows of 0s with a 1 at the index.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..backend import array_module_of
from ..checks import as_number, as_reduction, as_tensor
from ..creation import arange
from ..function import Context, Function
from ..ops.registry import register
from ..tensor import Tensor

#: The clamp PyTorch puts under each log of binary_cross_entropy (log 0 would be -inf).
LOG_FLOOR = -100.0
#: The floor of ``p (1 - p)`` in binary_cross_entropy's gradient.
GRAD_EPS = 1e-12


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))`` per element (each log at least -100), times
    ``weight``, then reduced. ``input`` holds probabilities in [0, 1]."""
    op = "binary_cross_entropy"
    as_tensor(input, op), as_tensor(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, op)
    if target.shape != input.shape:
        raise ValueError(
            f"{op}: using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"{op}: found dtype {target.dtype} for the target but expected {input.dtype}, the "
            "input's (pass target.to(input.dtype))"
        )
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: input must be floating point, but got {input.dtype}")
    if input.numel() and ((input < 0) | (input > 1)).any().item():
        raise RuntimeError(
            f"{op}: all elements of input should be between 0 and 1 (shape {input.shape}); "
            "for logits use binary_cross_entropy_with_logits"
        )
    if weight is not None:
        as_tensor(weight, op, "weight")
        weight = weight.expand(input.shape)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def reduce_loss(loss: Tensor, reduction: str, op: str) -> Tensor:
    """A loss per element, reduced as ``reduction`` says ('mean', 'sum' or 'none')."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str, op: str) -> str:
    """The old ``size_average``/``reduce`` flags, as PyTorch still reads them."""
    if size_average is None and reduce is None:
        return as_reduction(reduction, op)
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


class BinaryCrossEntropy(Function):
    """Binary cross entropy of probabilities as one op (``BinaryCrossEntropyBackward0``).
    Backward: ``d/dp = w (p - t) / max(p (1 - p), 1e-12)`` and ``d/dt = -w logit(p)``
    (unclamped: infinite at 0 and 1); ``weight`` gets no gradient, as in PyTorch."""

    name = "binary_cross_entropy"

    @staticmethod
    def forward(input: Any, target: Any, weight: Any, reduction: str) -> Any:
        m = array_module_of(input)
        with m.errstate(divide="ignore"):
            log_p = m.maximum(m.log(input), LOG_FLOOR)
            log_q = m.maximum(m.log1p(-input), LOG_FLOOR)
        loss = -(target * log_p + (1 - target) * log_q)
        if weight is not None:
            loss = loss * weight
        loss = loss.astype(input.dtype)
        if reduction == "none":
            return loss
        total = loss.mean() if reduction == "mean" else loss.sum()
        return m.asarray(total).astype(input.dtype)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        input, target, weight, ctx.reduction = inputs
        ctx.save_for_backward(input, target, weight)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        p, t, weight = ctx.saved_tensors
        need_p, need_t = ctx.needs_input_grad[:2]
        if ctx.reduction == "mean":
            grad = grad / max(p.numel(), 1)
        if weight is not None:
            grad = grad * weight
        grad_p = grad * (p - t) / ops.clamp((1 - p) * p, min=GRAD_EPS) if need_p else None
        grad_t = -grad * ops.log(p / (1 - p)) if need_t else None  # -logit(p), unclamped
        return grad_p, grad_t, None, None


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``), reduced; ``beta=0`` is the L1 loss ``|d|``."""
    op = "smooth_l1_loss"
    as_tensor(input, op), as_tensor(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, op)
    as_number(beta, op, "beta", low=0.0)
    if target.shape != input.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    if beta == 0.0:  # PyTorch computes the L1 loss then: no division by beta
        return reduce_loss(ops.abs(input - target), reduction, op)
    return SmoothL1Loss.apply(input, target, reduction, beta)


def _smooth_l1(input: Tensor, target: Tensor, reduction: str, beta: float) -> Tensor:
    d = input - target
    size = ops.abs(d)
    loss = ops.where(size < beta, 0.5 * d * d / beta, size - 0.5 * beta)
    return reduce_loss(loss, reduction, "smooth_l1_loss")


class SmoothL1Loss(Function):
    """A composite: one op for ``apply``'s layers (autocast runs it in float32), computed by
    the ops ``_smooth_l1`` calls (autograd differentiates those)."""

    name = "smooth_l1_loss"
    kind = "composite"
    forward = staticmethod(_smooth_l1)


register(BinaryCrossEntropy, SmoothL1Loss)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Rows of ``num_classes`` zeros (int64) with a 1 at each index of ``tensor`` (an int64
    tensor); ``num_classes=-1`` takes the largest index plus one."""
    op = "one_hot"
    as_tensor(tensor, op)
    if tensor.dtype.name != "int64":
        raise RuntimeError(
            f"one_hot is only applicable to index tensor of type LongTensor (int64), but got "
            f"{tensor.dtype}"
        )
    as_number(num_classes, op, "num_classes", integer=True)
    if num_classes < -1:
        raise RuntimeError(f"one_hot: num_classes should be -1 or non-negative, got {num_classes}")
    if tensor.numel():
        low, high = tensor.min().item(), tensor.max().item()
        if low < 0:
            raise RuntimeError(f"one_hot: class values must be non-negative, but found {low}")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise RuntimeError(
                f"one_hot: class values must be smaller than num_classes ({num_classes}), "
                f"but found {high}"
            )
    elif num_classes == -1:
        raise RuntimeError(
            "one_hot: can not infer the total number of classes from an empty tensor; "
            "pass num_classes"
        )
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).long()
