"""``Dropout2d``: drop whole channels, not single activations.

Neighbouring pixels of a feature map are strongly correlated, so dropping single pixels
barely regularises a convolutional network: the others carry the same signal. Dropout2d
zeros each (sample, channel) map entirely with probability ``p`` and scales the kept ones
by ``1 / (1 - p)``, so the expected activation is unchanged; in eval mode it does nothing.
"""

from __future__ import annotations

from .. import ops
from ..checks import as_bool, as_number
from ..creation import rand
from ..tensor import Tensor
from .module import Module


def dropout2d(
    input: Tensor,  # noqa: A002 - PyTorch's name
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
) -> Tensor:
    """Zero each channel of (N, C, H, W) or (C, H, W) with probability ``p``; scale the rest."""
    op = "dropout2d"
    if isinstance(p, (int, float)) and not isinstance(p, bool) and not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    as_number(p, op, "p", low=0.0, high=1.0)
    if not isinstance(input, Tensor) or input.ndim not in (3, 4):
        shape = input.shape if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got {shape}")
    if not training or p == 0.0:
        return input
    # (PyTorch reads a 3-d input as (N, C, L) for now, with a warning: channels are dim 1)
    channels = input.shape[:2] + (1,) * (input.ndim - 2)
    keep = (rand(*channels, device=input.device) >= p).to(input.dtype)
    out = input * keep * (1.0 / (1.0 - p)) if p < 1.0 else input * 0.0
    return ops.copy_(input, out) if inplace else out


class Dropout2d(Module):
    """Zeros whole channels at random in training mode (see the module's docstring)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, (int, float)) and not isinstance(p, bool) and not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = as_number(p, "Dropout2d", "p", low=0.0, high=1.0)
        self.inplace = as_bool(inplace, "Dropout2d", "inplace")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout2d(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
