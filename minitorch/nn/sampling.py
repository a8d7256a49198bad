"""Resampling: ``F.interpolate`` (nearest, linear, bilinear, trilinear) and adaptive
average pooling (``F.adaptive_avg_pool2d``), written with minitorch ops, so autograd
differentiates them.

Both work one spatial dim at a time. Interpolation reads, for each output position, the
input position PyTorch maps it to: ``src = dst * scale`` rounded down for nearest;
``src = (dst + 0.5) * scale - 0.5`` (clamped at 0) for the linear modes, or
``src = dst * (in - 1) / (out - 1)`` with ``align_corners=True``, and blends the two
neighbours ``floor(src)`` and ``floor(src) + 1`` by the fraction. ``scale`` is
``in / out``, or ``1 / scale_factor`` when a scale factor is given. Adaptive pooling
averages window ``[floor(i n / out), ceil((i + 1) n / out))``: a matrix product with a
matrix of window weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..checks import as_tensor
from ..creation import tensor
from ..tensor import Tensor

#: The modes and the input dims (batch and channels included) each one takes.
_MODES = {"nearest": (3, 4, 5), "linear": (3,), "bilinear": (4,), "trilinear": (5,)}


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of an (N, C, ...) input to ``size`` or by ``scale_factor``."""
    isinstance(input, Tensor) or as_tensor(input, "interpolate")
    if mode not in _MODES:
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not supported; minitorch has "
            f"{', '.join(repr(m) for m in _MODES)}"
        )
    if input.ndim not in _MODES[mode]:
        raise ValueError(
            f"interpolate: mode {mode!r} expects a {'-d or '.join(map(str, _MODES[mode]))}-d "
            f"input (batch, channels, then spatial dims), but got shape {input.shape}"
        )
    if align_corners is not None and mode == "nearest":
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"interpolate: expected a floating point input, but got dtype {input.dtype.name}"
        )
    spatial = input.shape[2:]
    out_sizes, scales = _output_sizes(spatial, size, scale_factor, recompute_scale_factor)
    out = input
    for k, (n, m, scale) in enumerate(zip(spatial, out_sizes, scales, strict=True)):
        dim = 2 + k
        if mode == "nearest":
            out = _pick(out, dim, _nearest_index(n, m, scale))
        else:
            low, high, frac = _linear_index(n, m, scale, bool(align_corners))
            shape = [1] * out.ndim
            shape[dim] = m
            weight = tensor(frac, dtype=out.dtype, device=out.device).reshape(shape)
            out = _pick(out, dim, low) * (1.0 - weight) + _pick(out, dim, high) * weight
    return out


def _output_sizes(
    spatial: tuple, size: Any, scale_factor: Any, recompute: bool | None
) -> tuple[list[int], list[float | None]]:
    """The output sizes and, per dim, the scale that maps output to input positions
    (None: ``in / out``)."""
    dims = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(
            "only one of size or scale_factor should be defined"
            if size is not None
            else "either size or scale_factor should be defined"
        )
    if size is not None:
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * dims
        if len(sizes) != dims:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(spatial)} and output size of {size}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                "in (o1, o2, ...,oK) format."
            )
        if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes):
            raise ValueError(f"interpolate: size must hold positive ints, but got {size!r}")
        return [int(s) for s in sizes], [None] * dims
    factors = (
        list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * dims
    )
    if len(factors) != dims:
        raise ValueError(
            f"Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(spatial)} and scale_factor of "
            f"{scale_factor}."
        )
    if any(isinstance(f, bool) or not isinstance(f, (int, float)) or f <= 0 for f in factors):
        raise ValueError(f"interpolate: scale_factor must be positive, but got {scale_factor!r}")
    sizes = [math.floor(n * f) for n, f in zip(spatial, factors, strict=True)]
    if any(s < 1 for s in sizes):
        raise ValueError(
            f"interpolate: scale_factor {scale_factor} makes an empty output from spatial "
            f"size {list(spatial)}"
        )
    scales = [None if recompute else 1.0 / f for f in factors]
    return sizes, scales


def _pick(x: Tensor, dim: int, index: np.ndarray) -> Tensor:
    """``x`` at positions ``index`` along ``dim`` (a gather that autograd scatters back)."""
    return x[(slice(None),) * dim + (index,)]


def _nearest_index(n: int, m: int, scale: float | None) -> np.ndarray:
    step = n / m if scale is None else scale
    return np.minimum(np.floor(np.arange(m) * step).astype(np.int64), n - 1)


def _linear_index(
    n: int, m: int, scale: float | None, align_corners: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dst = np.arange(m, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m)
    else:
        step = n / m if scale is None else scale
        src = np.maximum((dst + 0.5) * step - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), n - 1)
    high = np.minimum(low + 1, n - 1)
    return low, high, src - low


# --- adaptive average pooling ---------------------------------------------------------------
def adaptive_output_size(output_size: Any, spatial: tuple[int, int]) -> tuple[int, int]:
    """``output_size`` (an int, or a pair whose None entries keep the input size), checked."""
    pair = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    if len(pair) != 2:
        raise ValueError(
            f"adaptive_avg_pool2d: output_size must be an int or a pair, got {output_size!r}"
        )
    out = []
    for value, n in zip(pair, spatial, strict=True):
        if value is None:
            out.append(n)
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(
                f"adaptive_avg_pool2d: output_size must hold positive ints or None, got "
                f"{output_size!r}"
            )
        else:
            out.append(int(value))
    return out[0], out[1]


def _window_matrix(n: int, m: int) -> np.ndarray:
    """(m, n): row i averages input positions ``[floor(i n / m), ceil((i + 1) n / m))``."""
    weights = np.zeros((m, n))
    for i in range(m):
        start, end = (i * n) // m, -((-(i + 1) * n) // m)
        weights[i, start:end] = 1.0 / (end - start)
    return weights


def adaptive_avg_pool2d(x: Tensor, output_size: Any) -> Tensor:
    """Average a (N, C, H, W) or (C, H, W) input down to ``output_size`` windows."""
    isinstance(x, Tensor) or as_tensor(x, "adaptive_avg_pool2d")
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d: expected a 3-d or 4-d input, but got shape {x.shape}"
        )
    h, w = x.shape[-2:]
    oh, ow = adaptive_output_size(output_size, (h, w))
    if (oh, ow) == (1, 1):
        return x.mean((-2, -1), keepdim=True)
    rows = tensor(_window_matrix(h, oh), dtype=x.dtype, device=x.device)
    cols = tensor(_window_matrix(w, ow).T, dtype=x.dtype, device=x.device)
    return ops.matmul(ops.matmul(rows, x), cols)
