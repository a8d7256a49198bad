"""Chapter 08's pieces in the framework: the tokenizer's training, the GPT's attention, heads
and blocks, its sampler and its cached decoding, and the learning-rate schedule."""

from __future__ import annotations

from typing import Any

from ..models import gpt
from ..optim import schedules
from ..text import bpe
from .patching import transplant
from .pieces import piece


@piece(
    "08.1",
    "get_pair_counts",
    "merge",
    "train_bpe",
    site="BPETokenizer.train: the merges it learns (your train_bpe)",
)
def _bpe(mine: Any, get_pair_counts: Any, merge: Any, train_bpe: Any) -> None:
    learner = mine.wrap("08.1", "train_bpe", train_bpe)
    package = bpe.train_bpe

    def train(data: Any, vocab_size: int) -> list[tuple[int, int]]:
        plain = isinstance(data, (bytes, bytearray)) and type(vocab_size) is int
        if not plain or vocab_size < 256:
            return package(data, vocab_size)  # (the package's error, in its words)
        return [(int(a), int(b)) for a, b in learner(bytes(data), vocab_size)]

    mine.patches.replace(bpe, "train_bpe", train)


@piece(
    "08.2",
    "causal_attention",
    site="every CausalSelfAttention: the causal attention of its heads, cached steps too",
)
def _attention(mine: Any, causal_attention: Any) -> None:
    learner = mine.wrap("08.2", "causal_attention", causal_attention)
    package = gpt.attend

    def attend(q: Any, k: Any, v: Any, dropout_p: float = 0.0) -> Any:
        if dropout_p:
            mine.package_ran("08.2", "attention dropout")
            return package(q, k, v, dropout_p)
        return learner(q, k, v)

    mine.patches.replace(gpt, "attend", attend)


@piece(
    "08.3",
    "split_heads",
    "merge_heads",
    site="every CausalSelfAttention: its queries, keys and values cut into heads and back",
)
def _heads(mine: Any, split_heads: Any, merge_heads: Any) -> None:
    mine.patches.replace(gpt, "split_heads", mine.wrap("08.3", "split_heads", split_heads))
    mine.patches.replace(gpt, "merge_heads", mine.wrap("08.3", "merge_heads", merge_heads))


@piece("08.4", "Block.forward", site="every transformer Block of a GPT: its forward")
def _block(mine: Any, forward: Any) -> None:
    cls = gpt.Block
    mine.patches.replace(
        cls, "forward", mine.wrap("08.4", "Block.forward", transplant(forward, cls))
    )


@piece("08.5", "sample_next_token", site="GPT.generate: each token it draws")
def _sample(mine: Any, sample_next_token: Any) -> None:
    learner = mine.wrap("08.5", "sample_next_token", sample_next_token)
    mine.patches.replace(gpt, "sample_next_token", learner)


@piece(
    "08.6",
    "generate",
    site="GPT.generate with the KV cache (use_cache=True)",
    uses=("08.5",),
)
def _generate(mine: Any, generate: Any) -> None:
    learner = mine.wrap("08.6", "generate", generate)
    package = gpt.GPT.generate

    def run(
        self: Any,
        idx: Any,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: Any = None,
    ) -> Any:
        if not use_cache or max_new_tokens == 0:
            mine.package_ran("08.6", "use_cache=False, or no token to generate")
            return package(self, idx, max_new_tokens, temperature, top_k, use_cache, generator)
        package(self, idx, 0, temperature, top_k, use_cache, generator)  # (its checks only)
        return learner(self, idx, max_new_tokens, temperature, top_k, generator)

    mine.patches.replace(gpt.GPT, "generate", run)


@piece("08.7", "warmup_cosine", site="WarmupCosineLR: the learning rate of every step")
def _schedule(mine: Any, warmup_cosine: Any) -> None:
    learner = mine.wrap("08.7", "warmup_cosine", warmup_cosine)
    package = schedules.warmup_cosine

    def rate(step: int, warmup_steps: int, max_steps: int, max_lr: float, min_lr: float) -> float:
        package(step, warmup_steps, max_steps, max_lr, min_lr)  # (the package's checks)
        return float(learner(step, warmup_steps, max_steps, max_lr, min_lr))

    mine.patches.replace(schedules, "warmup_cosine", rate)
