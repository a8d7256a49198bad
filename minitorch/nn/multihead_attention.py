"""``nn.MultiheadAttention``: attention in several heads, as PyTorch's layer.

Each of ``num_heads`` heads projects the query, key and value to ``embed_dim / num_heads``
features and attends on its own (``scaled_dot_product_attention``); the heads' outputs are
concatenated and projected back by ``out_proj``. The three input projections are one
(3E, E) ``in_proj_weight`` when keys and values have the query's size, or three
``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ: the names PyTorch's state_dict uses.

Masks follow PyTorch's layer, which is the *opposite* of ``scaled_dot_product_attention``
for bools: here True means "may not attend". ``attn_mask`` is (L, S) or (N * num_heads, L,
S); ``key_padding_mask`` (N, S) hides padded keys; a float mask is added to the scores.
With ``need_weights`` the layer also returns the attention weights, averaged over the heads
unless ``average_attn_weights=False``; as in PyTorch, that path uses a plain softmax (a
query with every key hidden gets NaN) while the other gives such a query zeros.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..creation import empty, zeros
from ..dtypes import bool as bool_
from ..shape import as_size
from ..tensor import Tensor
from . import functional as F
from . import init
from .attention import scaled_dot_product_attention
from .linear import Linear
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives ``out_proj`` (its reprs print it)."""


def _as_float_mask(mask: Tensor | None, what: str, dtype: Any) -> Tensor | None:
    """A bool mask (True hides) as 0/-inf; a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return ops.where(mask, float("-inf"), zeros(*mask.shape, dtype=dtype, device=mask.device))
    if not mask.dtype.is_floating_point:
        raise AssertionError(
            f"MultiheadAttention: only bool and floating types of {what} are supported, got "
            f"{mask.dtype.name}"
        )
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Multi-head attention over (L, N, E) inputs ((N, L, E) with ``batch_first``)."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = "MultiheadAttention"
        self.embed_dim = as_size(embed_dim, name, "embed_dim")
        self.num_heads = as_size(num_heads, name, "num_heads")
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"{name}: embed_dim and num_heads must be greater than 0, got embed_dim="
                f"{embed_dim} and num_heads={num_heads} instead"
            )
        if embed_dim % num_heads:
            raise AssertionError(f"{name}: embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                f"{name}: add_bias_kv and add_zero_attn are not supported (only their default, "
                "False)"
            )
        self.kdim = embed_dim if kdim is None else as_size(kdim, name, "kdim")
        self.vdim = embed_dim if vdim is None else as_size(vdim, name, "vdim")
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim = embed_dim // num_heads
        factory = dict(dtype=dtype, device=device)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **factory))
            for unused in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(unused, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's init: Xavier-uniform projections, zero biases (out_proj's weight keeps
        Linear's default)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _projections(self) -> tuple[list[Tensor], list[Tensor | None]]:
        if self._qkv_same_embed_dim:
            weights = list(self.in_proj_weight.chunk(3))
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases = [None] * 3 if self.in_proj_bias is None else list(self.in_proj_bias.chunk(3))
        return weights, biases

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        name = "MultiheadAttention"
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise AssertionError(
                f"{name}: query, key and value should be all 2-D (unbatched) or all 3-D "
                f"(batched), got shapes {query.shape}, {key.shape} and {value.shape}"
            )
        batched = query.ndim == 3
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, E = query.shape  # noqa: N806 - PyTorch's names
        S = key.shape[0]  # noqa: N806
        if E != self.embed_dim or key.shape[2] != self.kdim or value.shape[2] != self.vdim:
            raise AssertionError(
                f"{name}: expected query, key and value with {self.embed_dim}, {self.kdim} and "
                f"{self.vdim} features, got shapes {query.shape}, {key.shape} and {value.shape}"
            )
        if key.shape[:2] != value.shape[:2] or key.shape[1] != N:
            raise AssertionError(
                f"{name}: key and value must be (S, N, *) with the query's batch size {N}, got "
                f"shapes {key.shape} and {value.shape}"
            )
        if is_causal and attn_mask is None:
            raise RuntimeError(
                f"{name}: Need attn_mask if specifying the is_causal hint. You may use the "
                "Transformer module method `generate_square_subsequent_mask` to create this mask."
            )
        mask = self._merged_mask(attn_mask, key_padding_mask, N, L, S, query.dtype)
        weights, biases = self._projections()
        H, D = self.num_heads, self.head_dim  # noqa: N806

        def heads(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
            """(T, N, *) -> projected (N, H, T, D)."""
            return F.linear(x, w, b).reshape(x.shape[0], N, H, D).permute(1, 2, 0, 3)

        q, k, v = (
            heads(x, w, b) for x, w, b in zip((query, key, value), weights, biases, strict=True)
        )
        dropout = self.dropout if self.training else 0.0
        if need_weights:
            scores = ops.matmul(q * (1.0 / math.sqrt(D)), k.transpose(-2, -1))
            if mask is not None:
                scores = scores + mask
            attn = ops.softmax(scores, dim=-1)
            if dropout > 0.0:
                attn = F.dropout(attn, dropout, training=True)
            out = ops.matmul(attn, v)
        else:
            out = scaled_dot_product_attention(q, k, v, mask, dropout_p=dropout)
            attn = None
        out = out.permute(2, 0, 1, 3).reshape(L, N, E)  # (L, N, H*D): the heads side by side
        out = self.out_proj(out)
        if attn is not None and average_attn_weights:
            attn = attn.mean(dim=1)
        if not batched:
            return out.squeeze(1), None if attn is None else attn.squeeze(0)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, attn

    def _merged_mask(
        self,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        N: int,  # noqa: N803
        L: int,  # noqa: N803
        S: int,  # noqa: N803
        dtype: Any,
    ) -> Tensor | None:
        """attn_mask and key_padding_mask as one float mask broadcasting to (N, H, L, S)."""
        name = "MultiheadAttention"
        attn_mask = _as_float_mask(attn_mask, "attn_mask", dtype)
        key_padding_mask = _as_float_mask(key_padding_mask, "key_padding_mask", dtype)
        if attn_mask is not None:
            if attn_mask.ndim == 2 and tuple(attn_mask.shape) == (L, S):
                pass
            elif attn_mask.ndim == 3 and tuple(attn_mask.shape) == (N * self.num_heads, L, S):
                attn_mask = attn_mask.reshape(N, self.num_heads, L, S)
            else:
                raise RuntimeError(
                    f"{name}: The shape of the attn_mask is {attn_mask.shape}, but should be "
                    f"{(L, S)} or {(N * self.num_heads, L, S)}."
                )
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (N, S):
                raise AssertionError(
                    f"{name}: expecting key_padding_mask shape of {(N, S)}, but got "
                    f"{key_padding_mask.shape}"
                )
            key_padding_mask = key_padding_mask.reshape(N, 1, 1, S)
            attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
        return attn_mask
