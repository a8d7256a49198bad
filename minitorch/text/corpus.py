"""A corpus every Python installation has, and nanoGPT's way of drawing batches from it.

``load_corpus()`` is the text of Python's own documentation topics (``pydoc_data.topics``,
what ``help("if")`` shows: about 465k characters of English prose and code), so nothing
has to be downloaded. ``train_val_split`` keeps the last part for validation, and
``get_batch`` draws random windows of tokens: ``x`` is a window, ``y`` the same window one
token later, so that every position learns to predict the next token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import as_number, describe
from ..creation import arange, randint, tensor
from ..dtypes import int64
from ..random import Generator
from ..shape import as_size
from ..tensor import Tensor


def load_corpus(max_chars: int | None = None) -> str:
    """CPython's documentation topics, sorted by name and joined with blank lines; the
    first ``max_chars`` characters of it when given."""
    try:
        from pydoc_data.topics import topics
    except ImportError as err:  # some distributions split the docs into another package
        raise RuntimeError(
            "load_corpus: this Python has no pydoc_data.topics (the text of help()); "
            "install your distribution's Python documentation package"
        ) from err
    text = "\n\n".join(topics[name] for name in sorted(topics))
    if max_chars is None:
        return text
    return text[: as_size(max_chars, "load_corpus", "max_chars")]


def train_val_split(ids: Sequence[int] | Tensor, val_fraction: float = 0.1) -> tuple:
    """``(train, val)``: the first ``1 - val_fraction`` of the tokens and the rest, as
    1-d int64 tensors (the split is by position, as nanoGPT's, so the two never overlap)."""
    as_number(val_fraction, "train_val_split", "val_fraction", low=0, high=1, low_open=True)
    data = ids.to(int64) if isinstance(ids, Tensor) else tensor(np.asarray(ids), dtype=int64)
    if data.ndim != 1:
        raise ValueError(f"train_val_split: expected a 1-d sequence of ids, got shape {data.shape}")
    n = int(len(data) * (1 - val_fraction))
    if n == 0 or n == len(data):
        raise ValueError(
            f"train_val_split: {len(data)} ids with val_fraction={val_fraction} leave one "
            "part empty; give more ids"
        )
    return data[:n], data[n:]


def get_batch(
    data: Tensor, batch_size: int, block_size: int, generator: Generator | None = None
) -> tuple[Tensor, Tensor]:
    """``(x, y)``, each (batch_size, block_size) int64: ``batch_size`` windows of
    ``block_size`` tokens starting at random positions of the 1-d ``data``, and the same
    windows shifted by one (the targets). Seeded by ``generator`` (the global one if None)."""
    if not isinstance(data, Tensor) or data.ndim != 1 or data.dtype.is_floating_point:
        raise TypeError(f"get_batch: data must be a 1-d integer tensor, but got {_what(data)}")
    batch_size = as_size(batch_size, "get_batch", "batch_size")
    block_size = as_size(block_size, "get_batch", "block_size")
    if len(data) <= block_size:
        raise ValueError(
            f"get_batch: data has {len(data)} tokens, too few for windows of block_size "
            f"{block_size} plus one target"
        )
    starts = randint(0, len(data) - block_size, (batch_size,), generator=generator)
    positions = starts.reshape(-1, 1) + arange(block_size).reshape(1, -1)
    return data[positions].to(int64), data[positions + 1].to(int64)


def _what(x: Any) -> str:
    if isinstance(x, Tensor):
        return f"a tensor of shape {x.shape} and dtype {x.dtype.name}"
    return describe(x)
