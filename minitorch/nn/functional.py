"""``nn.functional``: the stateless forms of the layers and losses (``F.relu``, ``F.conv2d``, ...).

Everything here is built from minitorch ops, so autograd differentiates it without a
line of backward code, except the two window ops ``unfold``/``fold`` (im2col and its
adjoint), which are Functions of their own for speed.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..autograd import is_grad_enabled, no_grad
from ..backend import array_module_of
from ..checks import as_number, as_reduction, as_tensor, check_indices
from ..creation import arange, rand, zeros
from ..dtypes import from_numpy_dtype
from ..function import Context, Function
from ..ops.elementwise import _promote, float_op, unbroadcast
from ..ops.linalg import matmul_arrays
from ..ops.registry import register
from ..ops.scalar import erf_array
from ..shape import as_size, as_sizes, broadcast_shapes
from ..tensor import Tensor

# the functional forms of layers that live in modules of their own (F.<name>, as PyTorch)
from .channel_dropout import dropout2d  # noqa: F401
from .group_norm import group_norm  # noqa: F401
from .losses import binary_cross_entropy, one_hot, reduce_loss, smooth_l1_loss  # noqa: F401
from .pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: F401
from .sampling import adaptive_avg_pool2d, adaptive_output_size, interpolate  # noqa: F401


def _pair(
    value: int | tuple[int, int], op: str = "conv2d", what: str = "kernel_size", least: int = 0
) -> tuple[int, int]:
    """``3`` or ``(3, 3)`` as a checked pair of ints, each at least ``least``."""
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2:
        raise ValueError(f"{op}: {what} must be an int or a pair of ints, got {value!r}")
    checked = tuple(as_size(v, op, what) for v in pair)
    if any(v < least for v in checked):
        raise ValueError(f"{op}: {what} must be at least {least}, got {value!r}")
    return checked


# --- activations --------------------------------------------------------------------------
def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``; ``inplace`` writes it into ``x`` and returns ``x``."""
    if isinstance(x, Tensor) and x.dtype.name == "bool":
        raise RuntimeError("relu: Boolean inputs not supported for relu (got a bool tensor)")
    if inplace:
        return ops.copy_(x, ops.relu(x))
    return ops.relu(x)


def sigmoid(x: Tensor) -> Tensor:
    return ops.sigmoid(x)


def tanh(x: Tensor) -> Tensor:
    return ops.tanh(x)


def softmax(x: Tensor, dim: int) -> Tensor:
    return ops.softmax(x, dim)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    return ops.log_softmax(x, dim)


def erf(x: Tensor) -> Tensor:
    return ops.Erf.apply(x)


def _float_activation(op: str, x: Tensor, fn: Any) -> Tensor:
    """An activation PyTorch defines for floating tensors only, written as a formula of
    ops: integer and bool tensors are refused ('not implemented for Long'); float16 and
    bfloat16 are computed in float32 and rounded once, as PyTorch's kernels do."""
    as_tensor(x, op)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"{op}: not implemented for {x.dtype.name} tensors (shape {x.shape}); "
            "convert it with .float() first"
        )
    if x.dtype.itemsize == 2:
        return fn(x.float()).to(x.dtype)
    return fn(x)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    out = _float_activation("leaky_relu", x, lambda x: ops.where(x > 0, x, x * negative_slope))
    return ops.copy_(x, out) if inplace else out


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    def formula(x: Tensor) -> Tensor:
        return ops.where(x > 0, x, alpha * ops.expm1(ops.clamp(x, max=0.0)))

    out = _float_activation("elu", x, formula)
    return ops.copy_(x, out) if inplace else out


def silu(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    out = _float_activation("silu", x, lambda x: x * ops.sigmoid(x))
    return ops.copy_(x, out) if inplace else out


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    as_number(beta, "softplus", "beta"), as_number(threshold, "softplus", "threshold")

    def formula(x: Tensor) -> Tensor:
        scaled = x * beta
        # (exp of the clamped value: the branch not taken must not overflow to inf, whose
        # zero gradient would be inf * 0 = NaN)
        smooth = ops.log1p(ops.exp(ops.clamp(scaled, max=threshold))) / beta
        return ops.where(scaled > threshold, x, smooth)

    return _float_activation("softplus", x, formula)


def mish(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    out = _float_activation("mish", x, lambda x: x * ops.tanh(softplus(x)))
    return ops.copy_(x, out) if inplace else out


def hardsigmoid(x: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, a straight line between."""
    out = _float_activation("hardsigmoid", x, lambda x: ops.clamp(x + 3.0, 0.0, 6.0) / 6.0)
    return ops.copy_(x, out) if inplace else out


def hardswish(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    out = _float_activation("hardswish", x, lambda x: x * ops.clamp(x + 3.0, 0.0, 6.0) / 6.0)
    return ops.copy_(x, out) if inplace else out


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``: exact with erf, or PyTorch's tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    if isinstance(x, Tensor) and x.dtype.is_floating_point:
        return Gelu.apply(x, approximate)  # (float16/bfloat16: in float32, rounded once)
    return _float_activation("gelu", x, lambda x: Gelu.apply(x, approximate))  # (refused)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


def _gelu_formula(x: Tensor, approximate: str) -> Tensor:
    """GELU as the ops it is made of (``Gelu.decomposition``: what tracer and autocast see)."""

    def formula(x: Tensor) -> Tensor:
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
            return 0.5 * x * (1.0 + ops.tanh(inner))
        return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))

    return _float_activation("gelu", x, formula)


def _gelu_parts(m: Any, x: Any, approximate: str) -> tuple:
    """``(Phi, t)`` on arrays: GELU is ``x * Phi``; ``t`` is the tanh of the approximation."""
    if approximate == "tanh":
        t = m.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        return 0.5 * (1.0 + t), t
    phi = erf_array(m, x * (1.0 / math.sqrt(2.0)))
    phi += 1.0
    phi *= 0.5
    return phi, None


class Gelu(Function):
    """GELU as one op: one pass of ``x * Phi(x)`` forward, one of ``grad * GELU'(x)`` back
    (``GeluBackward``), where the formula of ops it is (``decomposition``) makes a node and a
    temporary per op. float16/bfloat16 compute in float32, rounded once."""

    dtypes = "floating"
    grad_fn_name = "GeluBackward0"
    decomposition = staticmethod(_gelu_formula)

    @staticmethod
    def forward(ctx: Context, x: Any, approximate: str) -> Any:
        def gelu(x: Any) -> Any:
            ctx.parts = _gelu_parts(array_module_of(x), x, approximate)  # (backward's too)
            return ctx.parts[0] * x

        ctx.approximate = approximate
        ctx.save_for_backward(x)
        return float_op(gelu, x)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        (x,) = ctx.saved_tensors
        return GeluBackward.apply(grad, x, ctx.approximate, ctx.parts), None


class GeluBackward(Function):
    """``grad * GELU'(x)`` as one op, differentiable again (for ``create_graph=True``)."""

    name = "gelu_backward"
    dtypes = "floating"

    @staticmethod
    def forward(grad: Any, x: Any, approximate: str, parts: tuple | None = None) -> Any:
        """``parts``: forward's ``(Phi, t)`` arrays, if it kept them (else computed again)."""

        def slope(x: Any) -> Any:  # GELU'(x) = Phi + x Phi'
            m = array_module_of(x)
            phi, t = _gelu_parts(m, x, approximate) if parts is None else parts
            if t is None:  # Phi' is the normal density
                density = m.exp(-0.5 * x * x)
                density *= x * (1.0 / math.sqrt(2.0 * math.pi))
            else:
                density = (0.5 * _SQRT_2_OVER_PI) * (1.0 - t * t)
                density *= 1.0 + (3.0 * _GELU_CUBIC) * x * x
                density *= x
            density += phi
            return density

        def scaled(x: Any) -> Any:
            out = slope(x)
            out *= grad
            return out

        return float_op(scaled, x)  # (float16/bfloat16: in float32, rounded once)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        ctx.approximate = inputs[2]
        ctx.save_for_backward(inputs[0], inputs[1])

    @staticmethod
    def backward(ctx: Context, gg: Tensor) -> tuple:
        grad, x = ctx.saved_tensors
        need_grad, need_x = ctx.needs_input_grad[:2]
        return (
            GeluBackward.apply(gg, x, ctx.approximate) if need_grad else None,
            gg * grad * _gelu_curvature(x, ctx.approximate) if need_x else None,
            None,
            None,
        )


def _gelu_curvature(x: Tensor, approximate: str) -> Tensor:
    """GELU''(x), with ops: ``phi(x) (2 - x^2)`` exact; for the tanh form, with
    ``u = sqrt(2/pi) (1 + 3c x^2)``: ``(1 - t^2) (u - x t u^2 + 3 sqrt(2/pi) c x^2)``."""
    if approximate == "tanh":
        t = ops.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        u = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x * x)
        return (1.0 - t * t) * (u - x * t * u * u + 3.0 * _SQRT_2_OVER_PI * _GELU_CUBIC * x * x)
    density = ops.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
    return density * (2.0 - x * x)


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``
    (written into ``x`` with ``inplace``)."""
    if inplace and training and p != 0.0:
        return ops.copy_(x, dropout(x, p, training))
    isinstance(x, Tensor) or as_tensor(x, "dropout")
    if isinstance(p, (int, float)) and not isinstance(p, bool) and not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    as_number(p, "dropout", "p", low=0.0, high=1.0)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"dropout: expected a floating point input, but got dtype {x.dtype}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = rand(*x.shape, device=x.device) >= p
    return x * keep.to(x.dtype) * (1.0 / (1.0 - p))


# --- linear layers ------------------------------------------------------------------------
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias``, with ``weight`` of shape (out_features, in_features)."""
    if not (isinstance(x, Tensor) and isinstance(weight, Tensor)):  # (the hot path: one test)
        as_tensor(x, "linear"), as_tensor(weight, "linear", "weight")
    if x.ndim == 0 or weight.ndim != 2:
        raise RuntimeError(
            f"linear: expected an input with at least 1 dim and a 2-d weight, got shapes "
            f"{x.shape} and {weight.shape}"
        )
    if x.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"linear: input has {x.shape[-1]} features (shape {x.shape}) but the weight "
            f"expects {weight.shape[1]} (weight shape {weight.shape})"
        )
    return Linear.apply(x, weight, bias)


class Linear(Function):
    """``x @ W.T + b`` as one op (PyTorch's addmm), so that backward can produce W's gradient
    directly in W's layout: ``dW = dY.T @ X`` is a fresh (out, in) array, where going through
    the transposed view ``W.T`` would give a transposed gradient that must then be copied."""

    dtypes = "same"  # the matmul family's rule: x, weight and bias of one dtype
    # PyTorch's linear is addmm(bias, x, weight.T) on a 2-d input (its node lists the bias
    # first), mm without a bias, and a view of the product for other inputs.
    grad_fn_edges = {"AddmmBackward0": (2, 0, 1)}

    @staticmethod
    def grad_fn_name(x: Any, weight: Any, bias: Any = None) -> str:
        if x.ndim == 2:
            return "MmBackward0" if bias is None else "AddmmBackward0"
        if bias is not None:
            return "ViewBackward0"
        return "SqueezeBackward4" if x.ndim == 1 else "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx: Context, x: Any, weight: Any, bias: Any = None) -> Any:
        if x.ndim == 0 or x.shape[-1] != weight.shape[1]:  # (the graph interpreter calls here)
            raise ValueError(
                f"input of shape {tuple(x.shape)} has {x.shape[-1] if x.ndim else 0} features "
                f"but the weight of shape {tuple(weight.shape)} expects {weight.shape[1]}"
            )
        ctx.save_for_backward(x, weight)
        return matmul_arrays(x, weight.T, bias)  # the bias added before rounding, as addmm

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        out_features, in_features = weight.shape
        rows = grad.reshape(-1, out_features)
        grad_x = grad @ weight if need_x else None
        grad_w = rows.mT @ x.reshape(-1, in_features) if need_w else None
        grad_b = rows.sum(0) if need_b else None
        return grad_x, grad_w, grad_b


def embedding(indices: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by integer ``indices`` (any shape)."""
    as_tensor(indices, "embedding", "indices"), as_tensor(weight, "embedding", "weight")
    if indices.dtype.is_floating_point:
        raise TypeError(f"embedding: indices must be integers, got {indices.dtype}")
    check_indices(indices, weight.shape[0], 0, "embedding", IndexError)
    out = weight[indices]
    if padding_idx is not None:  # the padding row gives zeros and gets no gradient
        out = out * (indices != padding_idx).unsqueeze(-1).to(weight.dtype)
    return out


# --- normalisation ------------------------------------------------------------------------
def batch_norm(
    x: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) over the batch and any spatial dims."""
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        n = x.numel() // x.shape[1]
        if n <= 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training, "
                f"got input of shape {x.shape}"
            )
        mean = x.mean(dims, keepdim=True)
        var = ((x - mean) ** 2).mean(dims, keepdim=True)
        if running_mean is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.reshape(-1) * momentum)
                unbiased = var.reshape(-1) * (n / (n - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (x - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def layer_norm(
    x: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims of each sample."""
    isinstance(x, Tensor) or as_tensor(x, "layer_norm")
    normalized_shape = as_sizes((normalized_shape,), "layer_norm")
    k = len(normalized_shape)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"layer_norm: normalized_shape {tuple(normalized_shape)} does not match the last "
            f"dims of the input shape {x.shape}"
        )
    return LayerNorm.apply(x, weight, bias, tuple(range(x.ndim - k, x.ndim)), eps)


def _layer_norm_formula(
    x: Tensor, weight: Tensor | None, bias: Tensor | None, dims: tuple, eps: float
) -> Tensor:
    """LayerNorm as the ops it is made of (``LayerNorm.decomposition``)."""
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    out = (x - mean) / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


class LayerNorm(Function):
    """LayerNorm as one op (PyTorch's ``native_layer_norm``): the statistics and the
    normalised values in a few passes, and a backward of its own, where the formula of
    ops (``decomposition``) records nine nodes and their temporaries. float16/bfloat16
    compute in float32, rounded once."""

    name = "layer_norm"
    dtypes = "floating"
    grad_fn_name = "NativeLayerNormBackward0"
    decomposition = staticmethod(_layer_norm_formula)

    @staticmethod
    def forward(ctx: Context, x: Any, weight: Any, bias: Any, dims: tuple, eps: float) -> Any:
        low = x.dtype if x.dtype.itemsize == 2 else None
        w, b = weight, bias
        if low is not None:  # float16/bfloat16: in float32
            x, w, b = (None if a is None else a.astype("float32") for a in (x, weight, bias))
        m = array_module_of(x)
        xhat = x - x.mean(axis=dims, keepdims=True)
        std = m.sqrt(m.square(xhat).mean(axis=dims, keepdims=True) + eps)
        xhat /= std
        out = xhat if w is None else xhat * w
        if b is not None:
            out = out + b if out is not xhat else xhat + b
        ctx.dims, ctx.low, ctx.eps = dims, low, eps
        ctx.param_dtypes = tuple(None if a is None else a.dtype for a in (weight, bias))
        ctx.save_for_backward(xhat, 1.0 / std, w, x)
        if low is not None:
            return out.astype(low)
        return out.copy() if out is xhat else out  # (xhat is saved: the output is another)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        """With ``xhat`` the normalised input and ``g = grad * weight``: ``dx = rstd * (g -
        mean(g) - xhat * mean(g * xhat))`` over the normalised dims; ``dweight`` sums
        ``grad * xhat`` and ``dbias`` ``grad`` over the others."""
        xhat, rstd, weight, x = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        dims, low = ctx.dims, ctx.low
        if low is not None:
            grad = grad.float()
        if is_grad_enabled():  # create_graph: xhat and rstd as ops on x, differentiable too
            centred = x - x.mean(dims, keepdim=True)
            rstd = 1.0 / ops.sqrt((centred * centred).mean(dims, keepdim=True) + ctx.eps)
            xhat = centred * rstd
        lead = tuple(range(grad.ndim - len(dims)))
        grad_x = grad_w = grad_b = None
        if need_x:
            g = grad if weight is None else grad * weight
            mean_g = g.mean(dims, keepdim=True)
            mean_gx = (g * xhat).mean(dims, keepdim=True)
            grad_x = (g - mean_g - xhat * mean_gx) * rstd
            grad_x = grad_x if low is None else grad_x.to(from_numpy_dtype(low))
        w_dtype, b_dtype = ctx.param_dtypes
        if need_w:
            grad_w = (grad * xhat).sum(lead).to(from_numpy_dtype(w_dtype))
        if need_b:
            grad_b = grad.sum(lead).to(from_numpy_dtype(b_dtype))
        return grad_x, grad_w, grad_b, None, None


# --- convolution and pooling --------------------------------------------------------------
def _windows_view(x: Any, kernel: tuple, stride: tuple, dilation: tuple) -> Any:
    """A strided (N, C, kh, kw, out_h, out_w) view of a padded (N, C, H, W) array."""
    n, c, h, w = x.shape
    out_h = (h - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    out_w = (w - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    sn, sc, sh, sw = x.strides
    xp = array_module_of(x)
    return xp.lib.stride_tricks.as_strided(
        x,
        (n, c, kernel[0], kernel[1], out_h, out_w),
        (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        writeable=False,
    )


class Unfold(Function):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L), one column per output position."""

    grad_fn_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx: Context, x: Any, kernel: tuple, stride: tuple, dilation: tuple) -> Any:
        ctx.geometry = (x.shape, kernel, stride, dilation)
        win = _windows_view(x, kernel, stride, dilation)
        n, c, kh, kw, oh, ow = win.shape
        return win.reshape(n, c * kh * kw, oh * ow)  # reshape of a strided view copies

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        shape, kernel, stride, dilation = ctx.geometry
        return Fold.apply(grad, shape, kernel, stride, dilation), None, None, None


class Fold(Function):
    """col2im, the adjoint of Unfold: adds every column back into the (N, C, H, W) image."""

    grad_fn_name = "Col2ImBackward0"

    @staticmethod
    def forward(
        ctx: Context, cols: Any, shape: tuple, kernel: tuple, stride: tuple, dilation: tuple
    ) -> Any:
        ctx.geometry = (kernel, stride, dilation)
        xp = array_module_of(cols)
        n, c, h, w = shape
        out = xp.zeros(shape, dtype=cols.dtype)
        win = _windows_view(out, kernel, stride, dilation)
        oh, ow = win.shape[4:]
        cols = cols.reshape(n, c, kernel[0], kernel[1], oh, ow)
        for i in range(kernel[0]):  # a loop over kernel offsets, never over pixels
            for j in range(kernel[1]):
                r, s = i * dilation[0], j * dilation[1]
                out[
                    :, :, r : r + stride[0] * oh : stride[0], s : s + stride[1] * ow : stride[1]
                ] += cols[:, :, i, j]
        return out

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        kernel, stride, dilation = ctx.geometry
        return Unfold.apply(grad, kernel, stride, dilation), None, None, None, None


def pad2d(x: Tensor, padding: tuple[int, int], value: float = 0.0) -> Tensor:
    """Pad the last two dims with ``value`` (``padding`` = (pad_h, pad_w), both sides)."""
    ph, pw = padding
    if ph:
        edge = zeros(*x.shape[:-2], ph, x.shape[-1], dtype=x.dtype, device=x.device) + value
        x = ops.cat([edge, x, edge], dim=-2)
    if pw:
        edge = zeros(*x.shape[:-1], pw, dtype=x.dtype, device=x.device) + value
        x = ops.cat([edge, x, edge], dim=-1)
    return x


def unfold(x: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):
    """``F.unfold``: sliding windows of a (N, C, H, W) tensor as columns (N, C*kh*kw, L)."""
    if x.ndim != 4:
        raise RuntimeError(f"unfold: expected a 4-d (N, C, H, W) input, got shape {x.shape}")
    x = pad2d(x, _pair(padding)).contiguous()
    return Unfold.apply(x, _pair(kernel_size), _pair(stride), _pair(dilation))


def _out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation as one matrix multiply over im2col columns (one op for
    ``apply``'s layers: autocast runs it in lower precision, bias included, as PyTorch).
    With ``groups``, the channels split into groups convolved each on its own."""
    if isinstance(x, Tensor) and x.ndim == 3:  # one unbatched (C, H, W) image
        return conv2d(x.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if groups != 1:
        return Convolution2d.apply(x, weight, bias, stride, padding, dilation, groups)
    return Convolution2d.apply(x, weight, bias, stride, padding, dilation)


def _conv2d(
    x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any
) -> Tensor:
    if x.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(
            f"conv2d: expected 4-d input and weight, got shapes {x.shape} and {weight.shape}"
        )
    n, c, h, w = x.shape
    out_c, in_c, kh, kw = weight.shape
    if c != in_c:
        raise RuntimeError(
            f"conv2d: input has {c} channels (shape {x.shape}) but the weight expects {in_c} "
            f"(weight shape {weight.shape})"
        )
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    oh = _out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = _out_size(w, kw, stride[1], padding[1], dilation[1])
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"conv2d: the kernel {(kh, kw)} (dilation {dilation}) is larger than the padded "
            f"input {(h + 2 * padding[0], w + 2 * padding[1])}"
        )
    cols = unfold(x, (kh, kw), dilation, padding, stride)  # (N, C*kh*kw, L)
    out = weight.reshape(out_c, -1) @ cols  # (N, out_c, L)
    out = out.reshape(n, out_c, oh, ow)
    return out if bias is None else out + bias.reshape(1, out_c, 1, 1)


def _grouped_conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """conv2d with ``groups``: input channels and filters split into that many groups,
    group g's filters seeing only group g's channels (``groups == C``: depthwise)."""
    groups = as_size(groups, "conv2d", "groups")
    if x.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(
            f"conv2d: expected 4-d input and weight, got shapes {x.shape} and {weight.shape}"
        )
    c, out_c = x.shape[1], weight.shape[0]
    if groups < 1 or out_c % groups or c != weight.shape[1] * groups:
        raise RuntimeError(
            f"conv2d: groups={groups} needs a weight of (out_channels divisible by groups, "
            f"in_channels / groups, kh, kw), got input {x.shape} and weight {weight.shape}"
        )
    xs, ws = x.chunk(groups, dim=1), weight.chunk(groups, dim=0)
    biases = [None] * groups if bias is None else bias.chunk(groups)
    return ops.cat(
        [
            _conv2d(xg, wg, bg, stride, padding, dilation)
            for xg, wg, bg in zip(xs, ws, biases, strict=True)
        ],
        dim=1,
    )


def _any_conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int = 1,
) -> Tensor:
    if groups == 1:
        return _conv2d(x, weight, bias, stride, padding, dilation)
    return _grouped_conv2d(x, weight, bias, stride, padding, dilation, groups)


class Convolution2d(Function):
    """conv2d as a composite: the unfold, matmul and bias add it is made of record
    themselves; autocast sees one ``conv2d`` (grouped or not)."""

    name = "conv2d"
    kind = "composite"
    forward = staticmethod(_any_conv2d)


def conv_transpose2d(
    input: Tensor,  # noqa: A002 - PyTorch's name
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transposed 2-d convolution of (N, C_in, H, W) (or (C_in, H, W)) with ``weight``
    (C_in, C_out / groups, kh, kw): (N, C_out, H_out, W_out), where
    ``H_out = (H - 1) stride - 2 padding + dilation (kh - 1) + output_padding + 1``."""
    op = "conv_transpose2d"
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{op}: input and weight must be Tensors")
    if input.ndim == 3:
        return conv_transpose2d(
            input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation
        ).squeeze(0)
    if input.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(
            f"{op}: expected a 3-d or 4-d input and a 4-d weight, got shapes {input.shape} and "
            f"{weight.shape}"
        )
    stride, dilation = _pair(stride, op, "stride", 1), _pair(dilation, op, "dilation", 1)
    padding, output_padding = (
        _pair(padding, op, "padding"),
        _pair(output_padding, op, "output_padding"),
    )
    groups = as_size(groups, op, "groups")
    n, c, h, w = input.shape
    in_c, out_per_group, kh, kw = weight.shape
    if groups < 1 or c != in_c or in_c % groups:
        raise RuntimeError(
            f"{op}: input has {c} channels (shape {input.shape}) but the weight {weight.shape} "
            f"expects {in_c}, divisible by groups={groups}"
        )
    for i in range(2):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise RuntimeError(
                f"{op}: output padding must be smaller than either stride or dilation, but got "
                f"output_padding={output_padding}, stride={stride}, dilation={dilation}"
            )
    # every input pixel times the kernel: (N, G, out/G * kh * kw, H * W) columns
    x = input.reshape(n, groups, c // groups, h * w)
    wt = weight.reshape(groups, c // groups, out_per_group * kh * kw).transpose(-2, -1)
    cols = (wt @ x).reshape(n, groups * out_per_group * kh * kw, h * w)
    full = (
        (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1,
        (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1,
    )
    out_c = groups * out_per_group
    out = Fold.apply(cols, (n, out_c, *full), (kh, kw), stride, dilation)
    out = _pad_end(out, output_padding)
    size = (out.shape[2] - 2 * padding[0], out.shape[3] - 2 * padding[1])
    if size[0] <= 0 or size[1] <= 0:
        raise RuntimeError(
            f"{op}: the output size {size} is too small (input {input.shape}, kernel {(kh, kw)}, "
            f"stride {stride}, padding {padding}, dilation {dilation})"
        )
    out = out[:, :, padding[0] : padding[0] + size[0], padding[1] : padding[1] + size[1]]
    return out if bias is None else out + bias.reshape(1, out_c, 1, 1)


def _pad_end(x: Tensor, extra: tuple[int, int]) -> Tensor:
    """Zeros after the last row (``extra[0]`` of them) and the last column (``extra[1]``)."""
    if extra[0]:
        x = ops.cat(
            [x, zeros(*x.shape[:2], extra[0], x.shape[3], dtype=x.dtype, device=x.device)], 2
        )
    if extra[1]:
        x = ops.cat([x, zeros(*x.shape[:3], extra[1], dtype=x.dtype, device=x.device)], 3)
    return x


def _tiles(x: Any, kernel: tuple[int, int]) -> Any:
    """(N, C, H, W) -> a contiguous (kh*kw, N, C, H/kh, W/kw) copy: slab k holds offset k of
    every tile, so that the per-offset work below runs on whole contiguous arrays."""
    n, c, h, w = x.shape
    kh, kw = kernel
    tiles = x.reshape(n, c, h // kh, kh, w // kw, kw).transpose(3, 5, 0, 1, 2, 4)
    return array_module_of(x).ascontiguousarray(tiles).reshape(kh * kw, n, c, h // kh, w // kw)


def _untile(tiles: Any, kernel: tuple[int, int]) -> Any:
    """The inverse of ``_tiles``: back to a contiguous (N, C, H, W) array."""
    _, n, c, oh, ow = tiles.shape
    kh, kw = kernel
    image = tiles.reshape(kh, kw, n, c, oh, ow).transpose(2, 3, 4, 0, 5, 1)
    return array_module_of(tiles).ascontiguousarray(image).reshape(n, c, oh * kh, ow * kw)


def _tile_max(tiles: Any) -> tuple[Any, Any]:
    """Each tile's maximum and the offset it sits at: the first one on ties, as PyTorch's max
    pooling; a NaN wins, so that it propagates. Whole-array maximum and integer arithmetic
    only (much faster in numpy than where/copyto with masks)."""
    xp = array_module_of(tiles)
    best = tiles[0]
    winners = xp.zeros(best.shape, dtype=xp.int8)
    for k in range(1, tiles.shape[0]):
        v = tiles[k]
        better = (v > best) | ((v != v) & (best == best))  # v != v: v is NaN
        winners += better * (xp.int8(k) - winners)
        best = xp.maximum(best, v)
    return best, winners


class TileMax(Function):
    """Max pooling over kh x kw tiles that cover the image: (N, C, H, W) -> (N, C, H/kh, W/kw)."""

    name = "max_pool2d"
    grad_fn_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx: Context, x: Any, kernel: tuple) -> Any:
        best, winners = _tile_max(_tiles(x, kernel))
        ctx.geometry = (x.shape, winners, kernel)
        return best

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        shape, winners, kernel = ctx.geometry
        return TileScatter.apply(grad, winners, kernel, shape), None


class TileScatter(Function):
    """Put each value at its tile's winner offset, zeros elsewhere (max pooling's backward)."""

    @staticmethod
    def forward(ctx: Context, values: Any, winners: Any, kernel: tuple, shape: tuple) -> Any:
        ctx.geometry = (winners, kernel)
        xp = array_module_of(values)
        n, c, h, w = shape
        tiles = xp.zeros((kernel[0] * kernel[1],) + winners.shape, values.dtype)
        xp.put_along_axis(tiles, winners[None].astype(xp.intp), values[None], axis=0)
        return _untile(tiles, kernel)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        winners, kernel = ctx.geometry
        return TileGather.apply(grad, winners, kernel), None, None, None


class TileGather(Function):
    """Read each tile at its winner offset: the adjoint of TileScatter."""

    @staticmethod
    def forward(ctx: Context, x: Any, winners: Any, kernel: tuple) -> Any:
        ctx.geometry = (x.shape, winners, kernel)
        xp = array_module_of(x)
        index = winners[None].astype(xp.intp)
        return xp.take_along_axis(_tiles(x, kernel), index, axis=0)[0]

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        shape, winners, kernel = ctx.geometry
        return TileScatter.apply(grad, winners, kernel, shape), None, None


def _pool(x: Tensor, kernel_size: Any, stride: Any, padding: Any, reduce: str) -> Tensor:
    isinstance(x, Tensor) or as_tensor(x, f"{reduce}_pool2d")
    if x.ndim not in (3, 4):
        raise RuntimeError(f"{reduce}_pool2d: expected a 3-d or 4-d input, got shape {x.shape}")
    batched = x if x.ndim == 4 else x.unsqueeze(0)
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    padding = _pair(padding)
    n, c, h, w = batched.shape
    oh = _out_size(h, kernel[0], stride[0], padding[0], 1)
    ow = _out_size(w, kernel[1], stride[1], padding[1], 1)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"{reduce}_pool2d: the kernel {kernel} is larger than the padded input "
            f"{(h + 2 * padding[0], w + 2 * padding[1])} (input shape {x.shape}): the output "
            f"size ({oh}, {ow}) is too small"
        )
    if padding == (0, 0) and stride == kernel and h % kernel[0] == 0 and w % kernel[1] == 0:
        # Windows that tile the image: window offset (i, j) of every window is the strided
        # view x[..., i::kh, j::kw], so each pool is a few whole-array ops, no copies.
        if reduce == "max":
            out = TileMax.apply(batched, kernel)
        else:
            kh, kw = kernel
            tiles = [batched[..., i::kh, j::kw] for i in range(kh) for j in range(kw)]
            out = ops.stack(tiles).sum(0) * (1.0 / (kh * kw))
    else:  # overlapping or padded windows: im2col
        fill = -math.inf if reduce == "max" else 0.0
        planes = pad2d(batched.reshape(n * c, 1, h, w), padding, fill).contiguous()
        cols = Unfold.apply(planes, kernel, stride, (1, 1))  # (N*C, kh*kw, L)
        pooled = cols.max(dim=1).values if reduce == "max" else cols.mean(dim=1)
        out = pooled.reshape(n, c, oh, ow)
    return out if x.ndim == 4 else out.squeeze(0)


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    return _pool(x, kernel_size, stride, padding, "max")


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """Average over each window; zero padding counts towards the average (PyTorch's default)."""
    return _pool(x, kernel_size, stride, padding, "avg")


# --- losses -------------------------------------------------------------------------------
def _loss_inputs(op: str, input: Any, target: Any, reduction: str) -> None:
    """What every loss checks first: tensors, and a known reduction."""
    as_tensor(input, op), as_tensor(target, op, "target")
    as_reduction(reduction, op)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _loss_inputs("mse_loss", input, target, reduction)
    if input.shape != target.shape:
        raise RuntimeError(
            f"mse_loss: input shape {input.shape} and target shape {target.shape} differ"
        )
    return MseLoss.apply(input, target, reduction)


class _Loss(Function):
    """A loss is a composite: one op for ``apply``'s layers (autocast runs it in float32,
    as PyTorch's policy says), computed by the ops its ``forward`` calls."""

    kind = "composite"


class MseLoss(Function):
    """``mean((input - target)^2)`` (or its sum, or each term) as one op, recorded as one
    ``MseLossBackward0`` node as in PyTorch; autocast runs it in float32 (by its name)."""

    name = "mse_loss"

    @staticmethod
    def forward(input: Any, target: Any, reduction: str) -> Any:
        diff = _promote(input - target, input, target)
        squares = diff * diff
        if reduction == "none":
            return squares
        total = squares.mean() if reduction == "mean" else squares.sum()
        return array_module_of(squares).asarray(total).astype(squares.dtype)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        input, target, ctx.reduction = inputs
        ctx.shapes = (input.shape, target.shape)
        ctx.save_for_backward(input, target)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        input, target = ctx.saved_tensors
        need_input, need_target, _ = ctx.needs_input_grad
        scale = 2.0 / max(input.numel(), 1) if ctx.reduction == "mean" else 2.0
        d = (input - target) * (grad * scale)  # d/d input of (input - target)^2, reduced
        return (
            unbroadcast(d, ctx.shapes[0]) if need_input else None,
            unbroadcast(-d, ctx.shapes[1]) if need_target else None,
            None,
        )


def _classes_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N*d1*..., C): one row per prediction."""
    if x.ndim <= 2:
        return x.reshape(-1, x.shape[-1]) if x.ndim == 2 else x.reshape(1, -1)
    dims = (0,) + tuple(range(2, x.ndim)) + (1,)
    return x.permute(*dims).reshape(-1, x.shape[1])


def nll_loss(
    log_probs: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class indices; the weighted mean divides by the weights."""
    _loss_inputs("nll_loss", log_probs, target, reduction)
    _check_nll(log_probs, target, weight, ignore_index)
    return NllLoss.apply(log_probs, target, weight, ignore_index, reduction)


class NllLoss(Function):
    """``-w[t] * log_probs[t]`` per prediction, reduced, as one op (PyTorch's
    ``NllLossBackward0`` node); autocast runs it in float32 (by its name). The mean
    divides by the weights of the targets that count (``ignore_index`` ones count 0)."""

    name = "nll_loss"

    @staticmethod
    def grad_fn_name(log_probs: Any, *rest: Any) -> str:  # an image's loss: PyTorch's 2-d op
        return "NllLoss2DBackward0" if log_probs.ndim == 4 else "NllLossBackward0"

    @staticmethod
    def forward(
        ctx: Context, log_probs: Any, target: Any, weight: Any, ignore_index: int, reduction: str
    ) -> Any:
        m = array_module_of(log_probs)
        classes = 0 if log_probs.ndim == 1 else 1
        rows = m.moveaxis(log_probs, classes, -1).reshape(-1, log_probs.shape[classes])
        flat = target.reshape(-1)
        keep = flat != ignore_index
        safe = m.where(keep, flat, 0)
        w = keep.astype(rows.dtype) if weight is None else keep * weight[safe].astype(rows.dtype)
        losses = -rows[m.arange(rows.shape[0]), safe] * w
        ctx.layout = (log_probs.shape, classes, safe, reduction, target.shape)
        ctx.save_for_backward(w)
        if reduction == "none":
            return losses.reshape(target.shape)
        total = losses.sum()
        if reduction == "mean":
            total = total / w.sum()
        return m.asarray(total).astype(rows.dtype)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        """Each prediction's gradient is ``-w[t] * grad`` at its target class, 0 elsewhere."""
        (w,) = ctx.saved_tensors
        shape, classes, safe, reduction, target_shape = ctx.layout
        n, c = w.shape[0], shape[classes]
        if reduction == "none":
            scale = grad.reshape(n) * w
        elif reduction == "mean":
            scale = grad * w / w.sum()
        else:
            scale = grad * w
        hits = arange(c, device=w.device).reshape(1, c) == Tensor._from_array(safe).reshape(n, 1)
        rows = -(hits.to(w.dtype) * scale.reshape(n, 1))
        moved = tuple(d for i, d in enumerate(shape) if i != classes) + (c,)
        grad_input = rows.reshape(moved)
        if shape and classes != len(shape) - 1:  # (N, d..., C) back to (N, C, d...)
            order = list(range(len(shape) - 1))
            order.insert(classes, len(shape) - 1)
            grad_input = grad_input.permute(*order)
        return grad_input.reshape(shape), None, None, None, None


def _nll_terms(log_probs: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int):
    """Per-prediction ``-w[t] * logp[t]`` and ``w[t]``, with ignored targets contributing 0."""
    _check_nll(log_probs, target, weight, ignore_index)
    rows = _classes_last(log_probs)
    flat = target.reshape(-1)
    keep = flat != ignore_index
    safe = ops.where(keep, flat, 0)  # ignored rows read class 0, then get weight 0
    picked = rows[arange(rows.shape[0], device=rows.device), safe]
    w = keep.to(rows.dtype)
    if weight is not None:
        w = w * weight[safe]
    return -(picked * w), w


def _check_nll(log_probs: Tensor, target: Tensor, weight: Any, ignore_index: int) -> None:
    """nll_loss's arguments: class-index targets of the right shape, in range."""
    if target.dtype.is_floating_point or target.dtype.name == "bool":
        raise TypeError(
            f"nll_loss: target must hold class indices (an integer tensor), but got dtype "
            f"{target.dtype} (shape {target.shape})"
        )
    if log_probs.ndim == 0 or target.ndim != log_probs.ndim - 1:
        raise RuntimeError(
            f"nll_loss: for an input of shape {log_probs.shape} the class-index target must "
            f"have {max(log_probs.ndim - 1, 0)} dims, but got shape {target.shape}"
        )
    as_number(ignore_index, "nll_loss", "ignore_index", integer=True)
    classes = log_probs.shape[1] if log_probs.ndim > 1 else log_probs.shape[0]
    predictions = log_probs.numel() // max(classes, 1)
    if weight is not None and tuple(weight.shape) != (classes,):
        raise RuntimeError(
            f"nll_loss: weight should hold one value for each of the {classes} classes "
            f"(shape ({classes},)), but got shape {weight.shape}"
        )
    if predictions != target.numel():
        raise RuntimeError(
            f"nll_loss: expected target of {predictions} class indices for input of shape "
            f"{log_probs.shape}, got target shape {target.shape}"
        )
    flat = target.reshape(-1)
    bad = ((flat != ignore_index) & ((flat < 0) | (flat >= classes))).any().item()
    if bad:
        raise IndexError(
            f"nll_loss: target values must be in [0, {classes}) or ignore_index "
            f"({ignore_index}); got {flat.tolist()[:10]}"
        )


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Softmax + negative log likelihood, computed stably through ``log_softmax``.

    ``target`` is class indices (integers) or class probabilities (same shape as input).
    With ``label_smoothing`` e, the target puts ``1 - e`` on the true class and spreads
    ``e`` evenly over all classes. Ignored targets contribute nothing, even when smoothed.
    """
    _loss_inputs("cross_entropy", input, target, reduction)
    as_number(label_smoothing, "cross_entropy", "label_smoothing", low=0.0, high=1.0)
    return CrossEntropy.apply(input, target, weight, ignore_index, reduction, label_smoothing)


def _cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
) -> Tensor:
    log_probs = log_softmax(input, dim=1 if input.ndim > 1 else 0)
    n_classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if target.dtype.is_floating_point:  # class probabilities
        if target.shape != input.shape:
            raise RuntimeError(
                f"cross_entropy: a floating point target ({target.dtype}) holds class "
                f"probabilities and must have the input's shape {input.shape}, but got shape "
                f"{target.shape}; class indices must be an integer tensor"
            )
        probs = target * (1 - label_smoothing) + label_smoothing / n_classes
        rows, prob_rows = _classes_last(log_probs), _classes_last(probs)
        terms = rows * prob_rows if weight is None else rows * prob_rows * weight
        losses = -terms.sum(dim=1)
        if reduction == "none":
            return losses.reshape((input.shape[0],) + tuple(input.shape[2:]))
        return reduce_loss(losses, reduction, "cross_entropy")
    if label_smoothing == 0.0:  # PyTorch's graph: NllLossBackward0 <- LogSoftmaxBackward0
        return nll_loss(log_probs, target, weight, ignore_index, reduction)
    nll, w = _nll_terms(log_probs, target, weight, ignore_index)
    rows = _classes_last(log_probs)
    keep = (target.reshape(-1) != ignore_index).to(rows.dtype)
    smooth = -(rows if weight is None else rows * weight).sum(dim=1) * keep
    if reduction == "mean":
        nll_part, smooth_part = nll.sum() / w.sum(), smooth.sum() / w.sum()
    elif reduction == "sum":
        nll_part, smooth_part = nll.sum(), smooth.sum()
    elif reduction == "none":
        nll_part, smooth_part = nll.reshape(target.shape), smooth.reshape(target.shape)
    else:
        raise ValueError(f"cross_entropy: unknown reduction {reduction!r}")
    return (1 - label_smoothing) * nll_part + (label_smoothing / n_classes) * smooth_part


class CrossEntropy(_Loss):
    name = "cross_entropy"
    forward = staticmethod(_cross_entropy)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + binary cross entropy in one stable formula (no log of 0, no overflow)."""
    op = "binary_cross_entropy_with_logits"
    _loss_inputs(op, input, target, reduction)
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: target must be a floating point tensor, but got dtype "
            f"{target.dtype} (shape {target.shape})"
        )
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None:
            broadcast_shapes(as_tensor(t, op, name).shape, input.shape, op=f"{op} ({name})")
            if t.requires_grad and is_grad_enabled():
                raise RuntimeError(
                    f"The function '{op}' is not differentiable with respect to argument "
                    f"'{name}'. This input cannot have requires_grad True."
                )
    if input.shape != target.shape:
        raise ValueError(
            f"binary_cross_entropy_with_logits: target size {target.shape} must be the same "
            f"as input size {input.shape}"
        )
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, reduction, pos_weight)


class BinaryCrossEntropyWithLogits(Function):
    """Sigmoid + binary cross entropy as one op (PyTorch's
    ``BinaryCrossEntropyWithLogitsBackward0`` node), in a form that never overflows:
    with ``sp(z) = log(1 + e^z)``, ``-log sigmoid(x) = sp(-x)`` and the loss is
    ``(1 - t) x + l sp(-x)``, ``l = (pos_weight - 1) t + 1`` (1 without ``pos_weight``),
    times ``weight``. Backward: ``d/dx = w (l sigmoid(x) - pos_weight t)`` and
    ``d/dt = w (pos_weight sp(-x) - sp(x))``; as in PyTorch, ``weight`` and ``pos_weight``
    get no gradient."""

    name = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(input: Any, target: Any, weight: Any, reduction: str, pos_weight: Any) -> Any:
        m = array_module_of(input)
        softplus_neg = m.maximum(-input, 0) + m.log1p(m.exp(-m.abs(input)))  # -log sigmoid
        if pos_weight is None:
            loss = (1 - target) * input + softplus_neg
        else:
            loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus_neg
        if weight is not None:
            loss = loss * weight
        loss = _promote(loss, input, target)
        if reduction == "none":
            return loss
        total = loss.mean() if reduction == "mean" else loss.sum()
        return m.asarray(total).astype(loss.dtype)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        input, target, weight, ctx.reduction, pos_weight = inputs
        ctx.save_for_backward(input, target, weight, pos_weight)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        x, t, weight, pos_weight = ctx.saved_tensors
        need_x, need_t = ctx.needs_input_grad[:2]
        if ctx.reduction == "mean":
            grad = grad / x.numel()
        g = grad if weight is None else grad * weight
        p = 1.0 if pos_weight is None else pos_weight
        grad_x = grad_t = None
        if need_x:
            scale = 1.0 if pos_weight is None else (pos_weight - 1) * t + 1
            grad_x = unbroadcast(g * (ops.sigmoid(x) * scale - p * t), x.shape)
        if need_t:
            softplus_neg = ops.relu(-x) + ops.log1p(ops.exp(-ops.abs(x)))
            grad_t = unbroadcast(g * (p * softplus_neg - (softplus_neg + x)), t.shape)
        return grad_x, grad_t, None, None, None


register(
    Linear,
    LayerNorm,
    Gelu,
    GeluBackward,
    Unfold,
    Fold,
    TileMax,
    TileScatter,
    TileGather,
    MseLoss,
    NllLoss,
    CrossEntropy,
    BinaryCrossEntropyWithLogits,
    Convolution2d,
)

from .attention import scaled_dot_product_attention  # noqa: E402, F401 (uses F.dropout)
