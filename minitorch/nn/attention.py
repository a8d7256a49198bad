"""Scaled dot-product attention, as ``torch.nn.functional.scaled_dot_product_attention``.

Each query asks "which keys look like me?": the scores ``q @ k^T * scale`` say how much, a
softmax over the keys turns each row of scores into weights that sum to 1, and the output
is the weighted mean of the values. ``scale`` (default ``1/sqrt(E)``) keeps the scores'
spread independent of the head size, so the softmax does not saturate as E grows; the
softmax subtracts each row's maximum before ``exp``, so large scores cannot overflow.

A mask hides keys: a bool ``attn_mask`` keeps the positions that are True, a float one is
added to the scores (``-inf`` hides), and ``is_causal`` hides the future (query i sees keys
0..i). A query whose keys are all hidden gets zeros, as PyTorch's safe softmax gives.

It is written with minitorch ops (matmul, where, softmax, dropout), so autograd, autocast
(the two matmuls run in bfloat16/float16), the tracer and the ONNX exporter see the ops it
is made of; no backward of its own is needed.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..autograd import no_grad
from ..checks import as_number, as_tensor
from ..creation import ones
from ..dtypes import bool as bool_
from ..dtypes import float32
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
    L, S = query.shape[-2], key.shape[-2]  # noqa: N806
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, key.transpose(-2, -1)) * scale  # (..., L, S)
    if is_causal:
        scores = ops.where(causal_mask(L, S, query.device), scores, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = ops.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)  # (a float32 mask: bfloat16 scores)
    if attn_mask is None:
        weights = ops.softmax(scores, dim=-1)  # subtracts each row's max: no overflow
    else:
        weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training=True)
    return ops.matmul(weights, value)


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
