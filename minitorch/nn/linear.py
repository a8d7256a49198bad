"""Linear, Identity and Flatten."""

from __future__ import annotations

from ..creation import empty
from ..shape import as_size
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """``y = x @ W.T + b`` with W of shape (out_features, in_features), PyTorch's init."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, dtype=None, device=None
    ):
        super().__init__()
        self.in_features = as_size(in_features, "Linear", "in_features")
        self.out_features = as_size(out_features, "Linear", "out_features")
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
