"""minitorch.text: byte-level BPE as minbpe (the fast training and encoding agree with the
plain loops), saving without pickle, and the corpus and batches the GPT trains on."""

import json

import numpy as np
import pytest

import minitorch
from minitorch.text import (
    BPETokenizer,
    get_batch,
    get_pair_counts,
    load_corpus,
    merge,
    train_bpe,
    train_val_split,
)


def minbpe_train(data: bytes, vocab_size: int) -> list:
    """minbpe's BasicTokenizer.train, with the plain steps."""
    ids, merges = list(data), []
    for new_id in range(256, vocab_size):
        counts = get_pair_counts(ids)
        pair = max(counts, key=counts.get)  # the first of the most frequent (dict order)
        ids = merge(ids, pair, new_id)
        merges.append(pair)
    return merges


def minbpe_encode(merges: list, text: str) -> list:
    """minbpe's encode: merge the present pair of lowest rank until none is learned."""
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(get_pair_counts(ids), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = merge(ids, pair, 256 + ranks[pair])
    return ids


def test_pair_counts_count_overlaps_in_first_occurrence_order():
    # catches: overlapping pairs counted once, counts in sorted rather than first-seen order
    counts = get_pair_counts([5, 1, 1, 1, 5, 1])
    assert counts == {(5, 1): 2, (1, 1): 2, (1, 5): 1}
    assert list(counts) == [(5, 1), (1, 1), (1, 5)]


def test_merge_replaces_left_to_right_without_overlap():
    # catches: a run "a a a" merged as "a X" (right to left) or twice
    assert merge([1, 1, 1, 2, 1, 1], (1, 1), 9) == [9, 1, 2, 9]
    assert merge([1, 2, 3], (3, 1), 9) == [1, 2, 3]


@pytest.mark.parametrize("seed", range(4))
def test_fast_training_makes_minbpe_s_merges(seed):
    # catches: ties broken by the largest pair code instead of the first occurrence, runs of
    # one byte merged with overlaps, counts that go stale between merges
    rng = np.random.default_rng(seed)
    alphabet = rng.choice(list(b"aab ") if seed % 2 else list(b"abcde\n"), 3000)
    data = bytes(alphabet.tolist()) + b"aaaaaaa bbbb"
    assert train_bpe(data, 300) == minbpe_train(data, 300)


def test_ties_go_to_the_pair_seen_first():
    # catches: ties broken by value (the pair (1, 2) is smaller but occurs later)
    assert train_bpe(bytes([3, 4, 1, 2, 3, 4, 1, 2]), 257) == [(3, 4)]


def test_encode_applies_merges_as_minbpe_and_decode_inverts_it():
    # catches: merges applied in the wrong order, a decode that loses multi-byte characters
    text = load_corpus(max_chars=20_000)
    tok = BPETokenizer.train(text, 320)
    assert tok.vocab_size == 320 and len(tok.merges) == 64
    sample = text[5_000:7_000] + " naïve café — 東京 🙂"
    assert tok.encode(sample) == minbpe_encode(tok.merges, sample)
    assert tok.decode(tok.encode(sample)) == sample
    assert len(tok.encode(sample)) < len(sample.encode("utf-8"))  # it compresses


def test_decode_replaces_cut_characters_and_refuses_unknown_tokens():
    # catches: a decode that raises on half a character, or reads past the vocabulary
    tok = BPETokenizer()
    assert tok.decode(list("é".encode())[:1]) == "\ufffd"
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.decode([256])


def test_save_and_load_round_trip_as_json(tmp_path):
    # catches: merges lost or reordered on the way, tuples saved as something else
    tok = BPETokenizer.train("low lower lowest newer wider " * 20, 270)
    path = tmp_path / "tok.json"
    tok.save(path)
    assert json.loads(path.read_text())["merges"][0] == list(tok.merges[0])
    again = BPETokenizer.load(path)
    assert again.merges == tok.merges and again.encode("lowest") == tok.encode("lowest")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x80\x04not json", "not JSON"),
        ('{"type": "something else"}', "not a saved BPETokenizer"),
        ('{"type": "minitorch.text.BPETokenizer", "version": 9, "merges": []}', "version 9"),
        ('{"type": "minitorch.text.BPETokenizer", "version": 1, "merges": [[1]]}', "pairs"),
        ('{"type": "minitorch.text.BPETokenizer", "version": 1, "merges": [[1, 300]]}', "exist"),
    ],
)
def test_load_refuses_what_is_not_a_tokenizer(tmp_path, content, message):
    # catches: a pickle or a corrupt file half-loaded into a tokenizer that encodes wrongly
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError, match=message):
        BPETokenizer.load(path)


def test_training_refuses_bad_sizes():
    # catches: a vocabulary below the bytes, more merges than the data allows
    with pytest.raises(ValueError, match="at least 256"):
        train_bpe(b"abc", 100)
    with pytest.raises(ValueError, match="allow only"):
        train_bpe(b"abc", 300)


# --- corpus and batches -------------------------------------------------------------------------
def test_the_corpus_is_python_s_documentation_topics():
    # catches: an order that changes between runs, max_chars ignored
    text = load_corpus()
    assert len(text) > 400_000 and 'The "if" statement' in text
    assert load_corpus(max_chars=1000) == text[:1000]


def test_train_val_split_by_position():
    # catches: overlapping parts, the fraction applied to the wrong part
    train, val = train_val_split(list(range(100)), val_fraction=0.2)
    assert train.tolist() == list(range(80)) and val.tolist() == list(range(80, 100))
    assert train.dtype is minitorch.int64
    with pytest.raises(ValueError, match="empty"):
        train_val_split([1, 2], val_fraction=0.6)


def test_get_batch_targets_are_the_inputs_shifted_by_one():
    # catches: targets equal to the inputs, windows running past the end, an unseeded draw
    data = minitorch.arange(50)
    x, y = get_batch(data, 8, 10, minitorch.Generator(3))
    assert x.shape == y.shape == (8, 10) and x.dtype is minitorch.int64
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)
    assert (x.numpy()[:, 1:] == x.numpy()[:, :-1] + 1).all() and y.numpy().max() <= 49
    x2, _ = get_batch(data, 8, 10, minitorch.Generator(3))
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    with pytest.raises(ValueError, match="too few"):
        get_batch(data, 2, 50)
