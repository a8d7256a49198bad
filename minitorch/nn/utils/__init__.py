"""``nn.utils``: gradient clipping (packed sequences for the recurrent layers: ``nn.utils.rnn``)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...autograd import no_grad
from ...checks import as_number, as_tensor, describe
from ...creation import tensor
from ...ops import maximum, minimum, stack
from ...tensor import Tensor


def _grads(parameters: Iterable[Tensor] | Tensor, op: str) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    if not isinstance(parameters, Iterable):
        raise TypeError(
            f"{op}: parameters must be a Tensor or an iterable of Tensors, but got "
            f"{describe(parameters)}"
        )
    parameters = list(parameters)
    for i, p in enumerate(parameters):
        as_tensor(p, op, f"parameters[{i}]")
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
) -> Tensor:
    """Scale all gradients together so that their joint norm is at most ``max_norm``.

    Returns the total norm before clipping. A NaN/inf norm raises when
    ``error_if_nonfinite`` is set; otherwise the gradients are scaled by it (becoming
    NaN), exactly as PyTorch does, so that a training loop can notice and skip the step.
    """
    if isinstance(max_norm, (int, float)) and not max_norm >= 0:
        raise ValueError(f"clip_grad_norm_: max_norm must be non-negative, got {max_norm}")
    as_number(max_norm, "clip_grad_norm_", "max_norm", low=0, finite=False)  # inf: measure only
    if not (isinstance(norm_type, (int, float)) and math.isinf(norm_type)):
        as_number(norm_type, "clip_grad_norm_", "norm_type", low=0, low_open=True)
    grads = _grads(parameters, "clip_grad_norm_")
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max() for g in grads]
            total = stack([n.to(grads[0].dtype) for n in norms]).max()
        else:
            norms = [(g.abs() ** norm_type).sum() ** (1.0 / norm_type) for g in grads]
            total = (stack(norms) ** norm_type).sum() ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        # min() keeps a NaN coefficient, so NaN gradients stay visible, as in PyTorch
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    as_number(clip_value, "clip_grad_value_", "clip_value", low=0, finite=False)
    with no_grad():
        for g in _grads(parameters, "clip_grad_value_"):
            g.copy_(minimum(maximum(g, -clip_value), clip_value))
