"""A GPT in the shape of Karpathy's nanoGPT: the same modules, names and initialisation, so
that a PyTorch copy of the model loads its ``state_dict`` and computes the same numbers.

Tokens and positions are embedded and added; ``n_layer`` blocks each let every position
gather information from the earlier ones (causal self-attention) and then think about it
alone (an MLP), both on a LayerNorm-ed copy added back to the residual stream (pre-LN);
a last LayerNorm and ``lm_head``, whose weight is the token embedding's (weight tying),
give each position's logits for the next token.

Generating appends one sampled token at a time. Without a cache every step runs the whole
sequence again, O(T^2) work per token in attention; with a ``KVCache`` per layer each step
runs only the new token, whose query reads the keys and values kept from the steps before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import nn, ops
from ..autograd import no_grad
from ..checks import as_number, describe
from ..creation import arange, ones
from ..dtypes import bool as bool_
from ..dtypes import int64
from ..nn import functional as F
from ..nn import init
from ..nn.attention import scaled_dot_product_attention
from ..ops.selection import multinomial, topk, tril
from ..optim import AdamW
from ..tensor import Tensor


@dataclass
class GPTConfig:
    """The model's sizes: ``block_size`` (the longest context), ``vocab_size``, ``n_layer``
    blocks of ``n_head`` heads over ``n_embd`` channels; ``dropout`` (0 for pretraining)
    and ``bias`` (in the Linears and LayerNorms, as GPT-2)."""

    block_size: int
    vocab_size: int
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0
    bias: bool = True

    def __post_init__(self) -> None:
        for name in ("block_size", "vocab_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"GPTConfig: {name} must be a positive int, but got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(
                f"GPTConfig: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})"
            )
        as_number(self.dropout, "GPTConfig", "dropout", low=0.0, high=1.0, high_open=True)
        if not isinstance(self.bias, bool):
            raise TypeError(f"GPTConfig: bias must be a bool, but got {describe(self.bias)}")


# --- heads as views ---------------------------------------------------------------------
def split_heads(x: Tensor, n_head: int) -> Tensor:
    """(B, T, C) -> (B, n_head, T, C // n_head): each head's channels as a view (no copy)."""
    B, T, C = x.shape  # noqa: N806
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """(B, n_head, T, hs) -> (B, T, n_head * hs): the heads side by side again (one copy:
    after the transpose, a head's channels are no longer next to the other heads')."""
    B, nh, T, hs = x.shape  # noqa: N806
    return x.transpose(1, 2).contiguous().view(B, T, nh * hs)


class KVCache:
    """One layer's keys and values of the tokens seen so far, (B, n_head, length, hs) each."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    @property
    def length(self) -> int:
        """How many positions are cached."""
        return 0 if self.k is None else self.k.shape[-2]

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add the new positions' keys and values; return all of them."""
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = ops.cat([self.k, k], dim=-2)
            self.v = ops.cat([self.v, v], dim=-2)
        return self.k, self.v


# --- the modules ------------------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    """``n_head`` heads of causal attention, computed together: one Linear makes every
    head's queries, keys and values (``c_attn``), one mixes the heads' outputs (``c_proj``)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (split_heads(t, self.n_head) for t in (q, k, v))
        if cache is not None:
            k, v = cache.append(k, v)
        y = attend(q, k, v, self.dropout if self.training else 0.0)
        return self.resid_dropout(self.c_proj(merge_heads(y)))


def attend(q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0) -> Tensor:
    """Causal attention of T new queries over S >= T keys, the queries being the last T
    positions: query i sees keys 0 .. S - T + i (with S == T, the usual causal mask)."""
    T, S = q.shape[-2], k.shape[-2]  # noqa: N806
    if S == T:
        return scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
    if T == 1:  # one new token: it sees everything before it
        return scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
    mask = tril(ones(T, S, dtype=bool_, device=q.device), diagonal=S - T)
    return scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)


class MLP(nn.Module):
    """Each position alone: up to 4 * n_embd channels, GELU, and back down."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A transformer block, pre-LN: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's model: ``transformer.{wte, wpe, drop, h, ln_f}`` and ``lm_head``."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"GPT: expected a GPTConfig, but got {describe(config)}")
        self.config = config
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying: one matrix, two uses
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2: residual projections scaled down
                init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            init.normal_(module.weight, mean=0.0, std=0.02)

    def get_num_params(self, non_embedding: bool = True) -> int:
        """Parameters counted once (the tied matrix once); without the position embedding
        by default, as nanoGPT counts (the token embedding is ``lm_head``'s weight too)."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.transformer.wpe.weight.numel() if non_embedding else n

    def forward(
        self, idx: Tensor, targets: Tensor | None = None, cache: list[KVCache] | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """``(logits, loss)`` for (B, T) token ids. With ``targets`` (B, T; -1 ignored):
        every position's logits (B, T, vocab) and the mean cross-entropy; without: the
        last position's logits (B, 1, vocab) and None. ``cache``: one ``KVCache`` per
        block, holding the positions before ``idx``'s."""
        if not isinstance(idx, Tensor) or idx.ndim != 2 or idx.dtype.is_floating_point:
            raise TypeError(f"GPT: idx must be a (B, T) integer tensor, but got {_what(idx)}")
        if cache is not None and len(cache) != self.config.n_layer:
            raise ValueError(
                f"GPT: expected one KVCache per layer ({self.config.n_layer}), got {len(cache)}"
            )
        t = idx.shape[1]
        past = cache[0].length if cache else 0
        if past + t > self.config.block_size:
            raise ValueError(
                f"GPT: cannot forward a sequence of length {past + t} (idx shape {idx.shape}, "
                f"{past} cached), the block size is only {self.config.block_size}"
            )
        pos = arange(past, past + t, dtype=int64, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for i, block in enumerate(self.transformer.h):
            x = block(x, None if cache is None else cache[i])
        x = self.transformer.ln_f(x)
        if targets is None:  # inference: only the last position's prediction is needed
            return self.lm_head(x[:, -1:, :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(
            logits.view(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1
        )
        return logits, loss

    def configure_optimizers(
        self, weight_decay: float, learning_rate: float, betas: tuple[float, float]
    ) -> AdamW:
        """AdamW with weight decay on the matrices (every parameter of 2 or more dims:
        Linear weights, embeddings) and none on biases and LayerNorm gains, as nanoGPT."""
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.ndim >= 2]
        no_decay = [p for p in params if p.ndim < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return AdamW(groups, lr=learning_rate, betas=betas)

    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: Any = None,
    ) -> Tensor:
        """``idx`` (B, T) followed by ``max_new_tokens`` sampled tokens (see
        ``sample_next_token``). The context is the last ``block_size`` tokens. With
        ``use_cache`` each step runs the new token alone against the cached keys and
        values; once the context is full it slides, every position moves, and the cache
        is rebuilt from the window, which is what recomputing does: the tokens are the
        same with or without the cache."""
        if not isinstance(idx, Tensor) or idx.ndim != 2 or idx.dtype.is_floating_point:
            raise TypeError(f"generate: idx must be a (B, T) integer tensor, but got {_what(idx)}")
        as_number(max_new_tokens, "generate", "max_new_tokens", low=0, integer=True)
        block_size = self.config.block_size
        cache = None
        with no_grad():
            for _ in range(max_new_tokens):
                if not use_cache:
                    logits, _ = self(idx[:, -block_size:])
                elif cache is not None and cache[0].length < block_size:
                    logits, _ = self(idx[:, -1:], cache=cache)  # the new token only
                else:  # the first step, or a full window that slides: fill a new cache
                    cache = [KVCache() for _ in range(self.config.n_layer)]
                    logits, _ = self(idx[:, -block_size:], cache=cache)
                next_token = sample_next_token(logits[:, -1, :], temperature, top_k, generator)
                idx = ops.cat([idx, next_token], dim=1)
        return idx


def sample_next_token(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, generator: Any = None
) -> Tensor:
    """One token per row of (B, vocab) ``logits``, (B, 1) int64: drawn from
    ``softmax(logits / temperature)`` over the ``top_k`` largest logits (all if None).
    A temperature below 1 sharpens the distribution, above 1 flattens it; 0 picks the
    largest logit (greedy)."""
    if not isinstance(logits, Tensor) or logits.ndim != 2:
        raise TypeError(
            f"sample_next_token: logits must be a (B, vocab) tensor, got {_what(logits)}"
        )
    as_number(temperature, "sample_next_token", "temperature", low=0.0)
    if top_k is not None:
        as_number(top_k, "sample_next_token", "top_k", low=1, integer=True)
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        kth = topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return multinomial(F.softmax(logits, dim=-1), num_samples=1, generator=generator)


def _what(x: Any) -> str:
    if isinstance(x, Tensor):
        return f"a tensor of shape {x.shape} and dtype {x.dtype.name}"
    return describe(x)
