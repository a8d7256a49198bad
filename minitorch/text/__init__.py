"""``minitorch.text``: a byte-level BPE tokenizer and a corpus that needs no download."""

from .bpe import BPETokenizer, get_pair_counts, merge, train_bpe
from .corpus import get_batch, load_corpus, train_val_split

__all__ = [
    "BPETokenizer",
    "get_batch",
    "get_pair_counts",
    "load_corpus",
    "merge",
    "train_bpe",
    "train_val_split",
]
