"""Lazy modules: layers that learn their input size from their first input.

``LazyLinear(10)`` does not know its ``in_features`` until it sees a batch, so its weight
starts as an ``UninitializedParameter``: a Parameter with no shape yet. The first call
runs a forward pre-hook that reads the input's size, gives every uninitialised parameter
and buffer its storage (``materialize``), runs the layer's usual init, and turns the module
into the ordinary layer (``LazyLinear`` becomes ``Linear``), as in PyTorch.

The optimizer-before-first-call pitfall: ``materialize`` fills in the *same* Parameter
object (``set_``, as PyTorch's ``param.data = ...``), so an optimizer built from
``parameters()`` before the first call holds the real weights afterwards and steps them
(optimizers create their per-parameter state at the first step, after the shapes are
known). Loading a state_dict before the first call gives the uninitialised tensors the
checkpoint's shapes (``Module.load_state_dict``), as in PyTorch. What does not work before
the first call, here as in PyTorch, is anything else that needs the shapes: counting
parameters or copying them.
"""

from __future__ import annotations

from typing import Any

from ..autograd import no_grad
from ..creation import tensor
from ..dtypes import int64
from ..tensor import Tensor
from .conv import Conv2d
from .linear import Linear
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from .parameter import UninitializedBuffer, UninitializedParameter


def _uninitialized(t: Any) -> bool:
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


def _infer_parameters(module: LazyModuleMixin, args: tuple) -> None:
    """The forward pre-hook of a lazy module: materialise from the first input, then
    become the ordinary layer."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(
            f"module {type(module).__name__} has not been fully initialized by its first input"
        )
    module._initialize_hook.remove()
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Mixed in before a layer class: its parameters wait for the first input."""

    cls_to_become: type[Module] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        own = list(self._parameters.values()) + list(self._buffers.values())
        return any(_uninitialized(t) for t in own)

    def initialize_parameters(self, *args: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.initialize_parameters")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:  # noqa: A002
        self.in_features = input.shape[-1]  # (also after a state_dict gave the shapes)
        if self.has_uninitialized_params():
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class LazyConv2d(LazyModuleMixin, Conv2d):
    """A Conv2d whose ``in_channels`` is the channel dim of its first input."""

    cls_to_become = Conv2d

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, 1, False, padding_mode)
        self.groups = groups
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:  # noqa: A002
        self.in_channels = input.shape[1] if input.ndim == 4 else input.shape[0]
        if self.has_uninitialized_params():
            if self.in_channels % self.groups or self.out_channels % self.groups:
                raise ValueError(
                    f"LazyConv2d: in_channels ({self.in_channels}) and out_channels "
                    f"({self.out_channels}) must be divisible by groups ({self.groups})"
                )
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))

    def reset_parameters(self) -> None:
        """PyTorch's BatchNorm init: weight 1, bias 0, running mean 0 and variance 1."""
        with no_grad():
            if self.track_running_stats:
                self.running_mean.fill_(0.0)
                self.running_var.fill_(1.0)
                self.num_batches_tracked.fill_(0)
            if self.affine:
                self.weight.fill_(1.0)
                self.bias.fill_(0.0)

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:  # noqa: A002
        self.num_features = input.shape[1]
        if self.has_uninitialized_params():
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if _uninitialized(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm2d
