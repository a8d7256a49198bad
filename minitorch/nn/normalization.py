"""BatchNorm1d/2d (running statistics, momentum, eval mode) and LayerNorm."""

from __future__ import annotations

from ..checks import as_number
from ..creation import ones, tensor, zeros
from ..dtypes import int64
from ..shape import as_size, as_sizes
from ..tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    _expected_dims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
    ):
        super().__init__()
        name = type(self).__name__
        num_features = as_size(num_features, name, "num_features")
        as_number(eps, name, "eps", low=0.0)
        if momentum is not None:
            as_number(momentum, name, "momentum", low=0.0, high=1.0)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features))
            if bias:
                self.bias = Parameter(zeros(num_features))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features))
            self.register_buffer("running_var", ones(num_features))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self._expected_dims:
            raise ValueError(
                f"{type(self).__name__}: expected {' or '.join(map(str, self._expected_dims))}-d "
                f"input, got shape {x.shape}"
            )
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected {self.num_features} channels in dim 1, got "
                f"shape {x.shape}"
            )
        if self.training and x.numel() // max(x.shape[1], 1) <= 1:  # before counting the batch
            raise ValueError(  # (F.batch_norm's words: the lesson shows this error)
                f"batch_norm: expected more than 1 value per channel when training, "
                f"got input of shape {x.shape}"
            )
        use_batch_stats = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        return F.batch_norm(
            x,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.weight,
            self.bias,
            use_batch_stats,
            self.momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs, one mean and variance per channel."""

    _expected_dims = (4,)


class LayerNorm(Module):
    """Normalise each sample over its last dims (no batch statistics, same in train and eval)."""

    def __init__(
        self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias=True
    ):
        super().__init__()
        normalized_shape = as_sizes((normalized_shape,), "LayerNorm")
        as_number(eps, "LayerNorm", "eps", low=0.0)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        self._has_bias = bias
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self._has_bias}"
        )
