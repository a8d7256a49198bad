"""Wrong answers to chapter 08's exercises, written the way learners write them.

``MUTANTS[exercise_id] = {name: source}``: each source redefines the exercise's function
or class in a copy of the solution notebook's namespace (see ``mutants.py``); names
starting with ``delegates`` hand the piece to a ready-made implementation and must get no
points. ``CORRECT`` holds legitimate alternatives, which must keep full marks.
"""

# --- 08.1 byte-pair encoding -------------------------------------------------------------------
_MERGE = """
def merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
"""


def _train(
    choose="max(counts, key=counts.get)",
    start="list(data)",
    new_ids="range(256, vocab_size)",
    merge_line="ids = merge(ids, pair, new_id)",
    record="merges.append(pair)",
):
    return f"""
def train_bpe(data, vocab_size):
    ids = {start}
    merges = []
    for new_id in {new_ids}:
        counts = get_pair_counts(ids)
        pair = {choose}
        {merge_line}
        {record}
    return merges
"""


BPE = {
    "counts_without_overlaps": """
def get_pair_counts(ids):
    counts, i = {}, 0
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        i += 2 if ids[i] == ids[i + 1] else 1
    return counts
""",
    "counts_sorted_by_pair": """
def get_pair_counts(ids):
    counts = {}
    for pair in zip(ids[:-1], ids[1:], strict=True):
        counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items()))
""",
    "counts_sorted_by_count": """
def get_pair_counts(ids):
    counts = {}
    for pair in zip(ids[:-1], ids[1:], strict=True):
        counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))
""",
    "counts_stop_one_early": """
def get_pair_counts(ids):
    counts = {}
    for i in range(len(ids) - 2):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    return counts
""",
    "counts_pairs_backwards": """
def get_pair_counts(ids):
    counts = {}
    for a, b in zip(ids[:-1], ids[1:], strict=True):
        counts[(b, a)] = counts.get((b, a), 0) + 1
    return counts
""",
    "merge_without_skipping": """
def merge(ids, pair, new_id):
    out = []
    for i in range(len(ids)):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
        elif i > 0 and ids[i - 1] == pair[0] and ids[i] == pair[1]:
            continue
        else:
            out.append(ids[i])
    return out
""",
    "merge_from_the_right": """
def merge(ids, pair, new_id):
    out, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and ids[i - 1] == pair[0] and ids[i] == pair[1]:
            out.append(new_id)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    return out[::-1]
""",
    "merge_drops_the_last_id": """
def merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids) - 1:
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
""",
    "merge_in_place": """
def merge(ids, pair, new_id):
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            ids[i : i + 2] = [new_id]
        i += 1
    return ids
""",
    "new_ids_from_255": _train(new_ids="range(255, vocab_size - 1)"),
    "one_merge_too_few": _train(new_ids="range(256, vocab_size - 1)"),
    "ties_to_the_last_pair": _train(
        choose="[p for p, c in counts.items() if c == max(counts.values())][-1]"
    ),
    "ties_to_the_largest_pair": _train(choose="max(counts, key=lambda p: (counts[p], p))"),
    "ties_to_the_smallest_pair": _train(choose="min(counts, key=lambda p: (-counts[p], p))"),
    "never_merges": _train(merge_line="pass"),
    "counts_the_original_bytes": _train().replace(
        "counts = get_pair_counts(ids)", "counts = get_pair_counts(list(data))"
    ),
    "characters_not_bytes": _train(start="[ord(c) for c in data.decode('utf-8')]"),
    "records_the_new_id": _train(record="merges.append((new_id, new_id))"),
    "stops_when_the_best_pair_occurs_once": _train(
        merge_line="if counts[pair] < 2:\n            break\n        ids = merge(ids, pair, new_id)"
    ),
    "merges_only_repeated_pairs": """
def train_bpe(data, vocab_size):
    ids, merges = list(data), []
    while len(merges) < vocab_size - 256:
        counts = get_pair_counts(ids)
        if not counts or max(counts.values()) < 2:
            break
        pair = max(counts, key=counts.get)
        ids = merge(ids, pair, 256 + len(merges))
        merges.append(pair)
    return merges
""",
    "merge_by_string_replacement": """
def merge(ids, pair, new_id):
    text = " ".join(str(i) for i in ids).replace(f"{pair[0]} {pair[1]}", str(new_id))
    return [int(t) for t in text.split()]
""",
    "merge_by_string_with_commas": """
def merge(ids, pair, new_id):
    text = ",".join(map(str, ids)).replace(f"{pair[0]},{pair[1]}", str(new_id))
    return [int(t) for t in text.split(",") if t]
""",
    "merge_by_padded_string": """
def merge(ids, pair, new_id):
    text = " " + " ".join(map(str, ids)) + " "
    text = text.replace(f" {pair[0]} {pair[1]} ", f" {new_id} ")
    return [int(t) for t in text.split()]
""",
    "train_merges_a_string": """
def train_bpe(data, vocab_size):
    text, merges = " ".join(str(b) for b in data), []
    for new_id in range(256, vocab_size):
        counts = get_pair_counts([int(t) for t in text.split()])
        pair = max(counts, key=counts.get)
        text = text.replace(f"{pair[0]} {pair[1]}", str(new_id))
        merges.append(pair)
    return merges
""",
    "train_merges_a_padded_string": """
def train_bpe(data, vocab_size):
    text, merges = " " + " ".join(str(b) for b in data) + " ", []
    for new_id in range(256, vocab_size):
        counts = get_pair_counts([int(t) for t in text.split()])
        pair = max(counts, key=counts.get)
        text = text.replace(f" {pair[0]} {pair[1]} ", f" {new_id} ")
        merges.append(pair)
    return merges
""",
    "trains_on_stripped_bytes": _train(start="list(data.strip())"),
    "trains_on_right_stripped_text": _train(
        start="list(data.decode('utf-8').rstrip().encode('utf-8'))"
    ),
    "trains_on_normalised_whitespace": _train(start="list(b' '.join(data.split()))"),
    "trains_on_lines_without_newlines": _train(start="list(b''.join(data.splitlines()))"),
    "stops_quietly_when_no_pair_is_left": _train(
        merge_line="ids = merge(ids, pair, new_id)"
    ).replace(
        "        pair = max(counts, key=counts.get)",
        "        if not counts:\n            break\n        pair = max(counts, key=counts.get)",
    ),
    "most_common_of_an_empty_count": """
from collections import Counter


def train_bpe(data, vocab_size):
    ids, merges = list(data), []
    for new_id in range(256, vocab_size):
        pair = Counter(zip(ids, ids[1:])).most_common(1)[0][0]
        ids = merge(ids, pair, new_id)
        merges.append(pair)
    return merges
""",
    "delegates_exec_of_merge": """
import inspect

from minitorch.text import bpe as _bpe

exec(inspect.getsource(_bpe.merge))
""",
    "delegates_exec_of_get_pair_counts": """
import inspect

from minitorch.text import bpe as _bpe

_namespace = dict(vars(_bpe))
exec(inspect.getsource(_bpe.get_pair_counts), _namespace)
get_pair_counts = _namespace["get_pair_counts"]
""",
    "delegates_train_bpe": """
from minitorch.text import bpe as _bpe


def train_bpe(data, vocab_size):
    return _bpe.train_bpe(data, vocab_size)
""",
    "delegates_merge": """
from minitorch.text.bpe import merge as _merge


def merge(ids, pair, new_id):
    return _merge(ids, pair, new_id)
""",
    "delegates_to_the_tokenizer": """
from minitorch.text import BPETokenizer


def train_bpe(data, vocab_size):
    return BPETokenizer.train(data.decode("utf-8"), vocab_size).merges
""",
}


# --- 08.2 causal attention ----------------------------------------------------------------------
def _attention(
    scores="q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])",
    visible="minitorch.ones(T, S, dtype=minitorch.bool).tril(diagonal=S - T)",
    mask="scores = scores.masked_fill(~visible, float('-inf'))",
    shift="scores = scores - scores.max(dim=-1, keepdim=True).values.detach()",
    weights="weights = scores.exp()\n    weights = weights / weights.sum(dim=-1, keepdim=True)",
    out="weights @ v",
):
    return f"""
def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    scores = {scores}
    visible = {visible}
    {mask}
    {shift}
    {weights}
    return {out}
"""


ATTENTION = {
    "no_mask": _attention(mask="pass"),
    "mask_hides_the_diagonal": _attention(
        visible="minitorch.ones(T, S, dtype=minitorch.bool).tril(diagonal=S - T - 1)"
    ),
    "mask_lets_one_future_key_through": _attention(
        visible="minitorch.ones(T, S, dtype=minitorch.bool).tril(diagonal=S - T + 1)"
    ),
    "mask_aligned_top_left": _attention(
        visible="minitorch.ones(T, S, dtype=minitorch.bool).tril()"
    ),
    "no_scale": _attention(scores="q @ k.transpose(-2, -1)"),
    "scaled_by_e": _attention(scores="q @ k.transpose(-2, -1) / q.shape[-1]"),
    "scaled_by_the_sequence_length": _attention(scores="q @ k.transpose(-2, -1) / math.sqrt(S)"),
    "no_max_subtracted": _attention(shift="pass"),
    "one_max_for_everything": _attention(shift="scores = scores - scores.max().detach()"),
    "softmax_over_the_queries": _attention(
        shift="scores = scores - scores.max(dim=-2, keepdim=True).values.detach()",
        weights="weights = scores.exp()\n    weights = weights / weights.sum(dim=-2, keepdim=True)",
    ),
    "mask_after_the_softmax": _attention(
        mask="pass",
        weights=(
            "weights = scores.exp()\n    weights = weights / weights.sum(dim=-1, keepdim=True)"
            "\n    weights = weights.masked_fill(~visible, 0.0)"
        ),
    ),
    "masked_scores_set_to_zero": _attention(mask="scores = scores.masked_fill(~visible, 0.0)"),
    "computed_in_numpy": """
import numpy as np


def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    a, b, c = q.detach().numpy(), k.detach().numpy(), v.detach().numpy()
    scores = a @ np.swapaxes(b, -1, -2) / math.sqrt(a.shape[-1])
    scores = np.where(np.tril(np.ones((T, S), bool), S - T), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return minitorch.tensor(weights @ c, dtype=q.dtype)
""",
    "keys_detached": _attention(scores="q @ k.detach().transpose(-2, -1) / math.sqrt(q.shape[-1])"),
    "float64_result": _attention(out="(weights @ v).to(minitorch.float64)"),
    "max_taken_before_the_mask": _attention(
        mask="shift = scores.max(dim=-1, keepdim=True).values.detach()",
        shift="scores = (scores - shift).masked_fill(~visible, float('-inf'))",
    ),
    "max_of_each_head_matrix": _attention(
        shift=(
            "scores = scores - scores.max(dim=-1, keepdim=True).values"
            ".max(dim=-2, keepdim=True).values.detach()"
        )
    ),
    "max_with_the_hidden_keys_at_zero": _attention(
        shift=(
            "scores = scores - scores.masked_fill(~visible, 0.0)"
            ".max(dim=-1, keepdim=True).values.detach()"
        )
    ),
    "max_of_the_unscaled_scores": _attention(
        scores="q @ k.transpose(-2, -1)",
        mask="raw = scores.masked_fill(~visible, float('-inf'))",
        shift=(
            "scores = raw / math.sqrt(q.shape[-1]) - raw.max(dim=-1, keepdim=True).values.detach()"
        ),
    ),
    "delegates_exec_of_scaled_dot_product_attention": """
import inspect

from minitorch.nn import attention as _attention

_namespace = dict(vars(_attention))
exec(inspect.getsource(_attention.scaled_dot_product_attention), _namespace)
_sdpa = _namespace["scaled_dot_product_attention"]


def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    visible = minitorch.ones(T, S, dtype=minitorch.bool).tril(diagonal=S - T)
    return _sdpa(q, k, v, attn_mask=visible)
""",
    "delegates_exec_of_attend": """
import inspect

_namespace = dict(vars(gpt))
exec(inspect.getsource(gpt.attend), _namespace)
_attend = _namespace["attend"]


def causal_attention(q, k, v):
    return _attend(q, k, v)
""",
    "delegates_scaled_dot_product_attention": """
import minitorch.nn.functional as _F


def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    visible = minitorch.ones(T, S, dtype=minitorch.bool).tril(diagonal=S - T)
    return _F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
""",
    "delegates_the_softmax": _attention(shift="pass", weights="weights = scores.softmax(dim=-1)"),
    "delegates_to_an_nn_softmax": _attention(
        shift="pass", weights="weights = nn.Softmax(dim=-1)(scores)"
    ),
    "delegates_attend": """
def causal_attention(q, k, v):
    return gpt.attend(q, k, v)
""",
}

# --- 08.3 heads ---------------------------------------------------------------------------------
HEADS = {
    "split_without_the_transpose": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, n_head, T, C // n_head)
""",
    "split_channels_in_the_wrong_order": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, C // n_head, n_head).permute(0, 3, 1, 2)
""",
    "split_puts_the_heads_first": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).permute(2, 0, 1, 3)
""",
    "split_copies": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).transpose(1, 2).contiguous()
""",
    "split_clones_the_input": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.clone().view(B, T, n_head, C // n_head).transpose(1, 2)
""",
    "split_in_numpy": """
def split_heads(x, n_head):
    B, T, C = x.shape
    a = x.detach().numpy().reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3)
    return minitorch.tensor(a)
""",
    "head_size_from_the_time_dim": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, n_head, C // T).transpose(1, 2)
""",
    "merge_without_the_transpose": """
def merge_heads(x):
    B, n_head, T, hs = x.shape
    return x.reshape(B, T, n_head * hs)
""",
    "merge_view_without_contiguous": """
def merge_heads(x):
    B, n_head, T, hs = x.shape
    return x.transpose(1, 2).view(B, T, n_head * hs)
""",
    "merge_heads_in_the_wrong_order": """
def merge_heads(x):
    B, n_head, T, hs = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, n_head * hs)
""",
    "merge_in_numpy": """
def merge_heads(x):
    B, n_head, T, hs = x.shape
    a = x.detach().numpy().transpose(0, 2, 1, 3).reshape(B, T, n_head * hs)
    return minitorch.tensor(a)
""",
    "delegates_split_heads": """
def split_heads(x, n_head):
    return gpt.split_heads(x, n_head)
""",
    "delegates_exec_of_split_heads": """
import inspect

exec(inspect.getsource(gpt.split_heads))
""",
    "delegates_merge_heads": """
from minitorch.models.gpt import merge_heads as _merge


def merge_heads(x):
    return _merge(x)
""",
}


# --- 08.4 the block -----------------------------------------------------------------------------
def _block(body):
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return f"""
class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = gpt.CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = gpt.MLP(config)

    def forward(self, x, cache=None):
{lines}
"""


BLOCK = {
    "post_ln": _block("x = self.ln_1(x + self.attn(x, cache))\nreturn self.ln_2(x + self.mlp(x))"),
    "no_attention_residual": _block(
        "x = self.attn(self.ln_1(x), cache)\nreturn x + self.mlp(self.ln_2(x))"
    ),
    "no_mlp_residual": _block(
        "x = x + self.attn(self.ln_1(x), cache)\nreturn self.mlp(self.ln_2(x))"
    ),
    "residual_from_the_normalised_x": _block(
        "h = self.ln_1(x)\nx = h + self.attn(h, cache)\nreturn x + self.mlp(self.ln_2(x))"
    ),
    "ln_1_used_twice": _block(
        "x = x + self.attn(self.ln_1(x), cache)\nreturn x + self.mlp(self.ln_1(x))"
    ),
    "mlp_before_attention": _block(
        "x = x + self.mlp(self.ln_2(x))\nreturn x + self.attn(self.ln_1(x), cache)"
    ),
    "parallel_sublayers": _block(
        "return x + self.attn(self.ln_1(x), cache) + self.mlp(self.ln_2(x))"
    ),
    "attention_on_the_raw_stream": _block(
        "x = x + self.attn(x, cache)\nreturn x + self.mlp(self.ln_2(x))"
    ),
    "a_last_layernorm": _block(
        "x = x + self.attn(self.ln_1(x), cache)\nreturn self.ln_2(x + self.mlp(self.ln_2(x)))"
    ),
    "cache_not_passed_on": _block(
        "x = x + self.attn(self.ln_1(x))\nreturn x + self.mlp(self.ln_2(x))"
    ),
    "residual_detached": _block(
        "x = x.detach() + self.attn(self.ln_1(x), cache)\nreturn x + self.mlp(self.ln_2(x))"
    ),
    "mlp_detached": _block(
        "x = x + self.attn(self.ln_1(x), cache)\nreturn x + self.mlp(self.ln_2(x)).detach()"
    ),
    "delegates_block_forward": _block("return gpt.Block.forward(self, x, cache)"),
    "delegates_alias_of_the_package_block": """
Block = gpt.Block
""",
    "delegates_subclass_of_the_package_block": """
class Block(gpt.Block):
    pass
""",
    "delegates_subclass_that_calls_super": """
class Block(gpt.Block):
    def forward(self, x, cache=None):
        return super().forward(x, cache)
""",
    "delegates_exec_of_forward_in_the_class": """
import inspect
import textwrap

from minitorch import Tensor


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = gpt.CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = gpt.MLP(config)

    exec(textwrap.dedent(inspect.getsource(gpt.Block.forward)))
""",
    "delegates_exec_of_the_whole_class": """
import inspect

from minitorch import Tensor
from minitorch.models.gpt import MLP, CausalSelfAttention

exec(inspect.getsource(gpt.Block))
""",
}


# --- 08.5 sampling ------------------------------------------------------------------------------
def _sampler(
    greedy="if temperature == 0:\n        return logits.argmax(dim=-1, keepdim=True)",
    scale="logits = logits / temperature",
    kth="logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]",
    keep="logits = logits.masked_fill(logits < kth, float('-inf'))",
    probs="nn.functional.softmax(logits, dim=-1)",
    draw="minitorch.multinomial(probs, num_samples=1, generator=generator)",
):
    return f"""
def sample_next_token(logits, temperature=1.0, top_k=None, generator=None):
    {greedy}
    {scale}
    if top_k is not None:
        kth = {kth}
        {keep}
    probs = {probs}
    return {draw}
"""


SAMPLE = {
    "global_generator": _sampler(draw="minitorch.multinomial(probs, num_samples=1)"),
    "multinomial_of_the_logits": _sampler(probs="logits"),
    "softmax_over_the_batch": _sampler(probs="nn.functional.softmax(logits, dim=0)"),
    "two_samples_per_row": _sampler(
        draw="minitorch.multinomial(probs, num_samples=2, generator=generator)[:, :1]"
    ),
    "one_dim_result": _sampler(
        draw="minitorch.multinomial(probs, num_samples=1, generator=generator).view(-1)"
    ),
    "temperature_multiplies": _sampler(scale="logits = logits * temperature"),
    "temperature_ignored": _sampler(scale="pass"),
    "keeps_one_less_than_k": _sampler(
        kth="logits.topk(max(1, min(top_k, logits.shape[-1]) - 1), dim=-1).values[:, -1:]"
    ),
    "keeps_one_more_than_k": _sampler(
        kth="logits.topk(min(top_k + 1, logits.shape[-1]), dim=-1).values[:, -1:]"
    ),
    "drops_the_kth_itself": _sampler(
        keep="logits = logits.masked_fill(logits <= kth, float('-inf'))"
    ),
    "keeps_exactly_k_indices": "import numpy as np\n"
    + _sampler(
        kth="logits.topk(min(top_k, logits.shape[-1]), dim=-1).indices.numpy()",
        keep=(
            "keep = np.zeros(logits.shape, dtype=bool)\n"
            "        np.put_along_axis(keep, kth, True, axis=-1)\n"
            "        logits = logits.masked_fill(minitorch.tensor(~keep), float('-inf'))"
        ),
    ),
    "masked_logits_set_to_zero": _sampler(keep="logits = logits.masked_fill(logits < kth, 0.0)"),
    "top_k_not_clamped": _sampler(kth="logits.topk(top_k, dim=-1).values[:, -1:]"),
    "temperature_zero_divides": _sampler(greedy="pass"),
    "greedy_without_keepdim": _sampler(
        greedy="if temperature == 0:\n        return logits.argmax(dim=-1)"
    ),
    "greedy_draws_anyway": _sampler(
        greedy=(
            "if temperature == 0:\n"
            "        minitorch.rand(1, generator=generator)\n"
            "        return logits.argmax(dim=-1, keepdim=True)"
        )
    ),
    "delegates_exec_of_sample_next_token": """
import inspect

_namespace = dict(vars(gpt))
exec(inspect.getsource(gpt.sample_next_token), _namespace)
sample_next_token = _namespace["sample_next_token"]
""",
    "delegates_sample_next_token": """
def sample_next_token(logits, temperature=1.0, top_k=None, generator=None):
    return gpt.sample_next_token(logits, temperature, top_k, generator)
""",
}


# --- 08.6 decoding with a KV cache --------------------------------------------------------------
def _generate(
    fresh="cache is None or cache[0].length == block_size",
    window="idx[:, -block_size:]",
    step="idx[:, -1:]",
    sample="sample_next_token(logits[:, -1, :], temperature, top_k, generator)",
    append="idx = minitorch.cat([idx, next_token], dim=1)",
    grad="minitorch.no_grad()",
):
    return f"""
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    block_size = model.config.block_size
    cache = None
    with {grad}:
        for _ in range(max_new_tokens):
            if {fresh}:
                cache = [KVCache() for _ in range(model.config.n_layer)]
                logits, _ = model({window}, cache=cache)
            else:
                logits, _ = model({step}, cache=cache)
            next_token = {sample}
            {append}
    return idx
"""


GENERATE = {
    "never_caches": _generate(fresh="True"),
    "first_step_on_the_last_token": _generate(window="idx[:, -1:]"),
    "whole_sequence_with_the_cache": _generate(step="idx[:, -block_size:]"),
    "last_two_tokens_each_step": _generate(step="idx[:, -2:]"),
    "cache_never_refilled": _generate(fresh="cache is None"),
    "refilled_one_step_early": _generate(
        fresh="cache is None or cache[0].length >= block_size - 1"
    ),
    "window_one_token_short": _generate(window="idx[:, -(block_size - 1):]"),
    "new_token_not_appended": _generate(
        append="out = minitorch.cat([idx, next_token], dim=1)"
    ).replace("return idx", "return out"),
    "temperature_not_passed": _generate(
        sample="sample_next_token(logits[:, -1, :], 1.0, top_k, generator)"
    ),
    "top_k_not_passed": _generate(
        sample="sample_next_token(logits[:, -1, :], temperature, None, generator)"
    ),
    "generator_not_passed": _generate(
        sample="sample_next_token(logits[:, -1, :], temperature, top_k)"
    ),
    "with_autograd_recording": _generate(grad="minitorch.enable_grad()"),
    "a_new_cache_every_step": _generate(
        fresh="True", window="idx[:, -block_size:] if cache is None else idx[:, -1:]"
    ),
    "first_step_runs_the_whole_prompt": _generate(
        fresh="(first := cache is None) or cache[0].length == block_size",
        window="idx if first else idx[:, -block_size:]",
    ),
    "window_from_the_start": _generate(window="idx[:, :block_size]"),
    "never_crops": _generate(window="idx"),
    "prompt_cropped_for_good": _generate(
        fresh="cache is None or cache[0].length == block_size",
        window="(idx := idx[:, -block_size:])",
    ),
    "delegates_exec_of_generate": """
import inspect
import textwrap

_namespace = dict(vars(gpt))
exec(textwrap.dedent(inspect.getsource(gpt.GPT.generate)), _namespace)
_generate = _namespace["generate"]


def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    return _generate(model, idx, max_new_tokens, temperature, top_k, True, generator)
""",
    "delegates_generate": """
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    return model.generate(idx, max_new_tokens, temperature, top_k, True, generator)
""",
}


# --- 08.7 warmup and cosine decay ---------------------------------------------------------------
def _schedule(
    warm="max_lr * (step + 1) / warmup_steps",
    warming="step < warmup_steps",
    after="step > max_steps",
    end="min_lr",
    t="(step - warmup_steps) / (max_steps - warmup_steps)",
    decay="min_lr + 0.5 * (1.0 + math.cos(math.pi * t)) * (max_lr - min_lr)",
    before="",
):
    return f"""
def warmup_cosine(step, warmup_steps, max_steps, max_lr, min_lr):
    {before or "pass"}
    if {warming}:
        return {warm}
    if {after}:
        return {end}
    t = {t}
    return {decay}
"""


SCHEDULE = {
    "warmup_from_zero": _schedule(warm="max_lr * step / warmup_steps"),
    "warmup_over_one_step_more": _schedule(warm="max_lr * (step + 1) / (warmup_steps + 1)"),
    "warmup_runs_one_step_long": _schedule(warming="step <= warmup_steps"),
    "integer_division": _schedule(warm="max_lr * ((step + 1) // warmup_steps)"),
    "full_cosine_period": _schedule(
        decay="min_lr + 0.5 * (1.0 + math.cos(2 * math.pi * t)) * (max_lr - min_lr)"
    ),
    "no_half": _schedule(decay="min_lr + (1.0 + math.cos(math.pi * t)) * (max_lr - min_lr)"),
    "decay_measured_from_step_zero": _schedule(t="step / max_steps"),
    "decay_over_max_steps": _schedule(t="(step - warmup_steps) / max_steps"),
    "linear_decay": _schedule(decay="max_lr - t * (max_lr - min_lr)"),
    "decays_to_zero": _schedule(decay="0.5 * (1.0 + math.cos(math.pi * t)) * max_lr", end="0.0"),
    "min_lr_plus_the_full_swing": _schedule(
        decay="min_lr + 0.5 * (1.0 + math.cos(math.pi * t)) * max_lr"
    ),
    "cosine_goes_on_after_max_steps": _schedule(after="False"),
    "max_lr_after_the_end": _schedule(end="max_lr"),
    "divides_by_warmup_first": _schedule(
        before="warm = max_lr * (step + 1) / warmup_steps", warm="warm"
    ),
    "computed_in_float32": "import numpy as np\n"
    + _schedule(
        warm="float(np.float32(max_lr) * np.float32(step + 1) / np.float32(warmup_steps))",
        decay=(
            "float(np.float32(min_lr) + np.float32(0.5) * (np.float32(1.0) + "
            "np.cos(np.float32(math.pi) * np.float32(t))) * np.float32(max_lr - min_lr))"
        ),
    ),
    "computed_with_minitorch_tensors": _schedule(
        decay=(
            "(min_lr + 0.5 * (1.0 + minitorch.tensor(math.pi * t).cos()) * (max_lr - min_lr))"
            ".item()"
        )
    ),
    "warmup_from_min_lr": _schedule(warm="min_lr + (max_lr - min_lr) * (step + 1) / warmup_steps"),
    "decay_starts_one_step_late": _schedule(
        t="(step - warmup_steps - 1) / (max_steps - warmup_steps - 1)",
        warming="step <= warmup_steps",
    ),
    "delegates_exec_of_warmup_cosine": """
import inspect

from minitorch.optim import schedules as _schedules

_namespace = dict(vars(_schedules))
exec(inspect.getsource(_schedules.warmup_cosine), _namespace)
warmup_cosine = _namespace["warmup_cosine"]
""",
    "delegates_warmup_cosine": """
from minitorch.optim.schedules import warmup_cosine as _lr


def warmup_cosine(step, warmup_steps, max_steps, max_lr, min_lr):
    return _lr(step, warmup_steps, max_steps, max_lr, min_lr)
""",
}


# --- 08.8 nucleus sampling ------------------------------------------------------------------------
def _top_p(
    greedy="if temperature == 0:\n        return logits.argmax(dim=-1, keepdim=True)",
    probs="nn.functional.softmax(logits / temperature, dim=-1)",
    sort="probs.sort(dim=-1, descending=True)",
    before="ranked @ minitorch.ones(vocab, vocab, dtype=probs.dtype).triu(diagonal=1)",
    keep="(before < top_p).gather(-1, order.argsort(dim=-1))",
    draw="minitorch.multinomial(probs.masked_fill(~keep, 0.0), 1, generator=generator)",
):
    return f"""
def sample_top_p(logits, top_p, temperature=1.0, generator=None):
    {greedy}
    probs = {probs}
    ranked, order = {sort}
    vocab = probs.shape[-1]
    before = {before}
    keep = {keep}
    return {draw}
"""


_INCLUSIVE = "ranked @ minitorch.ones(vocab, vocab, dtype=probs.dtype).triu()"
TOP_P = {
    "crossing_token_dropped": _top_p(
        before=_INCLUSIVE,
        keep="((before <= top_p) | (minitorch.arange(vocab) == 0)).gather(-1, order.argsort(-1))",
    ),
    "keeps_nothing_when_sure": _top_p(
        before=_INCLUSIVE, keep=("(before < top_p).gather(-1, order.argsort(dim=-1))")
    ),
    "one_token_too_many": _top_p(
        before="ranked @ minitorch.ones(vocab, vocab, dtype=probs.dtype).triu(diagonal=2)"
    ),
    "nucleus_of_the_unsorted_vocabulary": _top_p(
        sort="probs, minitorch.arange(probs.shape[-1]).expand(probs.shape)"
    ),
    "least_likely_first": _top_p(sort="probs.sort(dim=-1)"),
    "mask_left_in_sorted_order": _top_p(keep="before < top_p"),
    "running_total_the_wrong_way": _top_p(
        before="ranked @ minitorch.ones(vocab, vocab, dtype=probs.dtype).tril(diagonal=-1)"
    ),
    "keeps_a_top_p_share_of_the_vocabulary": "import math as _math\n"
    + _top_p(
        keep="(minitorch.arange(vocab) < _math.ceil(top_p * vocab)).expand(probs.shape)"
        ".gather(-1, order.argsort(dim=-1))"
    ),
    "outside_draws_replaced_by_the_best": _top_p(
        draw=(
            "minitorch.where(keep.gather(-1, (t := minitorch.multinomial(probs, 1, "
            "generator=generator))), t, probs.argmax(dim=-1, keepdim=True))"
        )
    ),
    "nucleus_before_the_temperature": _top_p(
        probs="nn.functional.softmax(logits, dim=-1)",
        draw=(
            "minitorch.multinomial(nn.functional.softmax(logits / temperature, dim=-1)"
            ".masked_fill(~keep, 0.0), 1, generator=generator)"
        ),
    ),
    "temperature_multiplies": _top_p(probs="nn.functional.softmax(logits * temperature, dim=-1)"),
    "temperature_ignored": _top_p(probs="nn.functional.softmax(logits, dim=-1)"),
    "temperature_zero_divides": _top_p(greedy="pass"),
    "greedy_draws_anyway": _top_p(
        greedy=(
            "if temperature == 0:\n"
            "        minitorch.rand(1, generator=generator)\n"
            "        return logits.argmax(dim=-1, keepdim=True)"
        )
    ),
    "global_generator": _top_p(draw="minitorch.multinomial(probs.masked_fill(~keep, 0.0), 1)"),
    "one_dim_result": _top_p(
        draw="minitorch.multinomial(probs.masked_fill(~keep, 0.0), 1, generator=generator).view(-1)"
    ),
    "divides_the_logits_in_place": _top_p(
        greedy=(
            "if temperature == 0:\n"
            "        return logits.argmax(dim=-1, keepdim=True)\n"
            "    logits.div_(temperature)"
        ),
        probs="nn.functional.softmax(logits, dim=-1)",
    ),
    "softmax_without_the_max": _top_p(
        probs="(logits / temperature).exp() / (logits / temperature).exp().sum(-1, keepdim=True)"
    ),
    "delegates_to_the_package_sampler": """
def sample_top_p(logits, top_p, temperature=1.0, generator=None):
    probs = nn.functional.softmax(logits / max(temperature, 1e-9), dim=-1)
    ranked = probs.sort(dim=-1, descending=True).values.numpy()
    k = int(((ranked.cumsum(-1) - ranked) < top_p).sum(-1).max())
    return gpt.sample_next_token(logits, temperature, k, generator)
""",
}

MUTANTS = {
    "08.1": BPE,
    "08.2": ATTENTION,
    "08.3": HEADS,
    "08.4": BLOCK,
    "08.5": SAMPLE,
    "08.6": GENERATE,
    "08.7": SCHEDULE,
    "08.8": TOP_P,
}

# --- correct alternatives: full marks ------------------------------------------------------------
CORRECT = {
    "08.1": {
        "counter_and_most_common": """
from collections import Counter


def get_pair_counts(ids):
    return dict(Counter(zip(ids, ids[1:])))


def train_bpe(data, vocab_size):
    ids, merges = list(data), []
    for k in range(vocab_size - 256):
        if len(ids) < 2:
            raise ValueError(f"no pair is left after {k} merges")
        pair = Counter(zip(ids, ids[1:])).most_common(1)[0][0]  # (ties: the first counted)
        ids = merge(ids, pair, 256 + k)
        merges.append(pair)
    return merges
""",
        "merge_with_a_for_loop_and_a_flag": """
def merge(ids, pair, new_id):
    out, skip = [], False
    for i, a in enumerate(ids):
        if skip:
            skip = False
        elif i + 1 < len(ids) and (a, ids[i + 1]) == tuple(pair):
            out.append(new_id)
            skip = True
        else:
            out.append(a)
    return out
""",
        "unused_import_of_the_tokenizer": """
from minitorch.text import BPETokenizer  # imported, never called


def get_pair_counts(ids):
    counts = {}
    for i in range(len(ids) - 1):
        counts[ids[i], ids[i + 1]] = counts.get((ids[i], ids[i + 1]), 0) + 1
    return counts
""",
    },
    "08.2": {
        "where_and_a_large_negative": """
def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    scores = (q / math.sqrt(q.shape[-1])) @ k.mT
    visible = minitorch.ones(T, S, dtype=minitorch.bool).tril(S - T)
    scores = minitorch.where(visible, scores, -1e9)
    e = (scores - scores.max(dim=-1, keepdim=True).values).exp()
    return (e / e.sum(-1, keepdim=True)) @ v
""",
        "shift_before_the_scale": _attention(
            scores="q @ k.transpose(-2, -1)",
            mask="scores = scores.masked_fill(~visible, float('-inf'))",
            shift=(
                "scores = (scores - scores.max(dim=-1, keepdim=True).values.detach()) "
                "/ math.sqrt(q.shape[-1])"
            ),
        ),
        "triu_of_the_future": """
def causal_attention(q, k, v):
    T, S = q.shape[-2], k.shape[-2]
    future = minitorch.ones(T, S, dtype=minitorch.bool).triu(diagonal=S - T + 1)
    scores = (q @ k.transpose(-1, -2)) * (1.0 / q.shape[-1] ** 0.5)
    scores = scores.masked_fill(future, float("-inf"))
    e = (scores - scores.max(dim=-1, keepdim=True).values.detach()).exp()
    return e @ v / e.sum(dim=-1, keepdim=True)
""",
    },
    "08.3": {
        "permute_and_reshape": """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, T, n_head, -1).permute(0, 2, 1, 3)


def merge_heads(x):
    B, n_head, T, hs = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, -1)
""",
    },
    "08.4": {
        "named_steps": _block(
            "h = self.ln_1(x)\nx = x + self.attn(h, cache=cache)\n"
            "h = self.ln_2(x)\nx = x + self.mlp(h)\nreturn x"
        ),
    },
    "08.5": {
        "probabilities_not_normalised": _sampler(
            probs="(logits - logits.max(dim=-1, keepdim=True).values).exp()"
        ),
        "masked_with_where": _sampler(
            keep="logits = minitorch.where(logits >= kth, logits, float('-inf'))"
        ),
    },
    "08.6": {
        "a_while_loop_and_a_position_count": """
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    block_size, cache, done = model.config.block_size, None, 0
    with minitorch.no_grad():
        while done < max_new_tokens:
            if cache is not None and cache[0].length < block_size:
                logits = model(idx[:, -1:], cache=cache)[0]
            else:
                cache = [KVCache() for _ in model.transformer.h]
                logits = model(idx[:, max(0, idx.shape[1] - block_size) :], cache=cache)[0]
            token = sample_next_token(logits[:, -1], temperature, top_k, generator)
            idx = minitorch.cat([idx, token], 1)
            done += 1
    return idx
""",
    },
    "08.8": {
        "inverse_cdf_in_numpy": """
import numpy as np


def sample_top_p(logits, top_p, temperature=1.0, generator=None):
    z = logits.detach().numpy().astype(np.float64)
    if temperature == 0:
        return minitorch.tensor(z.argmax(axis=-1)[:, None], dtype=minitorch.int64)
    z = z / temperature
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    order = np.argsort(-p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    ranked = np.where(np.cumsum(ranked, axis=-1) - ranked < top_p, ranked, 0.0)
    cdf = np.cumsum(ranked, axis=-1)
    u = minitorch.rand(len(p), 1, generator=generator).numpy() * cdf[:, -1:]
    pick = np.minimum((u >= cdf).sum(axis=-1, keepdims=True), p.shape[-1] - 1)
    return minitorch.tensor(np.take_along_axis(order, pick, axis=-1), dtype=minitorch.int64)
""",
        "minus_infinity_outside_the_nucleus": """
def sample_top_p(logits, top_p, temperature=1.0, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    probs = nn.functional.softmax(logits, dim=-1)
    ranked, order = probs.sort(dim=-1, descending=True)
    n = probs.shape[-1]
    running = ranked @ minitorch.ones(n, n).tril().T  # inclusive running totals
    outside = (running - ranked >= top_p).gather(-1, order.argsort(dim=-1))
    logits = logits.masked_fill(outside, float("-inf"))
    return minitorch.multinomial(nn.functional.softmax(logits, dim=-1), 1, generator=generator)
""",
    },
    "08.7": {
        "one_expression_per_phase": """
def warmup_cosine(step, warmup_steps, max_steps, max_lr, min_lr):
    if step >= max_steps:
        return float(min_lr)
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / (max_steps - warmup_steps)
    return (max_lr + min_lr) / 2 + (max_lr - min_lr) / 2 * math.cos(math.pi * progress)
""",
    },
}
