"""Scaled dot-product attention: PyTorch's results and gradients for every kind of mask,
the numerics (large scores, fully masked rows), dropout, and bad input."""

import math

import numpy as np
import pytest

import minitorch
from minitorch.autograd import gradcheck
from minitorch.nn import functional as F
from minitorch.nn.attention import causal_mask, scaled_dot_product_attention

RNG = np.random.default_rng(0)


def qkv(batch=(2, 3), L=4, S=5, E=6, Ev=7, dtype=np.float64):  # noqa: N803
    q = RNG.standard_normal((*batch, L, E)).astype(dtype)
    k = RNG.standard_normal((*batch, S, E)).astype(dtype)
    v = RNG.standard_normal((*batch, S, Ev)).astype(dtype)
    return q, k, v


def leaves(*arrays):
    return [minitorch.tensor(a, requires_grad=True) for a in arrays]


def test_it_is_exported_as_functional():
    # catches: the F.scaled_dot_product_attention name missing or pointing elsewhere
    assert F.scaled_dot_product_attention is scaled_dot_product_attention


def test_unmasked_attention_is_the_softmax_weighted_mean_of_the_values():
    # catches: the scale forgotten or 1/E instead of 1/sqrt(E), softmax over the wrong dim
    q, k, v = qkv(batch=(), L=3, S=4, E=5, Ev=2)
    out = scaled_dot_product_attention(*leaves(q, k, v)).detach().numpy()
    scores = q @ k.T / math.sqrt(5)
    w = np.exp(scores - scores.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    np.testing.assert_allclose(out, w @ v, rtol=1e-12)


def test_causal_query_sees_only_itself_and_the_past():
    # catches: a mask that lets position i see i + 1 (triu instead of tril), or hides i itself
    q, k, v = qkv(batch=(1,), L=4, S=4)
    out = scaled_dot_product_attention(*leaves(q, k, v), is_causal=True).detach().numpy()
    changed = v.copy()
    changed[..., 3, :] += 100.0  # the last position's value: only the last query sees it
    out2 = scaled_dot_product_attention(*leaves(q, k, changed), is_causal=True).detach().numpy()
    np.testing.assert_array_equal(out[..., :3, :], out2[..., :3, :])
    assert not np.allclose(out[..., 3, :], out2[..., 3, :])
    np.testing.assert_allclose(out[..., 0, :], v[..., 0, :])  # the first sees only itself


def test_large_scores_do_not_overflow():
    # catches: exp of the raw scores (no max subtracted): inf / inf = NaN
    q, k, v = qkv(batch=(), L=3, S=3, E=4, dtype=np.float32)
    out = scaled_dot_product_attention(*leaves(q * 1e3, k * 1e3, v))
    assert np.isfinite(out.detach().numpy()).all()


def test_fully_masked_rows_give_zeros_and_zero_gradients():
    # catches: NaN for a query whose keys are all masked, forward or backward (0/0 in the
    # softmax, NaN * 0 in its backward)
    q, k, v = qkv(batch=(2,), L=3, S=4)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    tq, tk, tv = leaves(q, k, v)
    out = scaled_dot_product_attention(tq, tk, tv, attn_mask=minitorch.tensor(mask))
    assert (out.detach().numpy()[:, 1] == 0).all() and np.isfinite(out.detach().numpy()).all()
    out.sum().backward()
    for t in (tq, tk, tv):
        assert np.isfinite(t.grad.numpy()).all()
    assert (tq.grad.numpy()[:, 1] == 0).all()


def test_gradcheck_with_a_bool_mask_and_a_scale():
    # catches: a wrong gradient through the masked softmax or the scale
    q, k, v = qkv(batch=(2,), L=3, S=4, E=3, Ev=2)
    mask = minitorch.tensor(RNG.random((3, 4)) > 0.3)

    def f(q, k, v):
        return scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7)

    assert gradcheck(f, leaves(q, k, v))


def test_dropout_drops_weights_and_keeps_the_mean():
    # catches: dropout applied to the output instead of the weights, no 1/(1-p) rescaling
    q = minitorch.zeros(1, 200, 8)  # equal scores: every weight is 1/S
    k = minitorch.zeros(1, 50, 8)
    v = minitorch.ones(1, 50, 1)
    minitorch.manual_seed(0)
    out = scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert 0.9 < out.mean() < 1.1  # each row: (kept weights) * 2 / 50, about 1 on average
    assert out.std() > 0.05  # but the rows differ: weights were dropped
    same = scaled_dot_product_attention(q, k, v, dropout_p=0.0).numpy()
    np.testing.assert_allclose(same, 1.0, rtol=1e-6)


def test_causal_mask_is_aligned_top_left():
    # catches: a mask aligned bottom-right, which PyTorch's is_causal is not
    np.testing.assert_array_equal(causal_mask(2, 3).numpy(), [[1, 0, 0], [1, 1, 0]])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(key=np.zeros((2, 5, 3))), "same embedding size"),
        (dict(value=np.zeros((2, 6, 7))), "same sequence length"),
        (dict(attn_mask=np.ones((4, 6), dtype=bool)), "does not broadcast"),
        (dict(attn_mask=np.ones((4, 5), dtype=bool), is_causal=True), "should not be set"),
        (dict(attn_mask=np.ones((4, 5), dtype=np.int64)), "attn_mask dtype"),
        (dict(attn_mask=np.ones((4, 5), dtype=np.float16)), "attn_mask dtype"),
        (dict(dropout_p=1.5), "dropout_p"),
        (dict(key=np.zeros((2, 5, 6), dtype=np.float32)), "same dtype"),
        (dict(query=np.zeros(6)), "at least 2 dims"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    # catches: shape or dtype mistakes that would broadcast into a silently wrong answer
    args = dict(query=np.zeros((2, 4, 6)), key=np.zeros((2, 5, 6)), value=np.zeros((2, 5, 7)))
    for name in ("query", "key", "value", "attn_mask"):
        if name in kwargs:
            args[name] = kwargs.pop(name)
    args = {n: minitorch.tensor(a) for n, a in args.items()}
    with pytest.raises((RuntimeError, ValueError, TypeError), match=message):
        scaled_dot_product_attention(**args, **kwargs)


# --- against PyTorch ------------------------------------------------------------------------
MASKS = ["none", "causal", "bool", "bool-dead-row", "float", "float-dead-row", "broadcast"]


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("L, S", [(4, 4), (3, 5), (5, 3)])
def test_forward_and_backward_match_torch(mask_kind, L, S):  # noqa: N803
    # catches: any difference from PyTorch's semantics: keep-where-True bool masks, added
    # float masks, top-left causal masks for L != S, zeros for fully masked rows
    torch = pytest.importorskip("torch")
    q, k, v = qkv(L=L, S=S, dtype=np.float32)
    mask, causal, scale = None, False, None
    if mask_kind == "causal":
        causal = True
    elif mask_kind.startswith("bool"):
        mask = RNG.random((L, S)) > 0.4
        mask[:, 0] = True
        if mask_kind.endswith("dead-row"):
            mask[1] = False
    elif mask_kind.startswith("float"):
        mask = RNG.standard_normal((2, 3, L, S)).astype(np.float32)
        if mask_kind.endswith("dead-row"):
            mask[0, 1, 2] = -np.inf
        scale = 0.3
    elif mask_kind == "broadcast":
        mask = RNG.random((3, 1, S)) > 0.3  # one mask row per head, shared by the queries
        mask[..., 0] = True
    g = RNG.standard_normal((2, 3, L, 7)).astype(np.float32)

    mine = leaves(q, k, v)
    kw = dict(is_causal=causal, scale=scale)
    out = scaled_dot_product_attention(
        *mine, attn_mask=None if mask is None else minitorch.tensor(mask), **kw
    )
    out.backward(minitorch.tensor(g))
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    tout = torch.nn.functional.scaled_dot_product_attention(
        *theirs, attn_mask=None if mask is None else torch.tensor(mask), **kw
    )
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-5)
    for name, a, b in zip("qkv", mine, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-5, err_msg=name)


def test_a_float32_mask_is_added_to_bfloat16_scores_in_bfloat16():
    # catches: a float32 mask promoting the attention to float32 (PyTorch keeps bfloat16)
    q = minitorch.randn(2, 3, 4).to(minitorch.bfloat16)
    out = scaled_dot_product_attention(q, q, q, attn_mask=minitorch.zeros(3, 3))
    assert out.dtype is minitorch.bfloat16
