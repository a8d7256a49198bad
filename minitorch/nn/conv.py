"""Conv2d (im2col + one matmul), MaxPool2d, AvgPool2d and Embedding."""

from __future__ import annotations

from ..autograd import no_grad
from ..creation import empty
from ..shape import as_size
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Conv2d(Module):
    """2-d convolution with stride, padding and dilation; PyTorch's default init."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.in_channels = as_size(in_channels, "Conv2d", "in_channels")
        self.out_channels = as_size(out_channels, "Conv2d", "out_channels")
        self.kernel_size = F._pair(kernel_size, "Conv2d", "kernel_size", least=1)
        self.stride, self.padding, self.dilation = (
            F._pair(stride, "Conv2d", "stride", least=1),
            F._pair(padding, "Conv2d", "padding"),
            F._pair(dilation, "Conv2d", "dilation", least=1),
        )
        self.groups = as_size(groups, "Conv2d", "groups")
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                f"be divisible by groups ({groups})"
            )
        _only_default("Conv2d", "padding_mode", padding_mode, "zeros")
        self.padding_mode = padding_mode
        factory = dict(dtype=dtype, device=device)
        self.weight = Parameter(
            empty(out_channels, in_channels // groups, *self.kernel_size, **factory)
        )
        if bias:
            self.bias = Parameter(empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        return conv_extra_repr(self)


class _Pool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        name = type(self).__name__
        stride = kernel_size if stride is None else stride  # (stride=0 is an error, not None)
        F._pair(kernel_size, name, "kernel_size", least=1)
        F._pair(stride, name, "stride", least=1)
        F._pair(padding, name, "padding")
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _only_default(name: str, option: str, value: object, default: object) -> None:
    """PyTorch's pooling options minitorch does not have: only their default is accepted."""
    if value != default:
        raise NotImplementedError(
            f"{name}: {option}={value!r} is not supported (only {option}={default!r})"
        )


class MaxPool2d(_Pool2d):
    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__(kernel_size, stride, padding)
        for option, value, default in (
            ("dilation", dilation, 1),
            ("return_indices", return_indices, False),
            ("ceil_mode", ceil_mode, False),
        ):
            _only_default("MaxPool2d", option, value, default)
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool2d(_Pool2d):
    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__(kernel_size, stride, padding)
        for option, value, default in (
            ("ceil_mode", ceil_mode, False),
            ("count_include_pad", count_include_pad, True),
            ("divisor_override", divisor_override, None),
        ):
            _only_default("AvgPool2d", option, value, default)

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed ``output_size`` (an int, or a pair whose None entries
    keep the input's size): window ``i`` of ``out`` along a dim of ``n`` covers
    ``[floor(i n / out), ceil((i + 1) n / out))``, as in PyTorch."""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size
        F.adaptive_output_size(output_size, (1, 1))  # (checks it)

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` is the vector for token ``i``."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None):
        super().__init__()
        self.num_embeddings = as_size(num_embeddings, "Embedding", "num_embeddings")
        self.embedding_dim = as_size(embedding_dim, "Embedding", "embedding_dim")
        if padding_idx is not None:
            as_size(padding_idx, "Embedding", "padding_idx", allow_negative=True)
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), "
                    f"got {padding_idx}"
                )
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.weight = Parameter(empty(num_embeddings, embedding_dim))
        init.normal_(self.weight)
        if padding_idx is not None:
            with no_grad():
                self.weight[padding_idx] = 0.0

    def forward(self, indices: Tensor) -> Tensor:
        return F.embedding(indices, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else text + f", padding_idx={self.padding_idx}"


def conv_extra_repr(conv: Module) -> str:
    """What a convolution's repr shows, as PyTorch's: the sizes, then each option that is
    not its default (``output_padding`` for a transposed one)."""
    text = (
        f"{conv.in_channels}, {conv.out_channels}, kernel_size={conv.kernel_size}, "
        f"stride={conv.stride}"
    )
    if conv.padding != (0, 0):
        text += f", padding={conv.padding}"
    if conv.dilation != (1, 1):
        text += f", dilation={conv.dilation}"
    if getattr(conv, "output_padding", (0, 0)) != (0, 0):
        text += f", output_padding={conv.output_padding}"
    if conv.groups != 1:
        text += f", groups={conv.groups}"
    if conv.bias is None:
        text += ", bias=False"
    return text
