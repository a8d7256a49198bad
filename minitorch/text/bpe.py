"""Byte-level byte-pair encoding, as Karpathy's minbpe (its ``BasicTokenizer``).

Text is UTF-8 bytes, tokens 0..255. Training finds the most frequent pair of adjacent
tokens, gives it the next token id (256, 257, ...) and replaces every occurrence, again
and again: each merge shortens the sequence by the pair's count. Encoding applies the
learned merges in the order they were learned (lowest rank first); decoding maps each
token back to its bytes, which is exact, since merges only ever join bytes.

``get_pair_counts`` and ``merge`` are the two steps written plainly, on lists; training and
encoding do the same on numpy arrays, so that a 512-token vocabulary trains on 100k
characters in a second or two.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import describe

Pair = tuple[int, int]

#: The ``"type"`` of a saved tokenizer (JSON).
FORMAT = "minitorch.text.BPETokenizer"
VERSION = 1


def get_pair_counts(ids: Sequence[int]) -> dict[Pair, int]:
    """How often each pair of adjacent tokens occurs, in the order pairs first occur.

    Overlapping pairs count each time: ``[1, 1, 1]`` has the pair ``(1, 1)`` twice."""
    counts: dict[Pair, int] = {}
    for pair in zip(ids[:-1], ids[1:], strict=True):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """``ids`` with every occurrence of ``pair`` replaced by ``new_id``, left to right
    (``[1, 1, 1]`` with ``(1, 1)`` becomes ``[new_id, 1]``)."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


# --- the same two steps on arrays -----------------------------------------------------------
def _pair_codes(ids: np.ndarray, width: int) -> np.ndarray:
    """Each adjacent pair ``(a, b)`` as the one number ``a * width + b``."""
    return ids[:-1] * width + ids[1:]


def _most_frequent_pair(ids: np.ndarray, width: int) -> Pair:
    """The pair with the highest count; of those tied, the one that occurs first
    (``width``: more than the largest token id)."""
    codes = _pair_codes(ids, width)
    if width * width <= 1 << 22:  # a count per possible pair: one pass
        counts = np.bincount(codes)
        best = np.flatnonzero(counts == counts.max())
    else:  # a large vocabulary: count the pairs that occur
        present, counts = np.unique(codes, return_counts=True)
        best = present[counts == counts.max()]
    first = best[0] if len(best) == 1 else codes[np.isin(codes, best)][0]
    return int(first // width), int(first % width)


def _merge_array(ids: np.ndarray, pair: Pair, new_id: int) -> np.ndarray:
    """``merge`` on an array: the same left-to-right replacement, without a Python loop."""
    hits = np.flatnonzero((ids[:-1] == pair[0]) & (ids[1:] == pair[1]))
    if pair[0] == pair[1] and len(hits) > 1:
        # in a run such as 1 1 1 1 the hits overlap (positions 0, 1, 2): going left to
        # right keeps every other one of each run of consecutive positions (0 and 2)
        run_start = np.r_[True, np.diff(hits) != 1]
        first_of_run = np.maximum.accumulate(np.where(run_start, np.arange(len(hits)), 0))
        hits = hits[(np.arange(len(hits)) - first_of_run) % 2 == 0]
    out = ids.copy()
    out[hits] = new_id
    return np.delete(out, hits + 1)


def train_bpe(data: bytes, vocab_size: int) -> list[Pair]:
    """The merges that grow the 256 byte tokens to ``vocab_size`` tokens on ``data``:
    merge k makes token ``256 + k`` from the most frequent pair at that point (ties go to
    the pair that occurs first)."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"train_bpe: data must be bytes, but got {describe(data)}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"train_bpe: vocab_size must be an int, but got {describe(vocab_size)}")
    if vocab_size < 256:
        raise ValueError(
            f"train_bpe: vocab_size must be at least 256 (the bytes), got {vocab_size}"
        )
    ids = np.frombuffer(bytes(data), dtype=np.uint8).astype(np.int64)
    merges: list[Pair] = []
    for new_id in range(256, vocab_size):
        if len(ids) < 2:
            raise ValueError(
                f"train_bpe: {len(data)} bytes of data allow only {len(merges)} merges "
                f"(vocab_size {256 + len(merges)}), not vocab_size {vocab_size}: train on more text"
            )
        pair = _most_frequent_pair(ids, new_id)
        ids = _merge_array(ids, pair, new_id)
        merges.append(pair)
    return merges


class BPETokenizer:
    """A byte-level BPE tokenizer: ``train`` it on text, then ``encode``/``decode``."""

    def __init__(self, merges: Sequence[Pair] = ()) -> None:
        self.merges: list[Pair] = _as_pairs(merges, "BPETokenizer")
        _check_merges(self.merges, "BPETokenizer")
        self.vocab: list[bytes] = [bytes([i]) for i in range(256)]
        for a, b in self.merges:
            self.vocab.append(self.vocab[a] + self.vocab[b])

    @classmethod
    def train(cls, text: str, vocab_size: int) -> BPETokenizer:
        """Learn ``vocab_size - 256`` merges on ``text`` (its UTF-8 bytes)."""
        if not isinstance(text, str):
            raise TypeError(f"BPETokenizer.train: text must be a str, but got {describe(text)}")
        return cls(train_bpe(_utf8(text, "BPETokenizer.train"), vocab_size))

    @property
    def vocab_size(self) -> int:
        """256 byte tokens plus one per merge."""
        return 256 + len(self.merges)

    def encode(self, text: str) -> list[int]:
        """The tokens of ``text``: its bytes, merged by the learned merges in rank order.

        minbpe merges, again and again, the present pair of lowest rank. Merging pair k
        only makes pairs with token ``256 + k``, whose merges come later, so that pair is
        never an earlier one: applying merge 0, then 1, then 2 ... gives the same tokens."""
        if not isinstance(text, str):
            raise TypeError(f"BPETokenizer.encode: text must be a str, but got {describe(text)}")
        ids = np.frombuffer(_utf8(text, "BPETokenizer.encode"), dtype=np.uint8).astype(np.int64)
        for rank, pair in enumerate(self.merges):
            if len(ids) < 2:
                break
            ids = _merge_array(ids, pair, 256 + rank)
        return ids.tolist()

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 (a cut multi-byte
        character) become U+FFFD, the replacement character."""
        if hasattr(ids, "tolist"):  # a tensor or an array of token ids
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError(
                f"BPETokenizer.decode: ids must be a sequence of token ids (ints), but got "
                f"{describe(ids)}"
            )
        out = []
        for i in ids:
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
                raise TypeError(
                    f"BPETokenizer.decode: a token id must be an int, not {describe(i)}"
                )
            if not 0 <= i < self.vocab_size:
                raise ValueError(
                    f"BPETokenizer.decode: token {int(i)} is not in the vocabulary "
                    f"(0 to {self.vocab_size - 1})"
                )
            out.append(self.vocab[int(i)])
        return b"".join(out).decode("utf-8", errors="replace")

    def save(self, path: str | os.PathLike) -> None:
        """Write the merges as JSON (data only: loading it runs no code)."""
        text = json.dumps({"type": FORMAT, "version": VERSION, "merges": self.merges})
        Path(path).write_text(text + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> BPETokenizer:
        """A tokenizer saved with ``save``; anything else is refused with the reason."""
        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(
                f"BPETokenizer.load: {os.fspath(path)!r} is not JSON ({err})"
            ) from None
        if not isinstance(state, dict) or state.get("type") != FORMAT:
            raise ValueError(
                f"BPETokenizer.load: {os.fspath(path)!r} is not a saved BPETokenizer (no "
                f'"type": "{FORMAT}")'
            )
        if state.get("version") != VERSION:
            raise ValueError(
                f"BPETokenizer.load: {os.fspath(path)!r} has format version "
                f"{state.get('version')!r}; this minitorch reads version {VERSION}"
            )
        merges = state.get("merges")
        if not isinstance(merges, list) or not all(
            isinstance(m, list) and len(m) == 2 and all(type(i) is int for i in m) for m in merges
        ):
            raise ValueError(
                f"BPETokenizer.load: {os.fspath(path)!r}: merges must be a list of [int, int] pairs"
            )
        return cls([tuple(m) for m in merges])

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size})"


def _utf8(text: str, op: str) -> bytes:
    """``text``'s UTF-8 bytes; a lone surrogate (which UTF-8 cannot hold) is named."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{op}: text has a lone surrogate {text[err.start]!r} at position {err.start}, "
            "which is not valid Unicode text and has no UTF-8 bytes"
        ) from None


def _as_pairs(merges: Any, op: str) -> list[Pair]:
    """``merges`` as a list of ``(int, int)`` pairs (numpy ints too), or a clear error."""
    if isinstance(merges, (str, bytes)) or not hasattr(merges, "__iter__"):
        raise TypeError(
            f"{op}: merges must be a sequence of (int, int) pairs, got {describe(merges)}"
        )
    pairs = []
    for k, m in enumerate(merges):
        ok = isinstance(m, (tuple, list)) and len(m) == 2
        if not ok or any(
            isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) for i in m
        ):
            raise ValueError(
                f"{op}: merge {k} must be a pair of ints (token ids), got {describe(m)}"
            )
        pairs.append((int(m[0]), int(m[1])))
    return pairs


def _check_merges(merges: list[Pair], op: str) -> None:
    """Merge k may only join tokens that exist before it (bytes and merges 0..k-1), and
    no pair is merged twice."""
    seen: dict[Pair, int] = {}
    for k, (a, b) in enumerate(merges):
        if not (0 <= a < 256 + k and 0 <= b < 256 + k):
            raise ValueError(
                f"{op}: merge {k} joins ({a}, {b}), but only tokens 0 to {255 + k} exist before it"
            )
        if (a, b) in seen:
            raise ValueError(f"{op}: merges {seen[a, b]} and {k} both join ({a}, {b})")
        seen[a, b] = k
