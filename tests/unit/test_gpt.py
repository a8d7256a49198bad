"""The GPT on its own: heads as views, the KV cache (generation equals recomputing), sampling,
nanoGPT's initialisation, tying and optimizer groups, and bad input."""

import math

import numpy as np
import pytest

import minitorch
from minitorch.models import (
    GPT,
    GPTConfig,
    KVCache,
    merge_heads,
    sample_next_token,
    split_heads,
)
from minitorch.models.gpt import attend
from minitorch.nn.attention import scaled_dot_product_attention

TINY = dict(block_size=12, vocab_size=40, n_layer=2, n_head=2, n_embd=16)


def tiny(**overrides):
    minitorch.manual_seed(0)
    return GPT(GPTConfig(**{**TINY, **overrides}))


def test_split_heads_is_a_view_and_merge_heads_undoes_it():
    # catches: a reshape straight to (B, nh, T, hs), which mixes positions into heads
    x = minitorch.arange(2 * 3 * 8, dtype=minitorch.float32).reshape(2, 3, 8)
    heads = split_heads(x, 2)
    assert heads.shape == (2, 2, 3, 4) and heads.untyped_storage() is x.untyped_storage()
    np.testing.assert_array_equal(heads.numpy()[1, 1, 2], x.numpy()[1, 2, 4:])  # head 1
    np.testing.assert_array_equal(merge_heads(heads).numpy(), x.numpy())


def test_kv_cache_appends_along_the_positions():
    # catches: keys appended along the wrong dim, a length that counts something else
    cache = KVCache()
    assert cache.length == 0
    k, v = cache.append(minitorch.ones(1, 2, 3, 4), minitorch.zeros(1, 2, 3, 4))
    k, v = cache.append(minitorch.ones(1, 2, 1, 4) * 2, minitorch.zeros(1, 2, 1, 4))
    assert cache.length == 4 and k.shape == (1, 2, 4, 4) and k.numpy()[0, 0, 3, 0] == 2


def test_new_queries_attend_to_the_cache_as_the_last_positions():
    # catches: is_causal used for 3 new queries over 7 keys (PyTorch's mask is aligned
    # top-left: query 0 would see key 0 only)
    rng = np.random.default_rng(0)
    q, k, v = (minitorch.tensor(rng.standard_normal((1, 2, 7, 4))) for _ in range(3))
    full = scaled_dot_product_attention(q, k, v, is_causal=True)
    for new in (1, 3):
        part = attend(q[:, :, -new:], k, v)
        np.testing.assert_allclose(part.numpy(), full.numpy()[:, :, -new:], rtol=1e-12)


def test_forward_with_a_cache_equals_forward_without():
    # catches: positions restarting at 0 for the cached tokens' successors
    model = tiny().eval()
    idx = minitorch.randint(0, 40, (2, 9), generator=minitorch.Generator(1))
    whole, _ = model(idx, idx)
    cache = [KVCache() for _ in range(2)]
    model(idx[:, :5], cache=cache)
    last, _ = model(idx[:, 5:], cache=cache)
    np.testing.assert_allclose(
        last.detach().numpy()[:, 0], whole.detach().numpy()[:, -1], atol=1e-5
    )


@pytest.mark.parametrize("temperature, top_k", [(1.0, None), (0.8, 5), (0.0, None)])
def test_generation_with_the_cache_gives_the_tokens_of_recomputing(temperature, top_k):
    # catches: a cache that goes stale, that is not rebuilt when the window slides past
    # block_size (20 new tokens after 4 overflow the 12 positions), draws in another order
    model = tiny().eval()
    prompt = minitorch.randint(0, 40, (3, 4), generator=minitorch.Generator(2))
    runs = [
        model.generate(prompt, 20, temperature, top_k, use_cache=use_cache,
                       generator=minitorch.Generator(5))
        for use_cache in (True, False)
    ]  # fmt: skip
    assert runs[0].shape == (3, 24)
    np.testing.assert_array_equal(runs[0].numpy(), runs[1].numpy())
    np.testing.assert_array_equal(runs[0].numpy()[:, :4], prompt.numpy())


def test_sampling_keeps_to_the_top_k_and_sharpens_with_temperature():
    # catches: top-k keeping the k smallest, temperature multiplied instead of divided
    logits = minitorch.tensor([[0.0, 1.0, 2.0, 3.0, 0.5]]).expand(3000, 5).contiguous()
    gen = minitorch.Generator(0)
    picks = sample_next_token(logits, 1.0, top_k=2, generator=gen).numpy().ravel()
    assert set(picks) == {2, 3}
    share = np.mean(picks == 3)
    assert abs(share - 1 / (1 + math.exp(-1))) < 0.03  # softmax over the two kept logits
    cold = sample_next_token(logits, 0.25, generator=gen).numpy().ravel()
    assert np.mean(cold == 3) > 0.95
    assert sample_next_token(logits[:2], 0.0).tolist() == [[3], [3]]  # greedy
    with pytest.raises(ValueError, match="temperature"):
        sample_next_token(logits, -1.0)
    with pytest.raises(ValueError, match="top_k"):
        sample_next_token(logits, 1.0, top_k=0)


def test_nanogpt_initialisation_and_weight_tying():
    # catches: lm_head not tied, c_proj not scaled by 1/sqrt(2 n_layer), biases not zeroed
    model = tiny(n_embd=64, n_layer=4, vocab_size=200, block_size=64)
    assert model.lm_head.weight is model.transformer.wte.weight
    params = dict(model.named_parameters())
    assert "lm_head.weight" not in params  # counted once, under its first name
    assert model.get_num_params() == sum(p.numel() for p in params.values()) - 64 * 64
    c_fc = params["transformer.h.0.mlp.c_fc.weight"].detach().numpy()
    c_proj = params["transformer.h.0.mlp.c_proj.weight"].detach().numpy()
    assert abs(c_fc.std() - 0.02) < 0.002
    assert abs(c_proj.std() - 0.02 / math.sqrt(8)) < 0.001
    assert (params["transformer.h.0.attn.c_attn.bias"].detach().numpy() == 0).all()


def test_a_tied_weight_gets_both_gradients():
    # catches: tying by copying (the embedding's gradient would be lost)
    model = tiny()
    idx = minitorch.randint(0, 40, (2, 6))
    _, loss = model(idx, idx)
    loss.backward()
    embedding_only = minitorch.autograd.grad(
        model.transformer.wte(idx).sum(), [model.transformer.wte.weight]
    )[0]
    assert np.abs(embedding_only.numpy()).sum() > 0
    assert model.lm_head.weight.grad is model.transformer.wte.weight.grad


def test_configure_optimizers_decays_only_the_matrices():
    # catches: weight decay on biases and LayerNorm gains, a parameter in both groups
    model = tiny()
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.ndim >= 2 for p in decay["params"]) and all(
        p.ndim == 1 for p in no_decay["params"]
    )
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
    assert type(opt).__name__ == "AdamW" and decay["betas"] == (0.9, 0.95)


def test_loss_ignores_targets_of_minus_one():
    # catches: ignore_index not passed through
    model = tiny()
    idx = minitorch.randint(0, 40, (1, 6))
    targets = minitorch.tensor([[3, 4, -1, -1, -1, -1]])
    logits, loss = model(idx, targets)
    expected = minitorch.nn.functional.cross_entropy(logits[0, :2], targets[0, :2])
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)


def test_bad_input_is_named():
    # catches: a long sequence silently read past the position table, floats as token ids
    model = tiny()
    with pytest.raises(ValueError, match="block size is only 12"):
        model(minitorch.zeros(1, 13, dtype=minitorch.int64))
    with pytest.raises(TypeError, match="integer tensor"):
        model(minitorch.zeros(1, 3))
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(block_size=8, vocab_size=10, n_layer=1, n_head=3, n_embd=8)
    with pytest.raises(ValueError, match="positive int"):
        GPTConfig(block_size=0, vocab_size=10, n_layer=1, n_head=1, n_embd=8)


def test_onnx_export_gives_the_same_next_token_logits(tmp_path):
    # catches: an op of the model the exporter cannot write, or writes wrongly (attention's
    # mask and scale, the heads' views, GELU's erf, the tied lm_head, the last-position slice)
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model = tiny().eval()

    class NextTokenLogits(minitorch.nn.Module):  # forward returns (logits, None): keep logits
        def __init__(self, gpt):
            super().__init__()
            self.gpt = gpt

        def forward(self, idx):
            return self.gpt(idx)[0]

    idx = minitorch.randint(0, 40, (2, 12), generator=minitorch.Generator(4))
    path = tmp_path / "gpt.onnx"
    minitorch.onnx.export(NextTokenLogits(model), (idx,), path, input_names=["idx"])
    (got,) = ort.InferenceSession(str(path)).run(None, {"idx": idx.numpy()})
    expected = model(idx)[0].detach().numpy()
    assert got.shape == expected.shape == (2, 1, 40)
    np.testing.assert_allclose(got, expected, atol=1e-5)
