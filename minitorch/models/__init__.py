"""``minitorch.models``: complete models built from minitorch's layers (chapter 08's GPT)."""

from .gpt import (
    GPT,
    MLP,
    Block,
    CausalSelfAttention,
    GPTConfig,
    KVCache,
    merge_heads,
    sample_next_token,
    split_heads,
)
