"""The dynamically quantized matmul: ``quantized::linear_dynamic`` as fbgemm computes it.

For each call, on float32 input ``x`` and an int8 weight ``W_q`` (scale ``s_w``, zero
point ``z_w``, per tensor or per output channel):

1. choose the input's quantization from its own range, ``[min(x), max(x)]``, mapped onto
   uint8 ``[0, 127]`` (``reduce_range``: fbgemm's int8 kernels add products in pairs
   into int16, and 7-bit activations keep those sums from overflowing): ``s_x``, ``z_x``;
2. quantize ``x``: ``x_q = clamp(round(x / s_x + z_x), 0, 255)`` (rounded as
   ``qtensor`` describes);
3. multiply the integers, summing in int32: ``acc = (x_q - z_x) @ (W_q - z_w).T``;
4. dequantize and add the float bias: ``y = acc * (s_x * s_w) + b``.

Step 3 runs on a float BLAS, not numpy's integer matmul (which has no BLAS and is tens of
times slower): every product and every partial sum is an integer, and float32 holds every
integer up to 2^24 exactly, so when ``K * max|x_q - z_x| * max|W_q - z_w|`` stays below
2^24 the float32 matmul computes exactly the int32 sums (float64, exact to 2^53, takes
over above that). Step 4 rounds once, as fbgemm's fused multiply-add does, so the output
is bit for bit PyTorch's on x86.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import array_module_of
from ..function import Context, Function
from ..ops.registry import register
from .qtensor import round_to_grid

#: fbgemm's smallest activation scale; smaller ones are raised to it.
SMALL_SCALE_THRESHOLD = float(np.float32(6.1e-5))


def choose_qparams(
    x_min: float, x_max: float, qmin: int = 0, qmax: int = 255, reduce_range: bool = True
) -> tuple[float, int]:
    """fbgemm's ``ChooseQuantizationParams``: ``(scale, zero_point)`` mapping the range
    ``[x_min, x_max]`` (widened to contain 0) onto ``[qmin, qmax]`` (one bit less with
    ``reduce_range``). The zero point is an integer, so 0.0 is represented exactly."""
    if not (math.isfinite(x_min) and math.isfinite(x_max)):
        raise ValueError(
            f"the input's range [{x_min}, {x_max}] is not finite (NaN or inf in the input), "
            "so it can't be quantized"
        )
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    low, high = np.float32(min(x_min, 0.0)), np.float32(max(x_max, 0.0))
    scale = (float(high) - float(low)) / (qmax - qmin)
    if np.float32(scale) == 0 or math.isinf(1.0 / float(np.float32(scale))):
        scale = 0.1
    if scale < SMALL_SCALE_THRESHOLD:
        original, scale = np.float32(scale), SMALL_SCALE_THRESHOLD
        if low == 0:
            high = np.float32(scale * (qmax - qmin))
        elif high == 0:
            low = np.float32(-scale * (qmax - qmin))
        else:
            amplifier = np.float32(SMALL_SCALE_THRESHOLD) / original
            low, high = low * amplifier, high * amplifier
    # the zero point from whichever end gives the smaller rounding error
    from_min, from_max = qmin - float(low) / scale, qmax - float(high) / scale
    error_min = abs(qmin) - abs(float(low) / scale)
    error_max = abs(qmax) - abs(float(high) / scale)
    initial = from_min if error_min < error_max else from_max
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(np.float32(scale)), zero_point


class LinearDynamic(Function):
    """``quantized::linear_dynamic(x, W_q, s_w, z_w, b)``: see the module docstring.
    Inference only, as in PyTorch: the output carries no gradient."""

    name = "linear_dynamic"
    differentiable = False

    @staticmethod
    def forward(
        ctx: Context,
        x: Any,
        weight: Any,
        weight_scale: Any,
        weight_zero_point: Any,
        bias: Any = None,
        reduce_range: bool = True,
    ) -> Any:
        xp = array_module_of(x)
        if x.dtype != xp.float32:
            raise TypeError(
                f"expected a float32 input, but got {x.dtype} (PyTorch's quantized kernels "
                "take float32 too); convert it with .float()"
            )
        out_features, in_features = weight.shape
        if x.ndim == 0 or x.shape[-1] != in_features:
            raise ValueError(
                f"input of shape {tuple(x.shape)} has {x.shape[-1] if x.ndim else 0} features "
                f"but the weight of shape {tuple(weight.shape)} expects {in_features}"
            )
        x_min, x_max = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
        scale, zero_point = choose_qparams(x_min, x_max, reduce_range=reduce_range)
        inverse = xp.asarray(xp.float32(1) / xp.float32(scale))
        x_q = round_to_grid(x, inverse, zero_point, 0, 255)
        w_zero = weight_zero_point.reshape(-1, 1)
        low, high = (-128, 127) if weight.dtype == xp.int8 else (0, 255)
        x_bound = max(zero_point, (127 if reduce_range else 255) + 1 - zero_point)
        w_bound = int(max(w_zero.max() - low, high - w_zero.min()))
        exact = xp.float32 if in_features * x_bound * w_bound <= 2**24 else xp.float64
        w_int = weight.astype(exact)
        if w_zero.any():
            w_int -= w_zero.astype(exact)
        acc = (x_q.astype(exact) - zero_point) @ w_int.T  # integers: the int32 sums
        multiplier = (xp.float32(scale) * weight_scale.astype(xp.float32)).reshape(-1)
        # the int32 sums become float32 (as fbgemm converts them), then one fused
        # multiply-add: the float64 product of two float32s is exact, so rounding once
        # at the end gives fbgemm's result
        out = acc.astype(xp.float32).astype(xp.float64) * multiplier.astype(xp.float64)
        if bias is not None:
            out += bias
        return out.astype(xp.float32)


register(LinearDynamic)
