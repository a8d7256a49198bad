"""Pictures for chapter 08's lesson: a GPT's attention, its mask, its scale, its losses, its
sampling and the work a KV cache saves.

Each helper draws one idea and returns a ``matplotlib.figure.Figure`` (pyplot's global state
is left alone, so a notebook shows the figure once, as the cell's value).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ..autograd import no_grad
from ..creation import tensor
from ..models import gpt
from ..nn import functional as F


def attention_weights(block: Any, x: Any) -> np.ndarray:
    """The attention weights of ``block``'s heads on its input ``x`` (1, T, C): an array of
    shape (n_head, T, T), row i holding how much position i reads of each position."""
    attn = block.attn
    with no_grad():
        q, k, _ = attn.c_attn(block.ln_1(x)).split(attn.n_embd, dim=2)
        q, k = gpt.split_heads(q, attn.n_head), gpt.split_heads(k, attn.n_head)
        T = q.shape[-2]  # noqa: N806
        scores = (q @ k.mT).numpy()[0] / math.sqrt(q.shape[-1])
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    return F.softmax(tensor(scores), dim=-1).numpy()


def _shown(token: str) -> str:
    """A token as a label: spaces as middle dots, newlines as a return sign."""
    return token.replace(" ", "\u00b7").replace("\n", "\u23ce").replace("\t", "\u21e5")


def plot_attention(
    weights: np.ndarray, tokens: Sequence[str], heads: Sequence[int], title: str = ""
) -> Figure:
    """Heat maps of the chosen heads' weights: row = the position that reads, column = the
    position it reads from; the labels are the tokens."""
    labels = [_shown(t) for t in tokens]
    n = len(heads)
    fig = Figure(figsize=(4.4 * n, 4.6), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, h in zip(axes, heads, strict=True):
        image = ax.imshow(weights[h], cmap="magma", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_title(f"head {h}")
        ax.set_xlabel("reads from (key)")
    axes[0].set_ylabel("position (query)")
    fig.colorbar(image, ax=axes[-1], shrink=0.7, label="attention weight")
    if title:
        fig.suptitle(title)
    return fig


def plot_mask(T: int, S: int) -> Figure:  # noqa: N803 - the lesson's names
    """The causal mask, where a query may look (dark): T queries over their own T keys, and T
    new queries over S keys of which S - T are cached (aligned at the bottom right)."""
    fig = Figure(figsize=(8.6, 3.2), layout="constrained")
    axes = fig.subplots(1, 2, width_ratios=[T, S])
    cases = ((T, T, f"T = S = {T}: tril()"), (T, S, f"T = {T} new, S = {S}: tril(S - T)"))
    for ax, (rows, cols, title) in zip(axes, cases, strict=True):
        visible = np.tril(np.ones((rows, cols)), cols - rows)
        ax.imshow(visible, cmap="Blues", vmin=-0.3, vmax=1.2)
        for i in range(rows):
            for j in range(cols):
                seen = bool(visible[i, j])
                ax.text(
                    j,
                    i,
                    "\u2713" if seen else "-inf",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="k" if seen else "0.45",
                )
        ax.set_xticks(range(cols))
        ax.set_yticks(range(rows), [f"{cols - rows + i}" for i in range(rows)])
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
        ax.set_title(title, fontsize=10)
    return fig


def plot_scale_effect(head_sizes: Sequence[int], keys: int = 64, trials: int = 200) -> Figure:
    """With unit-variance queries and keys, the scores' spread grows as sqrt(E); the largest
    softmax weight per row then heads for 1 (a saturated softmax, whose gradient vanishes)
    unless the scores are divided by sqrt(E)."""
    rng = np.random.default_rng(0)
    raw, scaled = [], []
    for e in head_sizes:
        q = rng.standard_normal((trials, 1, e))
        k = rng.standard_normal((trials, keys, e))
        scores = (q @ np.swapaxes(k, 1, 2))[:, 0]
        for out, s in ((raw, scores), (scaled, scores / math.sqrt(e))):
            w = np.exp(s - s.max(axis=1, keepdims=True))
            out.append(float((w / w.sum(axis=1, keepdims=True)).max(axis=1).mean()))
    fig = Figure(figsize=(6.4, 3.3), layout="constrained")
    ax = fig.subplots()
    ax.plot(head_sizes, raw, "o-", label="softmax(q k^T)")
    ax.plot(head_sizes, scaled, "o-", label="softmax(q k^T / sqrt(E))")
    ax.axhline(1.0 / keys, color="0.6", linestyle=":", label=f"uniform over {keys} keys")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("head size E")
    ax.set_ylabel("largest weight of a row (mean)")
    ax.set_title(f"One query over {keys} random keys")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return fig


def plot_losses(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    baselines: Mapping[str, float],
    title: str = "",
    train: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Figure:
    """Validation loss per step for each run (``name -> (steps, losses)``), the training loss
    faintly behind, and each baseline as a horizontal line."""
    fig = Figure(figsize=(7.4, 4.0), layout="constrained")
    ax = fig.subplots()
    if train is not None:
        ax.plot(*train, color="0.8", linewidth=1.0, label="training loss (minitorch)")
    styles = [dict(linewidth=5.0, color="#b0b7bf"), dict(linewidth=1.6, color="#0969da")]
    for (name, (steps, losses)), style in zip(curves.items(), styles * len(curves), strict=False):
        ax.plot(steps, losses, marker="o", markersize=3, label=name, **style)
    for (name, value), color in zip(baselines.items(), ("#cf222e", "#9a6700"), strict=False):
        ax.axhline(value, color=color, linestyle="--", linewidth=1.2, label=f"{name}: {value:.2f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return fig


def plot_next_token(distributions: Mapping[str, np.ndarray], labels: Sequence[str]) -> Figure:
    """The probabilities of the most likely next tokens under each sampling setting."""
    fig = Figure(figsize=(9.0, 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(distributions)
    for i, (name, probs) in enumerate(distributions.items()):
        offset = (i - (len(distributions) - 1) / 2) * width
        ax.bar(np.arange(len(labels)) + offset, probs, width=width, label=name)
    ax.set_xticks(range(len(labels)), [_shown(t) for t in labels], rotation=45, fontsize=9)
    ax.set_ylabel("probability")
    ax.set_title("The next token after the prompt, as each setting samples it")
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    return fig


def plot_cache_work(block_size: int) -> Figure:
    """Per new token, from a one-token prompt to a full window: how many positions go through
    the model and how many attention scores (query-key products) are computed, recomputing
    the window each step versus running only the new token against a KV cache."""
    t = np.arange(1, block_size + 1)
    fig = Figure(figsize=(9.0, 3.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    for ax, recompute, cached, what in (
        (left, t, np.ones_like(t), "positions run through the model"),
        (right, t * (t + 1) // 2, t, "attention scores computed (per head and layer)"),
    ):
        ax.plot(t, recompute, label="recomputing the window")
        ax.plot(t, cached, label="with a KV cache")
        ax.set_xlabel("length of the sequence so far")
        ax.set_title(what, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
    left.set_ylabel("per new token")
    return fig


def plot_compression(vocab_sizes: Sequence[int], chars_per_token: Sequence[float]) -> Figure:
    """Characters per token of a text as the BPE vocabulary grows."""
    fig = Figure(figsize=(6.0, 3.0), layout="constrained")
    ax = fig.subplots()
    ax.plot(vocab_sizes, chars_per_token, "o-")
    ax.set_xlabel("vocabulary size (256 bytes + merges)")
    ax.set_ylabel("characters per token")
    ax.set_title("Each merge shortens the text")
    ax.grid(alpha=0.3)
    return fig


#: The graph nodes of exercise 08.3 (the heads' split and merge), which the lesson's
#: listing of a compiled block leaves out.
_HEAD_RESHAPES = ("view", "permute", "clone")


def graph_without_head_reshapes(graph: Any) -> str:
    """A compiled block's graph as text, without exercise 08.3's nodes, and a line saying
    how many were left out."""
    every = str(graph).splitlines()
    shown = [line for line in every if not any(f"= {op}(" in line for op in _HEAD_RESHAPES)]
    note = (
        f"({len(every) - len(shown)} nodes of exercise 08.3, the heads' split and merge, not shown)"
    )
    return "\n".join([*shown, note])
