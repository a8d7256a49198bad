"""``PixelShuffle`` / ``PixelUnshuffle``: trade channels for resolution and back.

``pixel_shuffle`` turns (*, C r^2, H, W) into (*, C, H r, W r): each group of r^2 channels
becomes an r x r block of pixels (sub-pixel convolution, the ESPCN upsampler). It is only a
reshape, a permutation of dims and a reshape, so its gradient is the inverse permutation;
``pixel_unshuffle`` is that inverse.
"""

from __future__ import annotations

from ..shape import as_size
from ..tensor import Tensor
from .module import Module


def _check(op: str, x: Tensor, factor: int) -> None:
    as_size(factor, op, "factor")
    if not isinstance(x, Tensor) or x.ndim < 3:
        shape = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise RuntimeError(f"{op}: expected an input of at least 3 dims (*, C, H, W), got {shape}")
    if factor < 1:
        raise RuntimeError(f"{op}: the factor must be positive, got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r) with r = ``upscale_factor``."""
    r = upscale_factor
    _check("pixel_shuffle", input, r)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    k = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W) with r = ``downscale_factor``."""
    r = downscale_factor
    _check("pixel_unshuffle", input, r)
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height and width to be divisible by downscale_factor, "
            f"but got input of shape {input.shape} and downscale_factor={r}"
        )
    k = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H, W)
    return x.reshape(*batch, c * r * r, h // r, w // r)


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = as_size(upscale_factor, "PixelShuffle", "upscale_factor")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = as_size(downscale_factor, "PixelUnshuffle", "downscale_factor")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
