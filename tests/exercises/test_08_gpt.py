"""Graded tests for chapter 08 (the capstone GPT).

The *probes* run the learner's piece inside the real framework: their byte-pair encoder on
text, their attention on minitorch tensors with autograd recording, their heads as views of
a real activation, their block's forward on a real ``Block`` of the package's modules, their
sampler with a seeded ``Generator``, their decoding loop on a real ``GPT``, their schedule at
chosen steps. A probe returns what came out as plain data (token lists, arrays, shapes,
dtypes, strides, the calls the model saw). The *judges* (``@exercise``) compute the same with
minitorch's own pieces, here in the grader, and compare: type, dtype and exact shape first,
then values. Sizes, seeds, prompts and steps are the grader's. While the learner's code runs,
the package's own version of the piece is switched off: an answer that calls it gets no
points for the exercise (see :mod:`minitorch.course.grading.delegation`).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

import minitorch
from minitorch import Tensor, ops
from minitorch.course.grading import exercise, forbid, forbidding, probe, tensor_data
from minitorch.course.grading.delegation import refusing_ops
from minitorch.course.grading.judging import checked_array
from minitorch.course.grading.probes import LearnerError
from minitorch.course.grading.results import NOT_IMPLEMENTED
from minitorch.models import gpt
from minitorch.models.gpt import GPT, GPTConfig, KVCache
from minitorch.nn import attention
from minitorch.ops.selection import tril
from minitorch.optim import lr_scheduler, schedules
from minitorch.text import bpe

# What each exercise may not hand its piece to.
BPE = forbid(
    bpe.get_pair_counts,
    bpe.merge,
    bpe.train_bpe,
    bpe._merge_array,
    bpe._most_frequent_pair,
    bpe._pair_codes,
    bpe.BPETokenizer,
)
# catches: the package's attention however reached (F.scaled_dot_product_attention, the
# model's attend) and a softmax handed to minitorch (F.softmax, Tensor.softmax, nn.Softmax:
# the op itself is refused below, since minitorch's code applies it on the caller's behalf)
ATTENTION = forbid(attention.scaled_dot_product_attention, attention._safe_softmax, gpt.attend)
_SOFTMAX_OPS = (ops.Softmax, ops.LogSoftmax)
HEADS = forbid(gpt.split_heads, gpt.merge_heads)
# (the class: an alias of the package's Block, or a subclass that keeps its forward, is it)
BLOCK = forbid(gpt.Block)
SAMPLE = forbid(gpt.sample_next_token, gpt.GPT.generate)
GENERATE = forbid(gpt.GPT.generate)
SCHEDULE = forbid(schedules.warmup_cosine, schedules.WarmupCosineLR, lr_scheduler.CosineAnnealingLR)

_MISSING = object()


def _plain(value):
    """``value`` with numpy's scalars as Python's (a message shows 3, not np.int64(3))."""
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _number(value):
    value = float(value)
    return repr(value) if not math.isfinite(value) else f"{value:.8g}"


def assert_close(got, expected, what, rtol=1e-5, atol=1e-8):
    """``got`` has ``expected``'s shape and close values; the message names the first element
    that differs, with plain numbers, and says when it is not a number at all."""
    got = checked_array(got, expected, what)
    expected = np.asarray(expected)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(got, expected, rtol=rtol, atol=atol)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        at = f" at index {index}" if index else ""
        value = got[index]
        note = ""
        if not np.isfinite(value):
            count = int((~np.isfinite(got)).sum())
            note = f" ({count} of {got.size} values are nan or inf: an overflow, or 0 / 0?)"
        raise AssertionError(
            f"{what} is {_number(value)}{at}, expected {_number(expected[index])}{note}"
        )
    return got


def _values(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


def _grad(t):
    return None if t.grad is None else _values(t.grad)


def _same_tensor(got, expected, what, rtol=1e-5, atol=1e-6):
    """``got`` (a probe's ``tensor_data``) is a minitorch Tensor of ``expected``'s dtype and
    shape, with close values: each checked before the next."""
    kind = got.get("type") if isinstance(got, dict) else type(got).__name__
    assert kind == "Tensor", f"{what} is a {kind}, expected a minitorch Tensor"
    assert got["dtype"] == str(expected.dtype), (
        f"{what} has dtype {got['dtype']}, expected {expected.dtype}"
    )
    assert tuple(got["shape"]) == tuple(expected.shape), (
        f"{what} has shape {tuple(got['shape'])}, expected {tuple(expected.shape)}"
    )
    return assert_close(got["values"], _values(expected), what, rtol=rtol, atol=atol)


def _close_grad(got, expected, what, rtol=1e-5, atol=1e-7):
    assert got is not None, f"{what} is None: no gradient reached it (is the graph cut?)"
    assert_close(got, _values(expected), what, rtol=rtol, atol=atol)


# --- 08.1 byte-pair encoding -----------------------------------------------------------------
@probe(forbid=BPE)
def pair_counts(nb, ids):
    counts = nb.get_pair_counts(list(ids))
    if not isinstance(counts, dict):
        return {"type": type(counts).__name__}
    return {"type": "dict", "items": [[list(pair), count] for pair, count in counts.items()]}


@probe(forbid=BPE)
def merged(nb, ids, pair, new_id):
    given = list(ids)
    out = nb.merge(given, tuple(pair), new_id)
    listed = list(out) if isinstance(out, (list, tuple)) else None
    return {"type": type(out).__name__, "ids": listed, "input kept": given == list(ids)}


@probe(forbid=BPE)
def bpe_merges(nb, text, vocab_size):
    merges = nb.train_bpe(text.encode("utf-8"), vocab_size)
    if not isinstance(merges, (list, tuple)):
        return {"type": type(merges).__name__}
    pairs = [list(m) if isinstance(m, (list, tuple)) else m for m in merges]
    return {"type": "list", "merges": pairs}


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_counts(run, ids):
    got = run(pair_counts, ids)
    call = f"get_pair_counts({ids})"
    assert got["type"] == "dict", f"{call} returned a {got['type']}, expected a dict"
    expected = list(bpe.get_pair_counts(ids).items())
    items = []
    for pair, count in got["items"]:
        assert len(pair) == 2 and all(_is_int(i) for i in pair) and _is_int(count), (
            f"{call} has the entry {_plain(pair)!r}: {_plain(count)!r}; keys are pairs of "
            "ids (a, b), values their counts"
        )
        items.append(((int(pair[0]), int(pair[1])), int(count)))
    got_counts, expected_counts = dict(items), dict(expected)
    for pair, count in expected:
        found = got_counts.get(pair, 0)
        assert found == count, f"{call} counts the pair {pair} {found} times, expected {count}"
    extra = [p for p in got_counts if p not in expected_counts]
    assert not extra, f"{call} counts the pair {extra[0]}, which is not in the ids"
    order = [p for p, _ in items]
    first = [p for p, _ in expected]
    assert order == first, (
        f"{call} lists the pairs in the order {order}; expected the order in which they first "
        f"occur, {first} (a dict filled while walking the ids keeps it)"
    )


# catches: overlapping pairs counted once ([1, 1, 1] holds (1, 1) twice), the last pair
# left out (a loop that stops one early), a pair counted backwards (b, a), a Counter of
# single ids instead of pairs
@exercise("08.1")
def test_pair_counts_of_small_sequences(run):
    for ids in ([1, 1, 1], [5, 6, 5, 6, 5], [7], [], [3, 4]):
        _check_counts(run, ids)


# catches: the pairs sorted (by pair or by count) instead of in the order they first occur
@exercise("08.1")
def test_pair_counts_in_the_order_pairs_first_occur(run):
    ids = [9, 1, 9, 1, 2, 0, 2, 0, 2, 8, 0, 3]
    _check_counts(run, ids)
    _check_counts(run, [int(i) for i in run.rng.integers(0, 6, size=40)])


def _check_merge(run, ids, pair, new_id):
    got = run(merged, ids, list(pair), new_id)
    call = f"merge({ids}, {pair}, {new_id})"
    assert got["type"] in ("list", "tuple"), f"{call} returned a {got['type']}, expected a list"
    assert got["input kept"], f"{call} changed the list it was given; return a new list"
    expected = bpe.merge(ids, pair, new_id)
    assert got["ids"] == expected, f"{call} returned {_plain(got['ids'])}, expected {expected}"


# catches: overlapping matches replaced twice ([1, 1, 1] must become [new, 1], left to
# right), a match not skipped over (i += 1 after it), the last id dropped, matching from the
# right, a merge done in place on the given list
@exercise("08.1")
def test_merge_replaces_left_to_right(run):
    _check_merge(run, [1, 1, 1], (1, 1), 256)
    _check_merge(run, [1, 1, 1, 1], (1, 1), 300)
    _check_merge(run, [1, 2, 1, 2, 3], (1, 2), 257)
    _check_merge(run, [3, 1, 2], (1, 2), 258)
    _check_merge(run, [2, 1, 3, 1], (1, 2), 259)
    _check_merge(run, [4], (4, 4), 260)
    ids = [int(i) for i in run.rng.integers(0, 3, size=30)]
    _check_merge(run, ids, (int(ids[3]), int(ids[4])), 261)


def _check_train(run, text, vocab_size):
    got = run(bpe_merges, text, vocab_size)
    call = f"train_bpe({text[:24]!r}{'...' if len(text) > 24 else ''}, {vocab_size})"
    assert got["type"] == "list", f"{call} returned a {got['type']}, expected a list of pairs"
    expected = bpe.train_bpe(text.encode("utf-8"), vocab_size)
    merges = got["merges"]
    assert len(merges) == len(expected), (
        f"{call} made {len(merges)} merges, expected vocab_size - 256 = {len(expected)}"
    )
    for k, (m, e) in enumerate(zip(merges, expected, strict=True)):
        assert isinstance(m, list) and len(m) == 2 and all(_is_int(i) for i in m), (
            f"{call}: merge {k} is {_plain(m)!r}, expected a pair of token ids such as {e}"
        )
        assert tuple(int(i) for i in m) == e, (
            f"{call}: merge {k} (which makes token {256 + k}) joins {tuple(_plain(m))}, "
            f"expected {e}"
        )


#: A text on which merging the ids written out as a string goes wrong: "686" and "8 6"...
_STRING_MERGE_TRAP = "8xa8686xb8 "


def _words(run, count):
    words = ["the ", "then ", "there ", "attend ", "tensor ", "ten ", "net ", "at "]
    return "".join(words[int(i)] for i in run.rng.integers(0, len(words), size=count))


# catches: new ids from 255 (merge k makes 256 + k), one merge too few or too many, counts
# taken on the original bytes every round (the merged sequence is what is counted next), a
# round that forgets to merge
@exercise("08.1")
def test_train_bpe_on_text(run):
    _check_train(run, _words(run, 60), 256 + 20)
    _check_train(run, "aaabdaaabac", 256 + 3)  # minbpe's (and Wikipedia's) example
    _check_train(run, "tiny", 256)


# catches: ties broken by the pair's value (largest or smallest) or by the last pair seen,
# instead of the pair that occurs first
@exercise("08.1")
def test_train_bpe_breaks_ties_by_first_occurrence(run):
    _check_train(run, "cd ab cd ab", 257)  # (c, d) and (a, b) tie: (c, d) comes first
    _check_train(run, "ab cd ab cd", 257)  # ... and now (a, b) does
    _check_train(run, "xy yx xy yx zz zz", 259)


# catches: the text's characters merged instead of its UTF-8 bytes (data.decode(), ord(c)),
# which gives ids above 255 for é, ü or —
@exercise("08.1")
def test_train_bpe_on_utf8_bytes(run):
    _check_train(run, "naïve café — größer, naïve café — größer! " * 3, 256 + 12)


# catches: a merge done on the ids written out as a string (str.replace of "1 2"), which
# also matches inside ids of several digits: "11 2" holds "1 2", and "256 97" holds "56 97"
@exercise("08.1")
def test_merge_matches_whole_ids(run):
    _check_merge(run, [11, 2, 1, 21, 1, 2], (1, 2), 300)
    _check_merge(run, [256, 97, 56, 97, 5, 69, 7], (56, 97), 301)
    _check_merge(run, [12, 1, 2, 3, 12, 3, 3], (12, 3), 302)


# catches: training stopped once the best pair occurs only once (a merge is made while any
# pair is left, however rare)
@exercise("08.1")
def test_train_bpe_merges_pairs_that_occur_once(run):
    _check_train(run, "abcdefg", 256 + 5)
    _check_train(run, "xyzxyw", 256 + 4)


# catches: the text stripped of its leading and trailing whitespace, or its whitespace
# normalised, before training (every byte is data: indentation and newlines included);
# training on the ids written out as a string, which goes wrong on runs of one byte
# ("aaaa") and once merged ids of three digits appear
@exercise("08.1")
def test_train_bpe_keeps_every_byte(run):
    _check_train(run, "\n\n\n    " + _words(run, 16) + "    \n\n\n", 256 + 12)
    _check_train(run, "aaaa aaaa bbbbbb  aaaa", 256 + 5)
    _check_train(run, _STRING_MERGE_TRAP, 256 + 6)


def _check_no_pair_left(run, text, vocab_size):
    call = f"train_bpe({text!r}, {vocab_size})"
    possible = max(len(text.encode("utf-8")) - 1, 0)
    try:
        got = run(bpe_merges, text, vocab_size)
    except LearnerError as err:
        if err.status == NOT_IMPLEMENTED:
            raise
        assert err.kind == "ValueError", (
            f"{call} raised {err.kind} ({err.message}); expected a ValueError: the data "
            f"allow {possible} merges, not {vocab_size - 256}"
        )
        return
    made = len(got["merges"]) if got.get("type") == "list" else got.get("type")
    raise AssertionError(
        f"{call} returned {made} merges without an error; expected a ValueError: no pair is "
        f"left after {possible} merges, so vocab_size {vocab_size} cannot be reached"
    )


# catches: fewer merges returned without a word when no pair is left before vocab_size
# (the vocabulary would be smaller than asked), an IndexError or KeyError from an empty count
@exercise("08.1")
def test_train_bpe_refuses_when_no_pair_is_left(run):
    _check_no_pair_left(run, "ab", 256 + 2)
    _check_no_pair_left(run, "a", 256 + 1)
    _check_no_pair_left(run, "abcd", 256 + 9)
    _check_train(run, "", 256)  # no merge asked for: none made, no error


# --- 08.2 causal attention -------------------------------------------------------------------
def _qkv(seed, lead, T, S, E, dtype, kind="normal"):  # noqa: N803 - the formula's names
    """q (lead, T, E), k and v (lead, S, E), leaves that require grad. ``kind`` "large": scores
    in the hundreds, positive for even queries and negative for odd ones; "future": each
    later key scores some 150 more (a query's hidden keys dwarf the ones it sees)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*lead, T, E))
    k = rng.standard_normal((*lead, S, E))
    v = rng.standard_normal((*lead, S, E))
    if kind == "large":
        k = np.abs(k) + 1.0
        sign = np.where(np.arange(T) % 2 == 0, 1.0, -1.0)[:, None]
        q = (np.abs(q) + 1.0) * sign * 20.0
    elif kind == "future":  # each key scores about 150 more than the one before it
        q = 1.0 + 0.1 * q
        k = (1.0 + 0.1 * k) * (np.arange(S)[:, None] + 1.0) * 150.0 / math.sqrt(E)
    dtype = getattr(minitorch, dtype)
    return [minitorch.tensor(a, dtype=dtype, requires_grad=True) for a in (q, k, v)]


@probe
def attention_out(nb, spec, grad_weights):
    q, k, v = _qkv(*spec)
    refused = refusing_ops("minitorch's own softmax op", *_SOFTMAX_OPS)
    with forbidding(ATTENTION, nb), refused, np.errstate(all="ignore"):
        out = nb.causal_attention(q, k, v)
    data = tensor_data(out)
    if grad_weights is not None and isinstance(out, Tensor):
        if not out.requires_grad:
            data["grads"] = None
        else:
            (out * minitorch.tensor(grad_weights, dtype=out.dtype)).sum().backward()
            data["grads"] = [_grad(t) for t in (q, k, v)]
    return data


def _reference_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]  # noqa: N806
    visible = tril(minitorch.ones(T, S, dtype=minitorch.bool), diagonal=S - T)
    return attention.scaled_dot_product_attention(q, k, v, attn_mask=visible)


def _attention_case(run, lead, T, S, E, dtype="float64", kind="normal", grad=False):  # noqa: N803
    spec = [int(run.rng.integers(1 << 30)), list(lead), T, S, E, dtype, kind]
    weights = run.rng.standard_normal((*lead, T, E)) if grad else None
    got = run(attention_out, spec, weights)
    q, k, v = _qkv(*spec)
    expected = _reference_attention(q, k, v)
    what = f"causal_attention of q {tuple(q.shape)} over k, v {tuple(k.shape)} ({dtype})"
    if kind == "large":
        what += " with scores in the hundreds"
    elif kind == "future":
        what += ", each key scoring 150 more than the one before"
    # (float32 scores in the hundreds are rounded to about 1e-5: so are the weights)
    tol = dict(rtol=1e-7, atol=1e-9) if dtype == "float64" else dict(rtol=1e-3, atol=1e-4)
    _same_tensor(got, expected, what, **tol)
    if grad:
        assert got.get("grads") is not None, (
            f"{what}: the result does not require grad; build it from q, k and v with minitorch "
            "ops, so that autograd records the graph (no .numpy(), .detach() or new tensors)"
        )
        (expected * minitorch.tensor(weights)).sum().backward()
        for name, g, t in zip("qkv", got["grads"], (q, k, v), strict=True):
            _close_grad(g, t.grad, f"{what}: the gradient of {name}", rtol=1e-6, atol=1e-9)


# catches: no causal mask (the future leaks in), a mask that hides the diagonal (a query
# must see itself) or lets one future key through, no 1/sqrt(E) scale or 1/E instead, the
# softmax taken over the queries (dim -2), weights masked after the softmax (rows no longer
# sum to 1), masked scores set to 0 instead of -inf
@exercise("08.2")
def test_causal_attention_over_its_own_sequence(run):
    _attention_case(run, (2, 3), 5, 5, 4)
    _attention_case(run, (1,), 7, 7, 6)
    _attention_case(run, (), 4, 4, 9)


# catches: the mask aligned top-left (query i sees keys 0..i) when there are more keys than
# queries: with a cache, the T new queries are the last T positions (tril(S - T))
@exercise("08.2")
def test_new_queries_over_cached_keys(run):
    _attention_case(run, (2, 2), 1, 6, 4)
    _attention_case(run, (1, 3), 3, 7, 5)
    _attention_case(run, (2,), 2, 9, 8)


# catches: no max subtracted before exp (exp overflows to inf, the row becomes nan), one max
# for the whole tensor instead of one per row (rows far below it underflow to 0 / 0), a result
# in another dtype than the inputs'
@exercise("08.2")
def test_attention_of_large_scores_is_stable(run):
    _attention_case(run, (2, 2), 6, 6, 8, dtype="float32", kind="large")
    _attention_case(run, (1,), 2, 5, 8, dtype="float32", kind="large")
    _attention_case(run, (2,), 4, 4, 4, dtype="float32")


# catches: each row's maximum taken over all its keys, the hidden (future) ones included
# (before the mask, or over the whole score matrix): when the hidden keys score far above
# the visible ones, every visible exponent underflows to 0 and the row is 0 / 0 = nan
@exercise("08.2")
def test_hidden_keys_do_not_set_the_shift(run):
    _attention_case(run, (2,), 5, 5, 4, dtype="float32", kind="future")
    _attention_case(run, (1, 2), 2, 6, 8, dtype="float32", kind="future")


# catches: a result computed outside autograd (numpy, .detach(), a new tensor from values),
# so no gradient reaches q, k or v; a gradient cut in the keys' or the values' path
@exercise("08.2")
def test_gradients_flow_to_queries_keys_and_values(run):
    _attention_case(run, (2, 2), 5, 5, 4, grad=True)
    _attention_case(run, (1,), 2, 6, 3, grad=True)


# --- 08.3 heads as views --------------------------------------------------------------------
def _activation(seed, B, T, C, sliced):  # noqa: N803
    """A (B, T, C) activation; ``sliced``: the middle third of a (B, T, 3C) one, as
    ``c_attn(x).split(C, dim=2)`` gives the keys (a view that is not contiguous)."""
    rng = np.random.default_rng(seed)
    if not sliced:
        return minitorch.tensor(rng.standard_normal((B, T, C)), dtype=minitorch.float32)
    wide = minitorch.tensor(rng.standard_normal((B, T, 3 * C)), dtype=minitorch.float32)
    return wide.split(C, dim=2)[1]


@probe(forbid=HEADS)
def split_probe(nb, seed, B, T, C, n_head, sliced):  # noqa: N803
    x = _activation(seed, B, T, C, sliced)
    out = nb.split_heads(x, n_head)
    data = tensor_data(out)
    if isinstance(out, Tensor):
        data["shares storage"] = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        data["strides"] = tuple(out.stride())
        data["offset"] = int(out.storage_offset())
    return data


def _split_case(run, B, T, C, n_head, sliced=False):  # noqa: N803
    seed = int(run.rng.integers(1 << 30))
    got = run(split_probe, seed, B, T, C, n_head, sliced)
    x = _activation(seed, B, T, C, sliced)
    what = f"split_heads of a {tuple(x.shape)} activation into {n_head} heads"
    expected = gpt.split_heads(x, n_head)
    _same_tensor(got, expected, what, rtol=0, atol=0)
    return got, expected, what


# catches: the view (B, n_head, T, hs) without the transpose (a head then holds pieces of
# several positions), hs from the wrong dim, the channels cut in the wrong order (hs, n_head)
@exercise("08.3")
def test_split_heads_gives_each_head_its_channels(run):
    _split_case(run, 2, 5, 12, 3)
    _split_case(run, 1, 4, 8, 2)
    _split_case(run, 3, 2, 8, 4)


# catches: a copy (.contiguous(), .clone(), numpy): the heads must be a view of the
# activation, its strides reordered, as q, k and v of c_attn's output are
@exercise("08.3")
def test_split_heads_is_a_view(run):
    for sliced in (False, True):
        got, expected, what = _split_case(run, 2, 6, 12, 3, sliced)
        assert got["shares storage"], (
            f"{what} copies the data: the heads must share x's storage (a view, no copy)"
        )
        assert tuple(got["strides"]) == tuple(expected.stride()), (
            f"{what} has strides {tuple(got['strides'])}, expected {tuple(expected.stride())} "
            "(the activation's own strides, reordered by the transpose)"
        )
        assert got["offset"] == expected.storage_offset(), (
            f"{what} starts at storage offset {got['offset']}, expected {expected.storage_offset()}"
        )


def _heads(seed, B, nh, T, hs, transposed):  # noqa: N803
    """(B, nh, T, hs) head outputs: contiguous (as attention returns them), or a transposed
    view of a (B, T, nh, hs) tensor."""
    rng = np.random.default_rng(seed)
    if not transposed:
        return minitorch.tensor(rng.standard_normal((B, nh, T, hs)), dtype=minitorch.float32)
    base = minitorch.tensor(rng.standard_normal((B, T, nh, hs)), dtype=minitorch.float32)
    return base.transpose(1, 2)


@probe(forbid=HEADS)
def merge_probe(nb, seed, B, nh, T, hs, transposed):  # noqa: N803
    return tensor_data(nb.merge_heads(_heads(seed, B, nh, T, hs, transposed)))


def _merge_case(run, B, nh, T, hs, transposed=False):  # noqa: N803
    seed = int(run.rng.integers(1 << 30))
    got = run(merge_probe, seed, B, nh, T, hs, transposed)
    y = _heads(seed, B, nh, T, hs, transposed)
    what = f"merge_heads of {tuple(y.shape)} head outputs"
    _same_tensor(got, gpt.merge_heads(y), what, rtol=0, atol=0)


# catches: a reshape without the transpose back (the heads' rows interleave wrongly), .view
# of the transposed tensor without .contiguous() (an error), the heads put side by side in
# the wrong order
@exercise("08.3")
def test_merge_heads_puts_the_heads_side_by_side(run):
    _merge_case(run, 2, 3, 5, 4)
    _merge_case(run, 1, 2, 6, 3)
    _merge_case(run, 2, 4, 3, 2, transposed=True)


@probe(forbid=HEADS)
def heads_round_trip(nb, seed, B, T, C, n_head, weights):  # noqa: N803
    x = _activation(seed, B, T, C, False).requires_grad_(True)
    scale = minitorch.tensor(weights, dtype=minitorch.float32)
    out = nb.merge_heads(nb.split_heads(x, n_head) * scale)
    data = tensor_data(out)
    if isinstance(out, Tensor) and out.requires_grad:
        (out * out.detach()).sum().backward()
    data["grad"] = _grad(x)
    return data


# catches: a split or merge outside autograd (numpy, a new tensor): no gradient comes back
# through the heads to the activation
@exercise("08.3")
def test_heads_round_trip_with_gradients(run):
    B, T, C, n_head = 2, 4, 12, 3  # noqa: N806
    seed = int(run.rng.integers(1 << 30))
    weights = run.rng.uniform(0.5, 2.0, size=(1, n_head, 1, C // n_head))
    got = run(heads_round_trip, seed, B, T, C, n_head, weights)
    x = _activation(seed, B, T, C, False).requires_grad_(True)
    scale = minitorch.tensor(weights, dtype=minitorch.float32)
    out = gpt.merge_heads(gpt.split_heads(x, n_head) * scale)
    what = f"merge_heads(split_heads(x, {n_head}) * a per-head scale), x of shape {x.shape}"
    _same_tensor(got, out, what)
    (out * out.detach()).sum().backward()
    _close_grad(got["grad"], x.grad, f"{what}: the gradient of x")


# --- 08.4 the block's forward ----------------------------------------------------------------
def _config(n_embd=16, n_head=2, block_size=16, vocab_size=32, n_layer=2):
    return GPTConfig(block_size, vocab_size, n_layer, n_head, n_embd)


def _package_block(seed, n_embd, n_head):
    """A Block of the package's modules, its LayerNorms' gains and biases made distinct (so
    that ln_1 and ln_2 can't stand in for each other) and its weights larger than GPT-2's
    init (so that every sub-layer changes the output clearly)."""
    minitorch.manual_seed(seed)
    block = gpt.Block(_config(n_embd, n_head))
    rng = np.random.default_rng(seed)
    with minitorch.no_grad():
        for name, p in block.named_parameters():
            if name.startswith(("ln_1", "ln_2")):
                base = 1.0 if name.endswith("weight") else 0.0
                values = base + rng.uniform(-0.5, 0.5, size=p.shape)
            else:
                values = rng.standard_normal(p.shape) * 0.3
            p.copy_(minitorch.tensor(values, dtype=p.dtype))
    return block


def _residual(seed, B, T, C):  # noqa: N803
    rng = np.random.default_rng(seed + 1)
    return minitorch.tensor(rng.standard_normal((B, T, C)) * 2.0 + 0.5, dtype=minitorch.float32)


def _learners_block(nb, seed, n_embd, n_head):
    """The learner's Block with the weights of ``_package_block``: the package's is made
    before the watch starts (the watch refuses the package's Block to the learner's code)."""
    state = _package_block(seed, n_embd, n_head).state_dict()
    with forbidding(BLOCK, nb):
        block = nb.Block(_config(n_embd, n_head))
        block.load_state_dict(state)
    return block


_PARAMS = (
    "ln_1.weight",
    "ln_2.weight",
    "attn.c_attn.weight",
    "attn.c_proj.bias",
    "mlp.c_fc.weight",
)


@probe
def block_forward(nb, seed, B, T, n_embd, n_head, with_grads):  # noqa: N803
    block = _learners_block(nb, seed, n_embd, n_head)
    x = _residual(seed, B, T, n_embd).requires_grad_(True)
    with forbidding(BLOCK, nb):
        out = block(x)
        data = tensor_data(out)
        if with_grads and isinstance(out, Tensor) and out.requires_grad:
            (out * out.detach().sin()).sum().backward()
    if with_grads and isinstance(out, Tensor):
        params = dict(block.named_parameters())
        data["grads"] = [_grad(x)] + [_grad(params[name]) for name in _PARAMS]
    return data


@functools.lru_cache(maxsize=32)
def _package_block_run(seed, B, T, n_embd, n_head):  # noqa: N803
    """The package's block on the case's input: its output and the gradients of x and of
    ``_PARAMS`` (computed once per case, whichever notebook is graded)."""
    block = _package_block(seed, n_embd, n_head)
    x = _residual(seed, B, T, n_embd).requires_grad_(True)
    expected = block(x)
    (expected * expected.detach().sin()).sum().backward()
    params = dict(block.named_parameters())
    return expected.detach(), [x.grad] + [params[name].grad for name in _PARAMS]


def _block_case(run, B, T, n_embd, n_head, with_grads=False):  # noqa: N803
    seed = int(run.rng.integers(1 << 20))
    got = run(block_forward, seed, B, T, n_embd, n_head, with_grads)
    expected, grads = _package_block_run(seed, B, T, n_embd, n_head)
    what = f"Block.forward on x of shape {(B, T, n_embd)} ({n_head} heads)"
    _same_tensor(got, expected, what, rtol=1e-4, atol=1e-5)
    if with_grads:
        for name, g, ref in zip(["x", *_PARAMS], got["grads"], grads, strict=True):
            _close_grad(g, ref, f"{what}: the gradient of {name}", rtol=1e-4, atol=1e-5)


# catches: post-LN (the LayerNorm after the residual add, as the 2017 transformer), a
# residual left out, the residual taken from the normalised x, ln_1 used twice, the MLP
# before the attention, both sub-layers reading the same x (a "parallel" block), a last
# LayerNorm on the output
@exercise("08.4")
def test_block_forward_is_pre_ln_with_residuals(run):
    _block_case(run, 2, 5, 16, 2)
    _block_case(run, 1, 7, 24, 3)


# catches: a sub-layer or the residual stream detached (no gradient reaches x or a layer)
@exercise("08.4")
def test_gradients_reach_the_input_and_every_layer(run):
    _block_case(run, 2, 4, 16, 2, with_grads=True)


@probe
def block_with_cache(nb, seed, B, prompt, steps, n_embd, n_head):  # noqa: N803
    block = _learners_block(nb, seed, n_embd, n_head)
    x = _residual(seed, B, prompt + steps, n_embd)
    cache = KVCache()
    with forbidding(BLOCK, nb):
        outs = [tensor_data(block(x[:, :prompt], cache))]
        for t in range(prompt, prompt + steps):
            outs.append(tensor_data(block(x[:, t : t + 1], cache)))
    return outs, cache.length


# catches: the cache not handed to the attention (each new token then sees only itself)
@exercise("08.4")
def test_block_forward_with_a_kv_cache(run):
    B, prompt, steps, n_embd, n_head = 2, 4, 3, 16, 2  # noqa: N806
    seed = int(run.rng.integers(1 << 20))
    outs, length = run(block_with_cache, seed, B, prompt, steps, n_embd, n_head)
    full, _ = _package_block_run(seed, B, prompt + steps, n_embd, n_head)
    _same_tensor(outs[0], full[:, :prompt], "Block.forward(x, cache) of the 4-token prompt",
                 rtol=1e-4, atol=1e-5)  # fmt: skip
    for i, t in enumerate(range(prompt, prompt + steps)):
        what = f"Block.forward(x, cache) of token {t}, with {t} positions in the cache"
        _same_tensor(outs[i + 1], full[:, t : t + 1], what, rtol=1e-4, atol=1e-5)
    assert length == prompt + steps, (
        f"after the prompt and {steps} tokens the cache holds {length} positions, expected "
        f"{prompt + steps}: pass the cache to self.attn"
    )


# --- 08.5 sampling ---------------------------------------------------------------------------
@probe(forbid=SAMPLE)
def sampled(nb, logits, temperature, top_k, seed):
    generator = minitorch.Generator().manual_seed(seed)
    with np.errstate(all="ignore"):
        out = nb.sample_next_token(minitorch.tensor(logits), temperature, top_k, generator)
    after = minitorch.rand(3, generator=generator).numpy()
    return tensor_data(out), after


def _sample_case(run, logits, temperature, top_k, what):
    seed = int(run.rng.integers(1 << 30))
    logits = np.asarray(logits, dtype=np.float32)
    got, after = run(sampled, logits, temperature, top_k, seed)
    generator = minitorch.Generator().manual_seed(seed)
    expected = gpt.sample_next_token(minitorch.tensor(logits), temperature, top_k, generator)
    expected_after = minitorch.rand(3, generator=generator).numpy()
    call = f"sample_next_token({what}, temperature={temperature}, top_k={top_k})"
    kind = got.get("type")
    assert kind == "Tensor", f"{call} returned a {kind}, expected a (B, 1) int64 Tensor"
    assert got["dtype"] == "minitorch.int64", f"{call} has dtype {got['dtype']}, expected int64"
    assert tuple(got["shape"]) == (len(logits), 1), (
        f"{call} has shape {tuple(got['shape'])}, expected {(len(logits), 1)}: one token per row"
    )
    tokens, want = checked_array(got["values"], expected.numpy(), call), expected.numpy()
    bad = np.flatnonzero(tokens[:, 0] != want[:, 0])
    if len(bad):
        row = int(bad[0])
        raise AssertionError(
            f"{call}: row {row} drew token {int(tokens[row, 0])}, the package's draw with the "
            f"same generator is {int(want[row, 0])} ({len(bad)} of {len(want)} rows differ)"
        )
    assert np.array_equal(checked_array(after, expected_after, "the next draws"), expected_after), (
        f"after {call} the generator is not where the package's sampler leaves it: one draw "
        "per row, all in one call, from the generator given, and none at temperature 0"
    )


def _logits(run, rows, vocab, scale=2.0):
    return run.rng.standard_normal((rows, vocab)) * scale


# catches: a draw from the global generator instead of the given one, the logits handed to
# multinomial as they are (negative weights), the softmax over the batch (dim 0), two
# samples per row, a result of shape (B,) instead of (B, 1)
@exercise("08.5")
def test_samples_with_the_given_generator(run):
    _sample_case(run, _logits(run, 64, 12), 1.0, None, "64 rows of 12 logits")
    _sample_case(run, _logits(run, 3, 40), 1.0, None, "3 rows of 40 logits")


# catches: the logits multiplied by the temperature, the temperature ignored
@exercise("08.5")
def test_temperature_divides_the_logits(run):
    _sample_case(run, _logits(run, 64, 10), 0.5, None, "64 rows of 10 logits")
    _sample_case(run, _logits(run, 64, 10), 2.5, None, "64 rows of 10 logits")


# catches: k - 1 or k + 1 logits kept, the k-th largest itself dropped (<= instead of <),
# exactly k kept when others tie with the k-th (nanoGPT keeps every logit >= the k-th),
# masked logits set to 0 instead of -inf, top_k larger than the vocabulary not clamped
@exercise("08.5")
def test_top_k_keeps_the_k_largest_and_their_ties(run):
    tied = run.rng.integers(0, 4, size=(64, 10)).astype(np.float64)
    _sample_case(run, tied, 1.0, 3, "64 rows of 10 logits with ties")
    _sample_case(run, _logits(run, 64, 10), 0.8, 4, "64 rows of 10 logits")
    _sample_case(run, _logits(run, 32, 6), 1.0, 1, "32 rows of 6 logits")
    _sample_case(run, _logits(run, 8, 5), 1.0, 9, "8 rows of 5 logits")


# catches: temperature 0 divided by (nan logits), the argmax without keepdim, a draw made
# anyway at temperature 0 (greedy decoding uses no randomness)
@exercise("08.5")
def test_temperature_zero_is_greedy(run):
    _sample_case(run, _logits(run, 16, 9), 0.0, None, "16 rows of 9 logits")
    _sample_case(run, _logits(run, 16, 9), 0.0, 3, "16 rows of 9 logits")


# --- 08.6 decoding with a KV cache ----------------------------------------------------------
def _model(seed, block_size, n_layer=2, n_head=2, n_embd=16, vocab_size=32):
    minitorch.manual_seed(seed)
    model = GPT(GPTConfig(block_size, vocab_size, n_layer, n_head, n_embd))
    return model.eval()


def _prompt(seed, B, P, vocab_size=32):  # noqa: N803
    rng = np.random.default_rng(seed + 7)
    return minitorch.tensor(rng.integers(0, vocab_size, size=(B, P)), dtype=minitorch.int64)


@contextlib.contextmanager
def _package_sampler(nb):
    """While the learner's loop runs, its ``sample_next_token`` is the package's: a slip in
    08.5 costs points there, not again here."""
    names = nb._globals
    before = names.get("sample_next_token", _MISSING)
    names["sample_next_token"] = gpt.sample_next_token
    try:
        yield
    finally:
        if before is _MISSING:
            names.pop("sample_next_token", None)
        else:
            names["sample_next_token"] = before


@probe(forbid=GENERATE)
def decoded(nb, seed, block_size, B, P, new_tokens, temperature, top_k):  # noqa: N803
    model = _model(seed, block_size)
    prompt = _prompt(seed, B, P)
    kept = prompt.clone()
    calls = []
    forward = model.forward

    def recording(idx, targets=None, cache=None):
        calls.append([int(idx.shape[1]), cache is not None, minitorch.is_grad_enabled()])
        return forward(idx, targets, cache)

    model.forward = recording
    generator = minitorch.Generator().manual_seed(seed)
    with _package_sampler(nb), np.errstate(all="ignore"):
        out = nb.generate(model, prompt, new_tokens, temperature, top_k, generator)
    data = tensor_data(out)
    data["calls"] = calls
    data["prompt kept"] = bool((prompt == kept).all().item())
    return data


def _expected_calls(P, new_tokens, block_size):  # noqa: N803
    """The tokens each forward runs: the window once, then one token a step until the cache
    is full; a full cache is refilled from the last block_size tokens."""
    calls, cached = [], None
    for step in range(new_tokens):
        if cached is None or cached == block_size:
            cached = min(P + step, block_size)
            calls.append(cached)
        else:
            calls.append(1)
            cached += 1
    return calls


@functools.lru_cache(maxsize=64)
def _recomputed(seed, block_size, B, P, new_tokens, temperature, top_k):  # noqa: N803
    """The package's tokens, recomputing the window at every step (the grader draws the same
    inputs for every notebook it grades: each is computed once)."""
    model, prompt = _model(seed, block_size), _prompt(seed, B, P)
    generator = minitorch.Generator().manual_seed(seed)
    return model.generate(prompt, new_tokens, temperature, top_k, False, generator)


def _decode_case(run, block_size, B, P, new_tokens, temperature=1.0, top_k=None):  # noqa: N803
    seed = int(run.rng.integers(1 << 20))
    got = run(decoded, seed, block_size, B, P, new_tokens, temperature, top_k)
    expected = _recomputed(seed, block_size, B, P, new_tokens, temperature, top_k)
    what = (
        f"generate(model, a ({B}, {P}) prompt, {new_tokens}, temperature={temperature}, "
        f"top_k={top_k}) with block_size {block_size}"
    )
    kind = got.get("type")
    assert kind == "Tensor", f"{what} returned a {kind}, expected an int64 Tensor"
    assert got["dtype"] == "minitorch.int64", f"{what} has dtype {got['dtype']}, expected int64"
    assert tuple(got["shape"]) == tuple(expected.shape), (
        f"{what} has shape {tuple(got['shape'])}, expected {tuple(expected.shape)}: the prompt "
        "followed by the new tokens"
    )
    assert got["prompt kept"], f"{what} changed the prompt tensor it was given"
    tokens = checked_array(got["values"], expected.numpy(), what)
    want = expected.numpy()
    differ = np.argwhere(tokens != want)
    if len(differ):
        row, col = (int(i) for i in differ[0])
        raise AssertionError(
            f"{what}: token {col} of row {row} is {int(tokens[row, col])}, but recomputing the "
            f"whole window at every step gives {int(want[row, col])} (first tokens: "
            f"{tokens[row, : col + 1].tolist()} vs {want[row, : col + 1].tolist()})"
        )
    return got, what


# catches: every step recomputing the whole window (no cache, or a new cache each step), a
# refill before the cache is full, decoding with autograd recording (run it under no_grad)
@exercise("08.6")
def test_each_step_after_the_first_runs_one_token(run):
    for block_size, P, new_tokens in ((12, 3, 7), (8, 5, 6)):  # noqa: N806
        got, what = _decode_case(run, block_size, 1, P, new_tokens)
        lengths = [c[0] for c in got["calls"]]
        expected = _expected_calls(P, new_tokens, block_size)
        assert lengths == expected, (
            f"{what}: the model ran on {lengths} tokens, step by step; with a KV cache it runs "
            f"the window once and then one token a step: {expected} (a full cache is refilled "
            "from the last block_size tokens)"
        )
        assert all(c[1] for c in got["calls"]), f"{what}: a forward ran without the cache"
        assert not any(c[2] for c in got["calls"]), (
            f"{what}: the model ran with autograd recording; decode under minitorch.no_grad()"
        )


# catches: the first step run on the last prompt token alone (the rest of the prompt never
# reaches the cache), the whole sequence fed again with the cache (positions counted twice),
# a new token not appended, the temperature, top_k or generator not passed on to the sampler
@exercise("08.6")
def test_cached_decoding_gives_the_tokens_of_recomputing(run):
    _decode_case(run, 16, 2, 3, 6)
    _decode_case(run, 16, 2, 5, 5, temperature=0.7, top_k=5)
    _decode_case(run, 16, 1, 1, 4, temperature=0.0)


# catches: a cache never refilled once the window is full (the model refuses a longer
# sequence than block_size), a refill from the wrong window (block_size - 1 tokens, or the
# whole sequence)
@exercise("08.6")
def test_the_window_slides_past_the_block_size(run):
    _decode_case(run, 8, 2, 6, 7)
    _decode_case(run, 6, 1, 6, 3, temperature=0.0)


# catches: a first step that runs a prompt longer than block_size whole (the model refuses
# more than block_size positions), or the prompt's first block_size tokens instead of its
# last, or a prompt cropped in the result too
@exercise("08.6")
def test_a_prompt_longer_than_the_block(run):
    _decode_case(run, 6, 2, 10, 4)
    _decode_case(run, 5, 1, 7, 3, temperature=0.0)


# --- 08.7 warmup and cosine decay -----------------------------------------------------------
@probe(forbid=SCHEDULE)
def rates(nb, steps, warmup_steps, max_steps, max_lr, min_lr):
    return [nb.warmup_cosine(s, warmup_steps, max_steps, max_lr, min_lr) for s in steps]


def _check_rates(run, steps, warmup_steps, max_steps, max_lr, min_lr):
    got = run(rates, steps, warmup_steps, max_steps, max_lr, min_lr)
    for step, lr in zip(steps, got, strict=True):
        call = f"warmup_cosine({step}, {warmup_steps}, {max_steps}, {max_lr}, {min_lr})"
        real = isinstance(lr, (float, int, np.floating, np.integer)) and not isinstance(lr, bool)
        assert real, f"{call} returned {_plain(lr)!r}, a {type(lr).__name__}; expected a float"
        expected = schedules.warmup_cosine(step, warmup_steps, max_steps, max_lr, min_lr)
        if math.isclose(float(lr), expected, rel_tol=1e-9, abs_tol=1e-15):
            continue
        if math.isclose(float(lr), expected, rel_tol=1e-6, abs_tol=1e-12):
            raise AssertionError(
                f"{call} = {float(lr)!r}, expected {expected!r}: off by float32 rounding "
                f"(relative error {abs(float(lr) - expected) / abs(expected):.1e}); the rate "
                "is compared to double precision, so compute it in Python floats, not in "
                "float32 tensors or arrays"
            )
        raise AssertionError(f"{call} = {float(lr)!r}, expected {expected!r}")


# catches: a warmup from 0 (step / warmup_steps: the first step would not move), a warmup
# over warmup_steps + 1, the warmup still running at step warmup_steps, integer division
@exercise("08.7")
def test_linear_warmup_from_the_first_step(run):
    _check_rates(run, list(range(0, 12)), 10, 100, 6e-4, 6e-5)
    _check_rates(run, [0, 1, 2, 3], 3, 20, 1.0, 0.1)


# catches: a full cosine period instead of half, the 0.5 left out, the decay measured from
# step 0 or over max_steps instead of max_steps - warmup_steps, a linear decay, a decay to 0
# (min_lr ignored), min_lr added to the full max_lr swing
@exercise("08.7")
def test_half_a_cosine_down_to_min_lr(run):
    steps = [10, 11, 25, 40, 55, 70, 85, 99, 100]
    steps += [int(s) for s in run.rng.integers(10, 101, size=5)]
    _check_rates(run, steps, 10, 100, 6e-4, 6e-5)
    _check_rates(run, list(range(3, 21)), 3, 20, 1.0, 0.1)


# catches: the cosine going on after max_steps (the rate climbs back up), max_lr after the
# schedule ends
@exercise("08.7")
def test_after_max_steps_it_stays_at_min_lr(run):
    _check_rates(run, [100, 101, 150, 199, 1000], 10, 100, 6e-4, 6e-5)


# catches: no warmup at all (warmup_steps=0) dividing by zero; a constant schedule
# (min_lr == max_lr) that still moves
@exercise("08.7")
def test_schedule_edges(run):
    _check_rates(run, [0, 1, 5, 10, 11], 0, 10, 1e-3, 1e-4)
    _check_rates(run, [0, 2, 4, 8, 9], 2, 8, 3e-4, 3e-4)


# --- 08.8 nucleus (top-p) sampling: judged by its draws ---------------------------------------
# (no package piece does this: the watch refuses torch, and the judge knows only what a
# nucleus sampler's draws must look like, not how they were made)
TOP_P = forbid(gpt.sample_next_token)


@probe(forbid=TOP_P)
def top_p_draws(nb, logits, reps, top_p, temperature, seeds):
    """Draws of the learner's sampler on ``logits`` (rows, vocab), each row repeated ``reps``
    times, with a generator seeded ``seeds[0]`` (and the generator's next numbers after it);
    then on each row repeated 20 times, with generators seeded ``seeds[1:]``; whether the
    logits came back unchanged."""
    rows = np.asarray(logits)
    draws, after = [], None
    for seed, n in zip(seeds, [reps] + [20] * (len(seeds) - 1), strict=True):
        given = minitorch.tensor(np.repeat(rows, n, axis=0), dtype=minitorch.float32)
        kept = given.numpy().copy()
        generator = minitorch.Generator().manual_seed(seed)
        with np.errstate(all="ignore"):
            out = nb.sample_top_p(given, top_p, temperature, generator)
        draws.append(tensor_data(out))
        if after is None:
            after = minitorch.rand(3, generator=generator).numpy()
            unchanged = bool(np.array_equal(given.numpy(), kept))
    return {"draws": draws, "after": after, "logits kept": unchanged}


def _tempered(logits, temperature):
    z = np.asarray(logits, dtype=np.float64) / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _nucleus(probs, top_p):
    """Per row: True for the tokens of the nucleus, the most likely tokens whose probabilities
    first reach ``top_p`` (a token is in when the tokens more likely than it hold less)."""
    before = np.array([[row[row > p].sum() for p in row] for row in probs])
    return (before < top_p) | (top_p >= 1.0)


def _boundary_margin(probs, top_p):
    """How far each row's cumulative sums (most likely first) stay from ``top_p``."""
    ranked = -np.sort(-probs, axis=-1)
    return np.abs(np.cumsum(ranked, axis=-1) - top_p).min()


def _nucleus_logits(run, rows, vocab, top_p, temperature, scale=1.5, differs=False):
    """``rows`` rows of logits whose nucleus is clear-cut: no cumulative sum within 0.03 of
    ``top_p`` and no two probabilities within 1e-3; with ``differs``, a nucleus that another
    temperature (1, or the reciprocal) would make different."""
    found = []
    for _ in range(20_000):  # (a bound: some settings have no clear-cut nucleus to find)
        if len(found) == rows:
            return found
        z = np.round(run.rng.standard_normal(vocab) * scale, 3)
        probs = _tempered(z, temperature)[None]
        near = top_p < 1.0 and _boundary_margin(probs, top_p) < 0.03
        if near or np.diff(np.sort(probs[0])).min() < 1e-3:
            continue
        if differs:
            mine = _nucleus(probs, top_p)
            others = [_nucleus(_tempered(z, t)[None], top_p) for t in (1.0, 1.0 / temperature)]
            if any(np.array_equal(mine, o) for o in others):
                continue
        found.append(z.tolist())
    if len(found) == rows:
        return found
    raise RuntimeError(f"no clear-cut nucleus for vocab={vocab}, top_p={top_p}, T={temperature}")


def _listed(values):
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def _check_top_p(run, logits, top_p, temperature=1.0, reps=900, what=None):
    """Draw ``reps`` tokens for each row of ``logits``; judge type, shape, the nucleus, the
    frequencies and the generator; returns the draws (rows * reps,) and the reply."""
    seeds = [int(s) for s in run.rng.integers(1 << 30, size=3)]
    got = run(top_p_draws, logits, reps, top_p, temperature, [seeds[0], *seeds[1:], seeds[1]])
    rows = len(logits)
    what = what or f"{rows} rows of {len(logits[0])} logits"
    call = f"sample_top_p({what}, top_p={top_p}, temperature={temperature:g})"
    first = got["draws"][0]
    kind = first.get("type")
    assert kind == "Tensor", f"{call} returned a {kind}, expected a (B, 1) int64 Tensor"
    assert first["dtype"] == "minitorch.int64", f"{call} has dtype {first['dtype']}, expected int64"
    assert tuple(first["shape"]) == (rows * reps, 1), (
        f"{call} on {rows * reps} rows has shape {tuple(first['shape'])}, expected "
        f"{(rows * reps, 1)}: one token per row"
    )
    assert got["logits kept"], f"{call} changed the logits tensor it was given"
    draws = checked_array(first["values"], np.zeros((rows * reps, 1)), call)[:, 0]
    small = np.zeros((rows * 20, 1))
    once, other, again = (checked_array(d.get("values"), small, call) for d in got["draws"][1:])
    assert np.array_equal(once, again), (
        f"{call}: two calls with generators seeded alike drew different tokens; draw from "
        "the generator you are given, and only from it"
    )
    if temperature == 0:
        return draws, got
    probs = _tempered(logits, temperature)
    nucleus = _nucleus(probs, top_p)
    random = (nucleus.sum(axis=-1) > 1) & (probs.max(axis=-1) < 0.99)  # (rows with a choice)
    if random.any() and np.array_equal(other, once):
        raise AssertionError(
            f"{call}: generators seeded differently drew the same {rows * 20} tokens; the "
            "draws must come from the generator you are given"
        )
    vocab = probs.shape[-1]
    bad = (draws < 0) | (draws >= vocab)
    assert not bad.any(), f"{call} drew token {int(draws[bad][0])}, not in 0 .. {vocab - 1}"
    for r in range(rows):
        mine = draws[r * reps : (r + 1) * reps]
        inside = np.flatnonzero(nucleus[r])
        outside = mine[~nucleus[r][mine]]
        row_text = f"row {r} (logits {_listed(logits[r])})"
        if len(outside):
            token = int(outside[0])
            raise AssertionError(
                f"{call}: {row_text} drew token {token} ({len(outside)} of {reps} draws outside "
                f"the nucleus), of probability {probs[r, token]:.3f} at this temperature; its "
                f"nucleus is the tokens {inside.tolist()} (the most likely ones, whose "
                f"probabilities first reach {top_p})"
            )
        share = np.bincount(mine, minlength=vocab) / reps
        expected = np.where(nucleus[r], probs[r], 0.0)
        expected = expected / expected.sum()
        tolerance = 5 * np.sqrt(expected * (1 - expected) / reps) + 0.005
        off = np.flatnonzero(np.abs(share - expected) > tolerance)
        if len(off):
            t = int(off[0])
            raise AssertionError(
                f"{call}: {row_text} drew token {t} in {share[t]:.1%} of {reps} draws; "
                f"expected {expected[t]:.1%} +- {tolerance[t]:.1%} (its probability at this "
                f"temperature, renormalised over the nucleus {inside.tolist()})"
            )
    return draws, got


# catches: the token that crosses top_p left out (a nucleus that sums to less than top_p),
# one token too many, a nucleus cut from the unsorted vocabulary or from the least likely
# end, a mask worked out in sorted order but applied to the tokens in their own order,
# cumulative sums taken the wrong way, draws not renormalised over the nucleus (tokens
# outside it replaced by the most likely one), one nucleus for the whole batch
@exercise("08.8")
def test_draws_stay_in_the_nucleus_with_its_probabilities(run):
    _check_top_p(run, _nucleus_logits(run, 3, 8, 0.8, 1.0), 0.8)
    _check_top_p(run, _nucleus_logits(run, 2, 12, 0.5, 1.0, scale=1.0), 0.5)


# catches: the nucleus cut from the probabilities at temperature 1 and the temperature
# applied afterwards, the logits multiplied by the temperature, the temperature ignored
@exercise("08.8")
def test_the_nucleus_is_that_of_the_tempered_distribution(run):
    _check_top_p(run, _nucleus_logits(run, 2, 8, 0.7, 0.5, differs=True), 0.7, 0.5, reps=700)
    _check_top_p(run, _nucleus_logits(run, 2, 8, 0.7, 2.0, differs=True), 0.7, 2.0, reps=700)


# catches: a nucleus left empty when the most likely token alone holds more than top_p
# (nothing to draw from: nan), top_p = 1 cutting off tokens
@exercise("08.8")
def test_top_p_edges(run):
    _check_top_p(run, _nucleus_logits(run, 2, 6, 0.05, 1.0), 0.05, reps=500)
    _check_top_p(run, _nucleus_logits(run, 2, 5, 1.0, 1.0, scale=0.7), 1.0, reps=700)


def _greedy_leaves_the_generator(run, logits):
    seed = int(run.rng.integers(1 << 30))
    got = run(top_p_draws, logits, 4, 0.9, 0.0, [seed])
    fresh = minitorch.rand(3, generator=minitorch.Generator().manual_seed(seed)).numpy()
    after = checked_array(got["after"], fresh, "the generator's next numbers")
    assert np.array_equal(after, fresh), (
        "sample_top_p(..., temperature=0) drew from the generator: at temperature 0 the most "
        "likely token is taken, and the generator is left where it was"
    )


# catches: temperature 0 divided by (nan logits) instead of greedy, a draw made anyway at
# temperature 0 (greedy decoding takes nothing from the generator), a near-0 temperature
# that does not concentrate the draws on the most likely token, a high one that does not
# spread them out
@exercise("08.8")
def test_temperature_limits(run):
    logits = _nucleus_logits(run, 3, 7, 0.9, 1.0)
    best = np.repeat(np.argmax(logits, axis=-1), 200)
    for temperature in (0.0, 1e-3):
        draws, _ = _check_top_p(run, logits, 0.9, temperature, reps=200)
        wrong = np.flatnonzero(draws != best)
        if len(wrong):
            i = int(wrong[0])
            raise AssertionError(
                f"sample_top_p(3 rows of 7 logits, top_p=0.9, temperature={temperature:g}): row "
                f"{i // 200} drew token {int(draws[i])}, expected {int(best[i])}, its most "
                "likely token (at temperature 0, or near it, every draw is that token)"
            )
    _greedy_leaves_the_generator(run, logits)
    _check_top_p(run, logits, 1.0, 50.0, reps=700)  # hot: close to uniform, all tokens in


# catches: probabilities computed without the row's maximum subtracted (exp overflows to
# inf and the draws become nan, or an error, on logits in the hundreds)
@exercise("08.8")
def test_large_logits(run):
    logits = [[z + 600.0 for z in row] for row in _nucleus_logits(run, 2, 6, 0.8, 1.0)]
    _check_top_p(run, logits, 0.8, reps=500, what="2 rows of 6 logits near 600")
