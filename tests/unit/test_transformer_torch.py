"""Differential tests of nn.MultiheadAttention and the nn.Transformer family against PyTorch
(issue 40): torch's initialised weights load into ours through its state_dict, then
outputs, attention weights and every gradient are compared, masks included."""

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

RNG = np.random.default_rng(3)


def both(shape, requires_grad=True):
    array = RNG.standard_normal(shape)
    return (
        mt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def masks(array):
    return mt.tensor(array), torch.tensor(array)


def close(mine, theirs, what, rtol=1e-7, atol=1e-9):
    a, b = mine.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def twins(name, *args, **kwargs):
    """The same float64 module in both, with torch's initial weights loaded into ours."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    mine = getattr(nn, name)(*args, **kwargs).to(mt.float64)
    assert list(mine.state_dict()) == list(theirs.state_dict()), f"{name}: parameter names"
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def backward_and_compare(mine, theirs, out, tout, inputs, what, **tolerance):
    w = RNG.standard_normal(tuple(tout.shape))
    (out * mt.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for i, (x, tx) in enumerate(inputs):
        close(x.grad, tx.grad, f"{what}: grad of input {i}", **tolerance)
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        close(p.grad, tp.grad, f"{what}: grad of {name}", **tolerance)


L, S, N, E, H = 3, 4, 2, 6, 2
CAUSAL = np.triu(np.ones((L, S), dtype=bool), k=2)  # (no row fully hidden)
PADDING = np.array([[False, False, False, True], [False, True, True, True]])
FLOAT_MASK = np.where(CAUSAL, -1e9, 0.0) + RNG.standard_normal((L, S)) * 0.1
HEAD_MASK = RNG.standard_normal((N * H, L, S)) * 0.5

MHA_CASES = [
    (dict(), dict()),
    (dict(batch_first=True), dict(attn_mask=CAUSAL)),
    (dict(), dict(attn_mask=FLOAT_MASK, key_padding_mask=PADDING)),
    (dict(), dict(attn_mask=HEAD_MASK, average_attn_weights=False)),
    (dict(kdim=3, vdim=5), dict(key_padding_mask=PADDING)),
    (dict(bias=False), dict(key_padding_mask=PADDING.astype(float) * -1e9)),
    (dict(batch_first=True), dict(attn_mask=CAUSAL, key_padding_mask=PADDING, need_weights=False)),
]


@pytest.mark.parametrize("init_kwargs,call_kwargs", MHA_CASES)
def test_multihead_attention_matches_torch(init_kwargs, call_kwargs):
    # catches: the head split and merge (a transpose in the wrong place mixes heads), the
    # 1/sqrt(head_dim) scale, bool masks read the wrong way round (True hides here), the
    # key padding mask's broadcast over heads and queries, kdim/vdim projections, and the
    # attention weights averaged (or not) over the heads
    mine, theirs = twins("MultiheadAttention", E, H, **init_kwargs)
    first = init_kwargs.get("batch_first", False)
    shape = lambda t: (N, t) if first else (t, N)
    q = both(shape(L) + (E,))
    k = both(shape(S) + (init_kwargs.get("kdim", E),))
    v = both(shape(S) + (init_kwargs.get("vdim", E),))
    kwargs, tkwargs = {}, {}
    for name, value in call_kwargs.items():
        if isinstance(value, np.ndarray):
            kwargs[name], tkwargs[name] = masks(value)
        else:
            kwargs[name] = tkwargs[name] = value
    out, weights = mine(q[0], k[0], v[0], **kwargs)
    tout, tweights = theirs(q[1], k[1], v[1], **tkwargs)
    close(out, tout, f"MHA {init_kwargs} {list(call_kwargs)} output")
    if tweights is None:
        assert weights is None
    else:
        close(weights, tweights, f"MHA {init_kwargs} {list(call_kwargs)} weights")
    backward_and_compare(mine, theirs, out, tout, [q, k, v], f"MHA {init_kwargs}")


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # (the NaN row, as torch's)
def test_multihead_attention_unbatched_and_fully_masked():
    # catches: 2-D inputs treated as batched; and a query whose keys are all hidden, which
    # PyTorch gives NaN with need_weights (a plain softmax) and zeros without
    mine, theirs = twins("MultiheadAttention", E, H)
    q, k = both((L, E)), both((S, E))
    out, w = mine(q[0], k[0], k[0])
    tout, tw = theirs(q[1], k[1], k[1])
    close(out, tout, "unbatched output")
    close(w, tw, "unbatched weights")
    hidden = masks(np.array([[True] * S, [False, True, False, True]]))
    x = both((L, N, E), requires_grad=False)
    for need_weights in (True, False):
        out, _ = mine(
            x[0],
            x[0][:1].expand(S, N, E),
            x[0][:1].expand(S, N, E),
            key_padding_mask=hidden[0],
            need_weights=need_weights,
        )
        tout, _ = theirs(
            x[1],
            x[1][:1].expand(S, N, E),
            x[1][:1].expand(S, N, E),
            key_padding_mask=hidden[1],
            need_weights=need_weights,
        )
        close(out, tout, f"fully masked, need_weights={need_weights}")


def test_multihead_attention_errors():
    mha = nn.MultiheadAttention(E, H)
    x = mt.zeros(L, N, E)
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match=r"shape of the attn_mask"):
        mha(x, x, x, attn_mask=mt.zeros(2, 2))
    with pytest.raises(AssertionError, match="key_padding_mask shape"):
        mha(x, x, x, key_padding_mask=mt.zeros(N, 2, dtype=mt.bool))
    with pytest.raises(NotImplementedError, match="add_bias_kv"):
        nn.MultiheadAttention(E, H, add_bias_kv=True)


LAYER_CASES = [
    ("TransformerEncoderLayer", dict()),
    ("TransformerEncoderLayer", dict(norm_first=True, activation="gelu", batch_first=True)),
    ("TransformerDecoderLayer", dict()),
    ("TransformerDecoderLayer", dict(norm_first=True, activation=torch.nn.functional.gelu)),
]


@pytest.mark.parametrize("name,kwargs", LAYER_CASES, ids=[str(c) for c in LAYER_CASES])
def test_transformer_layers_match_torch(name, kwargs):
    # catches: post-norm vs pre-norm order, the residuals, the feed-forward's activation,
    # and where the decoder's memory and its masks go
    mine_kwargs = dict(kwargs)
    if callable(kwargs.get("activation")):
        mine_kwargs["activation"] = nn.functional.gelu
    theirs = getattr(torch.nn, name)(E, H, dim_feedforward=8, dropout=0.0, **kwargs).double()
    mine = getattr(nn, name)(E, H, dim_feedforward=8, dropout=0.0, **mine_kwargs).to(mt.float64)
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    first = kwargs.get("batch_first", False)
    x = both((N, L, E) if first else (L, N, E))
    causal = masks(np.triu(np.ones((L, L), dtype=bool), k=1))
    padding = masks(np.array([[False, False, True], [False, False, False]]))
    if name == "TransformerEncoderLayer":
        out = mine(x[0], src_mask=causal[0], src_key_padding_mask=padding[0])
        tout = theirs(x[1], src_mask=causal[1], src_key_padding_mask=padding[1])
        inputs = [x]
    else:
        memory = both((S, N, E))
        memory_padding = masks(PADDING)
        out = mine(x[0], memory[0], tgt_mask=causal[0], memory_key_padding_mask=memory_padding[0])
        tout = theirs(
            x[1], memory[1], tgt_mask=causal[1], memory_key_padding_mask=memory_padding[1]
        )
        inputs = [x, memory]
    close(out, tout, f"{name} {kwargs}", rtol=1e-5, atol=1e-6)  # (gelu: erf to 1.5e-7)
    backward_and_compare(mine, theirs, out, tout, inputs, f"{name} {kwargs}", rtol=1e-5, atol=1e-6)


def test_transformer_matches_torch():
    # catches: the encoder/decoder stacks sharing one layer's weights instead of copies,
    # the final norms, and Transformer's xavier init of every matrix
    kwargs = dict(
        d_model=E,
        nhead=H,
        num_encoder_layers=2,
        num_decoder_layers=1,
        dim_feedforward=8,
        dropout=0.0,
        batch_first=True,
    )
    mine, theirs = twins("Transformer", **kwargs)
    src, tgt = both((N, S, E)), both((N, L, E))
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(L).to(mt.float64)
    ttgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(L).double()
    close(tgt_mask, ttgt_mask, "generate_square_subsequent_mask")
    padding = masks(PADDING)
    out = mine(src[0], tgt[0], tgt_mask=tgt_mask, src_key_padding_mask=padding[0])
    tout = theirs(src[1], tgt[1], tgt_mask=ttgt_mask, src_key_padding_mask=padding[1])
    close(out, tout, "Transformer")
    backward_and_compare(mine, theirs, out, tout, [src, tgt], "Transformer")
    layers = mine.encoder.layers
    assert layers[0].linear1.weight is not layers[1].linear1.weight
    mt.manual_seed(0)
    fresh = nn.Transformer(**kwargs)
    w = fresh.encoder.layers[0].linear1.weight
    bound = (6 / (w.shape[0] + w.shape[1])) ** 0.5
    assert w.abs().max().item() <= bound and w.abs().max().item() > 0.8 * bound


def test_transformer_encoder_stack_and_errors():
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=8, dropout=0.0)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=8, dropout=0.0),
        2,
        norm=torch.nn.LayerNorm(E),
        enable_nested_tensor=False,
    ).double()
    assert list(encoder.state_dict()) == list(theirs.state_dict())
    encoder = encoder.to(mt.float64)
    encoder.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = both((L, N, E))
    close(encoder(x[0]), theirs(x[1]), "TransformerEncoder")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        nn.Transformer(E, H, 1, 1, 8)(mt.zeros(2, 3, E), mt.zeros(2, 4, E))
