"""``GroupNorm``: normalise each sample over groups of channels.

BatchNorm's statistics come from the batch, so they are noisy for small batches and differ
between training and evaluation. GroupNorm splits the C channels into ``num_groups`` groups
and normalises each sample's group by its own mean and (biased) variance, over the group's
channels and all spatial positions: no batch statistics, the same in train and eval.
``num_groups=1`` is a LayerNorm over (C, H, W); ``num_groups=C`` is InstanceNorm. A learned
per-channel scale and shift follow (``affine``).
"""

from __future__ import annotations

from .. import ops
from ..checks import as_number
from ..creation import ones, zeros
from ..shape import as_size
from ..tensor import Tensor
from .module import Module
from .parameter import Parameter


def group_norm(
    input: Tensor,  # noqa: A002 - PyTorch's name
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise (N, C, *) over ``num_groups`` groups of channels, then scale and shift."""
    op = "group_norm"
    if not isinstance(input, Tensor) or input.ndim < 2:
        shape = input.shape if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{op}: expected an input of at least 2 dims (N, C, *), got {shape}")
    n, c = input.shape[:2]
    if num_groups < 1 or c % num_groups:
        raise RuntimeError(
            f"{op}: Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {input.shape} and num_groups={num_groups}"
        )
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    out = ((x - mean) / ops.sqrt(var + eps)).reshape(*input.shape)
    channel = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(*channel)
    if bias is not None:
        out = out + bias.reshape(*channel)
    return out


class GroupNorm(Module):
    """Group normalisation (see the module's docstring); PyTorch's names and init."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: object = None,
        dtype: object = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_groups = as_size(num_groups, "GroupNorm", "num_groups")
        self.num_channels = as_size(num_channels, "GroupNorm", "num_channels")
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.eps = as_number(eps, "GroupNorm", "eps", low=0.0)
        self.affine, self._has_bias = affine, bias
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim >= 2 and input.shape[1] != self.num_channels:
            raise RuntimeError(
                f"GroupNorm: expected {self.num_channels} channels in dim 1, got input of shape "
                f"{input.shape}"
            )
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self._has_bias and self.affine}"
        )
