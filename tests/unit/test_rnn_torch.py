"""Differential tests of the recurrent layers and packed sequences against PyTorch (issue 40):
torch's initialised weights are loaded into ours through its state_dict (so the names
must match), then outputs, final states and every gradient are compared."""

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(7)


def both(shape, requires_grad=True):
    array = RNG.standard_normal(shape)
    return (
        mt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def close(mine, theirs, what, rtol=1e-7, atol=1e-9):
    a, b = mine.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def twins(name, *args, **kwargs):
    """The same float64 layer in both, with torch's initial weights loaded into ours."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    mine = getattr(nn, name)(*args, **kwargs).to(mt.float64)
    assert list(mine.state_dict()) == list(theirs.state_dict()), f"{name}: parameter names"
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def flat(out):
    """Every tensor in a layer's result (output, h_n, c_n, a PackedSequence's data)."""
    if isinstance(out, (tuple, list)) and not isinstance(out, (rnn_utils.PackedSequence,)):
        if isinstance(out, trnn.PackedSequence):
            return [out.data]
        return [t for part in out for t in flat(part)]
    if isinstance(out, rnn_utils.PackedSequence):
        return [out.data]
    return [out]


def backward_both(mine_out, theirs_out):
    """Backpropagate the same random weights of every output through both."""
    loss, tloss = 0, 0
    for a, b in zip(flat(mine_out), flat(theirs_out), strict=True):
        w = RNG.standard_normal(tuple(b.shape))
        loss = loss + (a * mt.tensor(w)).sum()
        tloss = tloss + (b * torch.tensor(w)).sum()
    loss.backward()
    tloss.backward()


def compare_grads(mine, theirs, inputs, what):
    for i, (x, tx) in enumerate(inputs):
        close(x.grad, tx.grad, f"{what}: grad of input {i}")
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        close(p.grad, tp.grad, f"{what}: grad of {name}")


LAYERS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bias=False, bidirectional=True)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(proj_size=2, bidirectional=True)),
    ("LSTM", dict(bias=False, num_layers=2, proj_size=3)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
]


@pytest.mark.parametrize("name,kwargs", LAYERS, ids=[f"{n}-{k}" for n, k in LAYERS])
@pytest.mark.parametrize("with_h0", [False, True])
def test_recurrent_layer_matches_torch(name, kwargs, with_h0):
    # catches: gate order (i, f, g, o / r, z, n), where GRU's reset gate applies (to the
    # hidden half with its bias), the reverse direction's time order, what layer 2 reads,
    # batch_first, the projection, and h_0/c_0 shapes and gradients
    mine, theirs = twins(name, 3, 4, **kwargs)
    steps, batch = 5, 2
    x, tx = both((batch, steps, 3) if kwargs.get("batch_first") else (steps, batch, 3))
    inputs = [(x, tx)]
    hx = thx = None
    if with_h0:
        layers = theirs.num_layers * (2 if theirs.bidirectional else 1)
        h0 = both((layers, batch, theirs.proj_size or 4))
        inputs.append(h0)
        hx, thx = h0
        if name == "LSTM":
            c0 = both((layers, batch, 4))
            inputs.append(c0)
            hx, thx = (hx, c0[0]), (thx, c0[1])
    out, tout = mine(x, hx), theirs(tx, thx)
    for i, (a, b) in enumerate(zip(flat(out), flat(tout), strict=True)):
        close(a, b, f"{name} {kwargs} result {i}")
    backward_both(out, tout)
    compare_grads(mine, theirs, inputs, f"{name} {kwargs}")


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    # catches: a 2-D (L, H_in) input (and a 2-D h_0) treated as batched
    mine, theirs = twins(name, 3, 4, num_layers=2)
    x, tx = both((4, 3))
    h0 = both((2, 4))
    hx, thx = ((h0[0], h0[0] * 0.5), (h0[1], h0[1] * 0.5)) if name == "LSTM" else h0
    out, tout = mine(x, hx), theirs(tx, thx)
    for i, (a, b) in enumerate(zip(flat(out), flat(tout), strict=True)):
        close(a, b, f"unbatched {name} result {i}")
    backward_both(out, tout)
    compare_grads(mine, theirs, [(x, tx), h0], f"unbatched {name}")


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_through_layer(name, enforce_sorted):
    # catches: finished sequences whose state keeps changing (h_n must be at each one's own
    # last step, in both directions), the reverse direction starting at the padding, and
    # h_0/h_n in the caller's order when the batch was sorted for packing
    mine, theirs = twins(name, 3, 4, bidirectional=True, batch_first=True)
    lengths = [5, 3, 4] if not enforce_sorted else [5, 4, 2]
    x, tx = both((3, 5, 3))
    h0 = both((2, 3, 4))
    hx, thx = ((h0[0], h0[0] * 2), (h0[1], h0[1] * 2)) if name == "LSTM" else h0
    packed = rnn_utils.pack_padded_sequence(x, lengths, True, enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, lengths, True, enforce_sorted)
    close(packed.data, tpacked.data, "packed data")
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    out, hn = mine(packed, hx)
    tout, thn = theirs(tpacked, thx)
    for i, (a, b) in enumerate(zip(flat(hn), flat(thn), strict=True)):
        close(a, b, f"packed {name} final state {i}")
    padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=6)
    tpadded, tlens = trnn.pad_packed_sequence(tout, batch_first=True, total_length=6)
    assert lens.tolist() == tlens.tolist() == lengths
    close(padded, tpadded, f"packed {name} output")
    backward_both((padded, hn), (tpadded, thn))
    compare_grads(mine, theirs, [(x, tx), h0], f"packed {name}")


def test_pad_and_pack_sequence():
    # catches: padding side and value, batch_first, pack_sequence's sort, and gradients
    # reaching every sequence through pad/pack/unpack
    seqs = [both((n, 2)) for n in (2, 4, 3)]
    mine, theirs = [s[0] for s in seqs], [s[1] for s in seqs]
    for kwargs in (dict(), dict(batch_first=True, padding_value=-1.0, padding_side="left")):
        close(
            rnn_utils.pad_sequence(mine, **kwargs), trnn.pad_sequence(theirs, **kwargs), str(kwargs)
        )
    packed = rnn_utils.pack_sequence(mine, enforce_sorted=False)
    tpacked = trnn.pack_sequence(theirs, enforce_sorted=False)
    close(packed.data, tpacked.data, "pack_sequence data")
    assert packed.sorted_indices.tolist() == tpacked.sorted_indices.tolist()
    assert packed.unsorted_indices.tolist() == tpacked.unsorted_indices.tolist()
    unpacked, tunpacked = rnn_utils.unpack_sequence(packed), trnn.unpack_sequence(tpacked)
    for i, (a, b) in enumerate(zip(unpacked, tunpacked, strict=True)):
        close(a, b, f"unpack_sequence {i}")
    backward_both(unpacked, tunpacked)
    for i, (a, b) in enumerate(seqs):
        close(a.grad, b.grad, f"grad of sequence {i}")


def test_packing_errors():
    x = mt.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(x, [2, 4, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn_utils.pack_padded_sequence(x, [3, 2, 0])
    packed = rnn_utils.pack_padded_sequence(x, [4, 2, 1])
    with pytest.raises(ValueError, match="total_length"):
        rnn_utils.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(RuntimeError, match=r"Expected 3, got 2"):
        nn.GRU(3, 4)(x)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 3, 4\), got \[2, 3, 4\]"):
        nn.RNN(2, 4)(x, mt.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(2, 4, proj_size=4)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(name, batched):
    # catches: the cells' gate order and GRU's reset gate, as in the layers; hx=None as zeros
    mine, theirs = twins(name, 3, 4)
    shape = (2,) if batched else ()
    x, tx = both(shape + (3,))
    h = both(shape + (4,))
    c = both(shape + (4,))
    for hx, thx, inputs in (
        (None, None, [(x, tx)]),
        (h[0], h[1], [(x, tx), h]),
    ):
        if name == "LSTMCell" and hx is not None:
            hx, thx, inputs = (h[0], c[0]), (h[1], c[1]), [(x, tx), h, c]
        for p in list(mine.parameters()) + list(theirs.parameters()):
            p.grad = None
        for t in (x, tx, h[0], h[1], c[0], c[1]):
            t.grad = None
        out, tout = mine(x, hx), theirs(tx, thx)
        for i, (a, b) in enumerate(zip(flat(out), flat(tout), strict=True)):
            close(a, b, f"{name} result {i}")
        backward_both(out, tout)
        compare_grads(mine, theirs, inputs, name)


def test_init_and_repr():
    # catches: an init other than U(-1/sqrt(H), 1/sqrt(H)) and reprs that differ from torch's
    mt.manual_seed(0)
    lstm = nn.LSTM(3, 16, num_layers=2, bidirectional=True, batch_first=True)
    values = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
    for name, args, kwargs in (
        ("LSTM", (3, 16), dict(num_layers=2, bidirectional=True, batch_first=True)),
        ("RNN", (3, 4), dict(nonlinearity="relu", bias=False)),
        ("GRUCell", (3, 4), dict()),
    ):
        assert repr(getattr(nn, name)(*args, **kwargs)) == repr(
            getattr(torch.nn, name)(*args, **kwargs)
        )


def test_dropout_between_layers_only_in_training():
    # catches: dropout applied in eval mode, or to the last layer's output (PyTorch drops
    # only between layers), or not at all in training
    mt.manual_seed(0)
    lstm = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    one_layer = nn.LSTM(3, 8, num_layers=1, dropout=0.5)
    x = mt.randn(4, 2, 3)
    lstm.eval()
    first, second = lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy()
    np.testing.assert_array_equal(first, second)
    lstm.train()
    trained, _ = lstm(x)
    assert not np.allclose(trained.detach().numpy(), first)
    one_layer.train()
    a, _ = one_layer(x)
    one_layer.eval()
    b, _ = one_layer(x)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
