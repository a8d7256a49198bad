"""``ConvTranspose2d`` (its functional form, ``F.conv_transpose2d``, sits beside ``Fold`` in
``nn.functional``): the adjoint of a convolution.

A convolution gathers each output pixel from a window of input pixels; its transpose
scatters each input pixel through the kernel into a window of the output, summing where
windows overlap. That is exactly col2im (``Fold``, the adjoint of im2col): one matrix
multiply turns every input pixel into its kernel-sized patch of columns, and Fold adds the
patches into the image, ``stride`` apart. So a stride-2 transposed convolution *upsamples*
(a DCGAN generator's layers), and its gradient is a plain convolution's forward.

``padding`` crops that many rows and columns from each side of the result (the inverse of
a convolution's padding), and ``output_padding`` adds rows/columns at the bottom/right to
pick one of the several sizes a strided convolution maps to the same input size.
"""

from __future__ import annotations

from typing import Any

from ..creation import empty
from ..shape import as_size
from ..tensor import Tensor
from . import functional as F
from . import init
from .conv import conv_extra_repr
from .module import Module
from .parameter import Parameter


class ConvTranspose2d(Module):
    """A transposed 2-d convolution (see the module's docstring); PyTorch's names and init."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = "ConvTranspose2d"
        self.in_channels = as_size(in_channels, name, "in_channels")
        self.out_channels = as_size(out_channels, name, "out_channels")
        self.groups = as_size(groups, name, "groups")
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                f"divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.padding_mode = padding_mode
        self.kernel_size = F._pair(kernel_size, name, "kernel_size", least=1)
        self.stride = F._pair(stride, name, "stride", least=1)
        self.padding = F._pair(padding, name, "padding")
        self.output_padding = F._pair(output_padding, name, "output_padding")
        self.dilation = F._pair(dilation, name, "dilation", least=1)
        factory = dict(dtype=dtype, device=device)
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, **factory))
        if bias:
            self.bias = Parameter(empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_layer_init_(self.weight, self.bias)  # fan_in = out/groups * kh * kw

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding_for(input, output_size)
        return F.conv_transpose2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )

    def _output_padding_for(self, input: Tensor, output_size: Any) -> tuple[int, int]:
        """The output_padding that gives ``output_size`` (its last two entries)."""
        wanted = tuple(output_size)[-2:]
        extra = []
        for i in range(2):
            smallest = (
                (input.shape[-2 + i] - 1) * self.stride[i]
                - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1)
                + 1
            )
            if not smallest <= wanted[i] < smallest + self.stride[i]:
                raise ValueError(
                    f"ConvTranspose2d: requested an output size of {wanted}, but valid sizes "
                    f"range from {smallest} to {smallest + self.stride[i] - 1} (for an input of "
                    f"{tuple(input.shape[-2:])})"
                )
            extra.append(wanted[i] - smallest)
        return extra[0], extra[1]

    def extra_repr(self) -> str:
        return conv_extra_repr(self)
