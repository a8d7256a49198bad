"""Scaled dot-product attention, as ``torch.nn.functional.scaled_dot_product_attention``.

Each query asks "which keys look like me?": the scores ``q @ k^T * scale`` say how much, a
softmax over the keys turns each row of scores into weights that sum to 1, and the output
is the weighted mean of the values. ``scale`` (default ``1/sqrt(E)``) keeps the scores'
spread independent of the head size, so the softmax does not saturate as E grows; the
softmax subtracts each row's maximum before ``exp``, so large scores cannot overflow.

A mask hides keys: a bool ``attn_mask`` keeps the positions that are True, a float one is
added to the scores (``-inf`` hides), and ``is_causal`` hides the future (query i sees keys
0..i). A query whose keys are all hidden gets zeros, as PyTorch's safe softmax gives.

Without dropout it is one op (``Attention``) with a backward of its own; its formula of
minitorch ops (matmul, where, softmax, dropout) is its ``decomposition``, so autocast (the
two matmuls run in bfloat16/float16), the tracer and the ONNX exporter see the ops it is
made of, as eager code with dropout does.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..autograd import is_grad_enabled, no_grad
from ..backend import array_module_of
from ..checks import as_number, as_tensor
from ..creation import ones
from ..dtypes import bool as bool_
from ..dtypes import float32
from ..function import Context, Function
from ..ops.elementwise import unbroadcast
from ..ops.linalg import matmul_arrays
from ..ops.registry import register
from ..ops.selection import tril
from ..shape import broadcast_shapes
from ..tensor import Tensor
from . import functional as F


def causal_mask(L: int, S: int, device: Any = None) -> Tensor:  # noqa: N803 - PyTorch's names
    """The bool (L, S) mask of ``is_causal``: query i keeps keys 0..i (aligned top-left)."""
    return tril(ones(L, S, dtype=bool_, device=device))


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over shapes (..., L, E), (..., S, E)
    and (..., S, Ev), giving (..., L, Ev); the leading dims broadcast.

    ``attn_mask`` (broadcastable to (..., L, S)): bool keeps where True, float (float32 or
    the query's dtype) is added.
    ``is_causal`` masks the future (no ``attn_mask`` with it). ``dropout_p`` drops attention
    weights (always: pass 0.0 in evaluation, as ``F.dropout(..., training)`` callers do).
    ``scale`` defaults to ``1 / sqrt(E)``.
    """
    op = "scaled_dot_product_attention"
    _check_inputs(op, query, key, value, attn_mask, dropout_p, is_causal, scale)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if dropout_p == 0.0 and query.dtype.itemsize > 2:  # (16-bit floats: op by op, as before)
        return Attention.apply(query, key, value, attn_mask, is_causal, scale)
    weights = _weights(query, key, attn_mask, is_causal, scale)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training=True)
    return ops.matmul(weights, value)


def _weights(query: Tensor, key: Tensor, attn_mask: Any, is_causal: bool, scale: float) -> Tensor:
    """The attention weights, ``softmax(query @ key^T * scale + mask)``, with ops."""
    L, S = query.shape[-2], key.shape[-2]  # noqa: N806
    scores = ops.matmul(query, key.transpose(-2, -1)) * scale  # (..., L, S)
    if is_causal:
        scores = ops.where(causal_mask(L, S, query.device), scores, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = ops.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)  # (a float32 mask: bfloat16 scores)
    if attn_mask is None:
        return ops.softmax(scores, dim=-1)  # subtracts each row's max: no overflow
    return _safe_softmax(scores)


def _attention_formula(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Any, is_causal: bool, scale: float
) -> Tensor:
    """Attention as the ops it is made of (``Attention.decomposition``)."""
    return ops.matmul(_weights(query, key, attn_mask, is_causal, scale), value)


class Attention(Function):
    """Attention without dropout as one op: the scores, mask and softmax in place on one
    (..., L, S) array, and a backward of its own (two products for each input, the softmax's
    rule between), where the formula of ops records eight nodes and their temporaries. The
    numbers are the formula's: the same products, and the same softmax, op for op."""

    name = "scaled_dot_product_attention"
    grad_fn_name = "ScaledDotProductAttentionBackward0"  # (PyTorch's math path: several)
    decomposition = staticmethod(_attention_formula)

    @staticmethod
    def forward(
        ctx: Context, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float
    ) -> Any:
        m = array_module_of(q)
        scores = matmul_arrays(q, m.swapaxes(k, -1, -2))
        scores *= scale
        L, S = scores.shape[-2:]  # noqa: N806
        if is_causal:
            scores[..., m.triu(m.ones((L, S), dtype=bool), 1)] = -m.inf
        elif mask is not None and mask.dtype == bool:
            scores = m.where(mask, scores, -m.inf)
        elif mask is not None:
            scores = scores + mask.astype(scores.dtype)
        if scores.size:  # (the softmax, as ops.softmax computes it, in place)
            top = scores.max(axis=-1, keepdims=True)
            dead = None
            if mask is not None:  # rows with every key hidden: zeros (PyTorch's safe softmax)
                dead = top == -m.inf
                if dead.any():
                    scores = m.where(dead, scores.dtype.type(0), scores)
                    top = scores.max(axis=-1, keepdims=True)
                else:
                    dead = None
            scores -= top
            m.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            if dead is not None:
                scores = m.where(dead, scores.dtype.type(0), scores)
        ctx.is_causal, ctx.scale = is_causal, scale
        ctx.save_for_backward(q, k, v, scores, mask)
        return matmul_arrays(scores, v)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple:
        """For ``out = W @ V``, ``W = softmax(S)``, ``S = Q @ K^T * scale (+ mask)``:
        ``dV = W^T @ dout``, ``dS = W * (dW - sum(dW * W))`` with ``dW = dout @ V^T``, then
        ``dQ = dS @ K * scale`` and ``dK = dS^T @ Q * scale`` (each summed back over
        broadcast batch dims)."""
        q, k, v, w, mask = ctx.saved_tensors
        need_q, need_k, need_v, need_mask = ctx.needs_input_grad[:4]
        if is_grad_enabled():  # create_graph: the weights as ops on q and k, differentiable
            w = _weights(q, k, mask, ctx.is_causal, ctx.scale)
        grad_q = grad_k = grad_v = grad_mask = None
        if need_v:
            grad_v = unbroadcast(w.mT @ grad, v.shape)
        if need_q or need_k or need_mask:
            dw = grad @ v.mT
            ds = w * (dw - (dw * w).sum(-1, keepdim=True))
            if need_mask:
                grad_mask = unbroadcast(ds, mask.shape).to(mask.dtype)
            ds = ds * ctx.scale
            if need_q:
                grad_q = unbroadcast(ds @ k, q.shape)
            if need_k:
                grad_k = unbroadcast(ds.mT @ q, k.shape)
        return grad_q, grad_k, grad_v, grad_mask, None, None


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim, with zeros for rows whose scores are all ``-inf``.

    Such a row would softmax to NaN (0/0), and NaN would come back in backward too, so its
    scores are made finite first and its weights zeroed after: a row of zeros does not
    depend on its scores, and its gradient is zero."""
    with no_grad():
        dead = scores.max(dim=-1, keepdim=True).values == float("-inf")
    weights = ops.softmax(ops.where(dead, 0.0, scores), dim=-1)
    return ops.where(dead, 0.0, weights)


def _check_inputs(
    op: str,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any,
    dropout_p: Any,
    is_causal: Any,
    scale: Any,
) -> None:
    """Shapes, dtypes and flags, checked before any work, in PyTorch's words."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        as_tensor(t, op, name)
        if t.ndim < 2:
            raise RuntimeError(
                f"{op}: expected {name} to have at least 2 dims (..., L or S, E), but got "
                f"shape {t.shape}"
            )
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            f"{op}: Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {query.dtype.name}, key.dtype: {key.dtype.name}, and value.dtype: "
            f"{value.dtype.name} instead."
        )
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected floating point inputs, but got {query.dtype.name}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"{op}: query and key must have the same embedding size E, but got query "
            f"{query.shape} and key {key.shape}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{op}: key and value must have the same sequence length S, but got key "
            f"{key.shape} and value {value.shape}"
        )
    batch = broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2], op=op)
    if not isinstance(is_causal, bool):
        raise TypeError(f"{op}: is_causal must be a bool, but got {type(is_causal).__name__}")
    as_number(dropout_p, op, "dropout_p", low=0.0, high=1.0)  # 1.0: all dropped, zeros
    if scale is not None:
        as_number(scale, op, "scale")
    if attn_mask is None:
        return
    as_tensor(attn_mask, op, "attn_mask")
    if is_causal:
        raise RuntimeError(f"{op}: Explicit attn_mask should not be set when is_causal=True")
    if attn_mask.dtype not in (bool_, float32, query.dtype):
        raise RuntimeError(
            f"{op}: Expected attn_mask dtype to be bool or float or to match query dtype, but "
            f"got attn_mask.dtype: {attn_mask.dtype.name} and query.dtype: {query.dtype.name}"
        )
    scores = tuple(batch) + (query.shape[-2], key.shape[-2])
    try:
        fits = broadcast_shapes(attn_mask.shape, scores, op=op) == scores
    except (RuntimeError, ValueError):
        fits = False
    if not fits:
        raise RuntimeError(
            f"{op}: attn_mask of shape {attn_mask.shape} does not broadcast to the attention "
            f"scores' shape {scores} (..., L, S)"
        )


register(
    Attention,
)
