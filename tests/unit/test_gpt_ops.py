"""The ops the GPT needs (masked_fill, tril, triu, topk, multinomial, split): PyTorch's
values, gradients and errors, as Tensor methods and top-level functions."""

import numpy as np
import pytest

import minitorch
from minitorch.autograd import gradcheck

RNG = np.random.default_rng(0)


def leaf(array):
    return minitorch.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def test_the_ops_are_methods_and_functions():
    # catches: an op reachable one way only
    t = minitorch.ones(2, 3)
    for name in ("masked_fill", "tril", "triu", "topk", "multinomial", "split"):
        assert callable(getattr(minitorch, name)) and callable(getattr(t, name)), name


# --- masked_fill ------------------------------------------------------------------------------
def test_masked_fill_values_and_gradients():
    # catches: the mask inverted, the gradient let through where the value was written
    x = leaf(RNG.standard_normal((2, 3)))
    mask = minitorch.tensor([True, False, True])
    value = leaf(2.5)
    out = x.masked_fill(mask, value)
    np.testing.assert_array_equal(out.detach().numpy()[:, [0, 2]], 2.5)
    np.testing.assert_array_equal(out.detach().numpy()[:, 1], x.detach().numpy()[:, 1])
    out.backward(minitorch.ones(2, 3) * 3.0)
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 3, 0], [0, 3, 0]])
    assert value.grad.item() == 12.0  # four filled elements, gradient 3 each
    assert gradcheck(lambda t: t.masked_fill(mask, -1.0), [leaf(RNG.standard_normal((2, 3)))])


def test_masked_fill_keeps_the_input_dtype_and_refuses_non_bool_masks():
    # catches: an integer tensor turned float by a float value, an int mask taken as bool
    x = minitorch.arange(6).reshape(2, 3)
    out = x.masked_fill(x > 2, 1.7)
    assert out.dtype is minitorch.int64 and out.tolist() == [[0, 1, 2], [1, 1, 1]]
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(x, 0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.float().masked_fill(x > 2, minitorch.ones(2))
    with pytest.raises(RuntimeError, match="broadcast"):
        x.masked_fill(minitorch.ones(4, dtype=minitorch.bool), 0)


# --- tril / triu ------------------------------------------------------------------------------
@pytest.mark.parametrize("diagonal", [-1, 0, 2])
def test_tril_triu_and_their_gradients(diagonal):
    # catches: the triangles swapped, the diagonal counted the wrong way, a gradient that
    # leaks into the zeroed triangle
    a = RNG.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(
        minitorch.tril(leaf(a), diagonal).detach().numpy(), np.tril(a, diagonal)
    )
    np.testing.assert_array_equal(
        minitorch.triu(leaf(a), diagonal).detach().numpy(), np.triu(a, diagonal)
    )
    assert gradcheck(lambda t: t.tril(diagonal) * 2.0, [leaf(a)])
    assert gradcheck(lambda t: t.triu(diagonal) * 2.0, [leaf(a)])
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        minitorch.tril(minitorch.ones(3))


# --- topk -------------------------------------------------------------------------------------
def test_topk_values_indices_and_gradient():
    # catches: smallest instead of largest, unsorted values, indices with a gradient, the
    # values' gradient sent to the wrong positions
    x = leaf([[1.0, 5.0, 3.0, 4.0], [2.0, 0.0, 9.0, -1.0]])
    values, indices = x.topk(2)
    assert values.tolist() == [[5.0, 4.0], [9.0, 2.0]] and indices.tolist() == [[1, 3], [2, 0]]
    assert indices.dtype is minitorch.int64 and not indices.requires_grad
    values.backward(minitorch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=minitorch.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0, 2], [4, 0, 3, 0]])
    smallest = minitorch.topk(x, 1, dim=0, largest=False)
    assert smallest.values.tolist() == [[1.0, 0.0, 3.0, -1.0]] and smallest.indices.tolist() == [
        [0, 1, 0, 1]
    ]
    assert gradcheck(
        lambda t: minitorch.topk(t, 2, dim=1).values, [leaf(RNG.standard_normal((3, 5)))]
    )
    with pytest.raises(RuntimeError, match="out of range"):
        x.topk(5)


# --- multinomial ------------------------------------------------------------------------------
def test_multinomial_draws_by_the_weights_and_is_seeded():
    # catches: draws that ignore the weights (uniform), a zero-weight category drawn,
    # repeats without replacement, a generator that is not used
    weights = minitorch.tensor([1.0, 0.0, 3.0])
    draws = weights.expand(4000, 3).contiguous().multinomial(1, generator=minitorch.Generator(0))
    counts = np.bincount(draws.numpy().ravel(), minlength=3) / 4000
    assert counts[1] == 0 and abs(counts[2] - 0.75) < 0.03
    both = weights.expand(500, 3).contiguous().multinomial(2, generator=minitorch.Generator(0))
    assert (both.numpy()[:, 0] != both.numpy()[:, 1]).all()
    again = weights.expand(4000, 3).contiguous().multinomial(1, generator=minitorch.Generator(0))
    assert (draws.numpy() == again.numpy()).all()
    assert minitorch.multinomial(weights, 5, replacement=True).shape == (5,)
    assert minitorch.multinomial(minitorch.tensor([1.0, 0.0]), 2).tolist() == [0, 1]  # as torch


@pytest.mark.parametrize(
    "weights, n, replacement, message",
    [
        ([0.0, 0.0], 1, False, "sum of probabilities"),
        ([-1.0, 2.0], 1, False, "element < 0"),
        ([1.0, float("nan")], 1, False, "nan"),
        ([1.0, 2.0], 3, False, "without replacement"),
        ([1.0, 2.0], 0, True, "n_sample <= 0"),
        ([[[1.0]]], 1, True, "1 or 2 dim"),
    ],
)
def test_multinomial_refuses_what_torch_refuses(weights, n, replacement, message):
    # catches: a silent draw from an invalid distribution
    with pytest.raises(RuntimeError, match=message):
        minitorch.multinomial(minitorch.tensor(weights), n, replacement)


# --- split ------------------------------------------------------------------------------------
def test_split_gives_views_that_backpropagate():
    # catches: copies instead of views, pieces of the wrong sizes, a gradient lost
    x = leaf(RNG.standard_normal((2, 7)))
    a, b, c = x.split(3, dim=1)
    assert [p.shape for p in (a, b, c)] == [(2, 3), (2, 3), (2, 1)]
    assert a.untyped_storage() is x.untyped_storage()
    (a.sum() + 2 * c.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], [1, 1, 1, 0, 0, 0, 2])
    assert [p.shape[0] for p in minitorch.split(minitorch.ones(5), [2, 3])] == [2, 3]
    with pytest.raises(RuntimeError, match="sum exactly to 5"):
        minitorch.split(minitorch.ones(5), [2, 2])


# --- against PyTorch --------------------------------------------------------------------------
def test_against_torch():
    # catches: any difference from PyTorch's values and gradients
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    mask = RNG.random((4, 5)) > 0.5
    g = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    cases = {
        "masked_fill": lambda lib, t: t.masked_fill(lib.tensor(mask), -2.0),
        "tril": lambda lib, t: lib.tril(t, -1),
        "triu": lambda lib, t: lib.triu(t, 1),
        "split": lambda lib, t: lib.cat([p * (i + 1) for i, p in enumerate(t.split(2, dim=2))], 2),
    }
    for name, f in cases.items():
        mine, theirs = minitorch.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        out, tout = f(minitorch, mine), f(torch, theirs)
        out.backward(minitorch.tensor(g))
        tout.backward(torch.tensor(g))
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), err_msg=name)
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), err_msg=name)
    for dim, k, largest in [(-1, 3, True), (0, 2, False), (1, 4, True)]:
        mine, theirs = minitorch.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        out, tout = mine.topk(k, dim, largest), theirs.topk(k, dim, largest)
        np.testing.assert_array_equal(out.indices.numpy(), tout.indices.numpy())
        np.testing.assert_array_equal(out.values.detach().numpy(), tout.values.detach().numpy())
        gk = minitorch.tensor(g).topk(k, dim).values  # any gradient of the values' shape
        out.values.backward(gk)
        tout.values.backward(torch.tensor(gk.numpy()))
        np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())
