"""Weight initialisation (``nn.init``), with PyTorch's names, formulas and defaults.

Each function fills a tensor in place, without recording autograd history, and
returns it. The scale of the initial weights decides whether signals (and gradients)
keep their size through many layers: that is what the fan-based formulas are for.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd import no_grad
from ..checks import as_tensor
from ..creation import randn
from ..creation import tensor as as_new_tensor
from ..random import Generator
from ..tensor import Tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which a nonlinearity changes a signal's standard deviation."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "sigmoid", "identity")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    as_tensor(tensor, "nn.init", "tensor")
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out need a tensor with at least 2 dims, got shape {tensor.shape}"
        )
    receptive = 1
    for size in tensor.shape[2:]:
        receptive *= size
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return max(fan_in if mode == "fan_in" else fan_out, 1)  # a zero-element weight: no-op


def _fill(tensor: Tensor, values: Tensor) -> Tensor:
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    as_tensor(tensor, "uniform_", "tensor")
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    as_tensor(tensor, "normal_", "tensor")
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, value: float) -> Tensor:
    as_tensor(tensor, "constant_", "tensor")
    return _fill(tensor, value)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1.0)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot: keeps the variance of activations and gradients alike for tanh/linear layers."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He: scaled for ReLU-like layers so that activations don't shrink layer after layer."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``: W W^T = gain^2 I for a wide W (W^T W for
    a tall one), dims after the first flattened. Multiplying by it keeps a vector's norm,
    so a deep stack of such layers (an unrolled RNN) neither explodes nor vanishes at start.
    As PyTorch: the Q of a Gaussian matrix's QR, signs fixed by R's diagonal so that Q is
    uniformly distributed."""
    as_tensor(tensor, "orthogonal_", "tensor")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor  # (PyTorch: no-op)
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    gaussian = randn(rows, cols, generator=generator, dtype=tensor.dtype).numpy()
    flattened = gaussian.T if rows < cols else gaussian
    q, r = np.linalg.qr(flattened.astype(np.float64))
    q = q * np.sign(np.diag(r))  # (Q's columns made unique: R's diagonal positive)
    if rows < cols:
        q = q.T
    values = as_new_tensor(q.reshape(tensor.shape) * gain, dtype=tensor.dtype, device=tensor.device)
    return _fill(tensor, values)


def default_layer_init_(weight: Tensor, bias: Tensor | None = None) -> None:
    """PyTorch's default for Linear and Conv layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    (``kaiming_uniform_`` with ``a=sqrt(5)`` is that bound for the weight.)
    """
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
