"""Bad input to the API: never a silent wrong result, always an error naming the op and
the offending value, shape, dtype or device (issue 7 §5)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn, optim

t = mt.ones(2, 3)

# (what is wrong, the call, a pattern the message must match: the op and the bad value)
CASES = [
    ("float size", lambda: mt.zeros(2.5), r"zeros: .*float.*2\.5"),
    ("negative size", lambda: mt.zeros(-1), r"zeros: negative dimension -1"),
    ("float size in reshape", lambda: t.reshape(2.9, 3), r"reshape: .*float.*2\.9"),
    ("float size in view", lambda: t.view(3.0, 2), r"view: .*float"),
    ("float size in expand", lambda: mt.ones(1).expand(2.5), r"expand: .*float"),
    ("float features", lambda: nn.Linear(3.5, 2), r"Linear: in_features .*3\.5"),
    ("negative features", lambda: nn.Linear(-1, 2), r"Linear: in_features .*-1"),
    ("negative randperm", lambda: mt.randperm(-1), r"randperm: n .*-1"),
    ("float randperm", lambda: mt.randperm(2.5), r"randperm: n .*float"),
    ("negative eye", lambda: mt.eye(-2), r"eye: n .*-2"),
    ("negative linspace steps", lambda: mt.linspace(0, 1, -2), r"linspace: steps .*-2"),
    ("arange step 0", lambda: mt.arange(0, 5, 0), r"arange: step must be nonzero"),
    ("arange wrong sign", lambda: mt.arange(0, 5, -1), r"arange: .*step=-1"),
    ("arange nan", lambda: mt.arange(0, float("nan")), r"arange: end must be finite"),
    ("randint low >= high", lambda: mt.randint(5, 2, (3,)), r"randint: .*low=5, high=2"),
    ("Sequential of ints", lambda: nn.Sequential(1, 2), r"add_module: int .* not a Module"),
    ("dotted module name", lambda: nn.Module().add_module("a.b", nn.ReLU()), r"a\.b"),
    ("empty module name", lambda: nn.Module().add_module("", nn.ReLU()), r"empty"),
    ("from_numpy of str", lambda: mt.from_numpy(np.array(["a"])), r"from_numpy: .*<U1"),
    ("from_numpy big-endian", lambda: mt.from_numpy(np.ones(1, ">f4")), r"from_numpy: .*>f4"),
    ("from_numpy uint16", lambda: mt.from_numpy(np.ones(1, np.uint16)), r"from_numpy: .*uint16"),
    ("matmul batch dims", lambda: mt.ones(2, 3, 4) @ mt.ones(3, 4, 5), r"matmul: .*\(2,\).*\(3,\)"),
    ("matmul inner dims", lambda: mt.ones(2, 3) @ mt.ones(2, 3), r"matmul: shapes \(2, 3\)"),
    ("matmul 0-d", lambda: mt.tensor(1.0) @ mt.ones(3), r"matmul: .*\(\)"),
    ("cat of a list", lambda: mt.cat([mt.ones(2), [1.0, 2.0]]), r"cat: .*element 1 is a list"),
    ("cat of a tensor", lambda: mt.cat(mt.ones(2)), r"cat: expected a list or tuple"),
    ("stack shapes", lambda: mt.stack([mt.ones(2), mt.ones(3)]), r"stack: .*\(2,\).*\(3,\)"),
    ("float dim", lambda: t.mean(0.5), r"mean: dim .*0\.5"),
    ("dim out of range", lambda: t.sum(5), r"sum: dim 5 is out of range"),
    ("softmax dim", lambda: t.softmax(3), r"softmax: dim 3"),
    ("Conv2d kernel 0", lambda: nn.Conv2d(3, 8, 0), r"Conv2d: kernel_size .*0"),
    ("Conv2d stride 0", lambda: nn.Conv2d(3, 8, 3, stride=0), r"Conv2d: stride .*0"),
    ("Conv2d float channels", lambda: nn.Conv2d(3.0, 8, 3), r"Conv2d: in_channels .*float"),
    ("MaxPool2d kernel 0", lambda: nn.MaxPool2d(0), r"MaxPool2d: kernel_size .*0"),
    ("conv channels", lambda: nn.Conv2d(3, 2, 3)(mt.ones(1, 2, 5, 5)), r"conv2d: .*2 channels"),
    ("Embedding index", lambda: nn.Embedding(4, 2)(mt.tensor([5])), r"embedding: index 5 .*size 4"),
    ("Embedding negative", lambda: nn.Embedding(4, 2)(mt.tensor([-1])), r"embedding: index -1 "),
    ("Embedding float index", lambda: nn.Embedding(4, 2)(mt.tensor([1.0])), r"embedding: .*float"),
    ("add_ unbroadcastable", lambda: mt.ones(3).add_(mt.ones(2)), r"add_: .*\(3,\).*\(2,\)"),
    (
        "add_ widening",
        lambda: mt.ones(3).add_(mt.ones(2, 3)),
        r"add_: output with shape \[3\] doesn't match the broadcast shape \[2, 3\]",
    ),
    ("add_ float into int", lambda: mt.tensor([1, 2]).add_(0.5), r"add_: "),
    ("add a str", lambda: t + "a", r"add: unsupported operand type str"),
    ("pow a str", lambda: t ** "a", r"pow: unsupported operand type str"),
    ("tensor of a str", lambda: mt.tensor("abc"), r"tensor: .*'abc'"),
    ("ragged tensor", lambda: mt.tensor([[1, 2], [3]]), r"tensor: "),
    ("full of a str", lambda: mt.full((2,), "a"), r"full: fill_value .*str"),
    ("unknown dtype", lambda: mt.zeros(2, dtype="float99"), r"float99"),
    ("unknown device", lambda: mt.zeros(2, device="tpu"), r"'tpu'"),
    ("cuda without a GPU", lambda: mt.zeros(2, device="cuda"), r"cuda:0 is not available"),
    ("view of wrong size", lambda: t.view(4, 2), r"view: shape \(4, 2\) is invalid .* 6"),
    ("permute repeats", lambda: t.permute(0, 0), r"permute: dims=\(0, 0\) repeats"),
    ("expand size", lambda: t.expand(4, 3), r"expand: .*4.*\(2, 3\)"),
    ("index out of range", lambda: t[5], r"getitem: index 5 is out of bounds"),
    ("setitem shape", lambda: t.__setitem__(0, mt.ones(4)), r"setitem: .*\(4,\)"),
    ("copy_ shape", lambda: mt.zeros(2, 3).copy_(mt.ones(4)), r"copy_: .*\(4,\).*\(2, 3\)"),
    ("item of many", lambda: t.item(), r"item: .*6 elements"),
    (
        "cross_entropy target",
        lambda: nn.functional.cross_entropy(t, mt.tensor([0, 3])),
        r"\[0, 3\)",
    ),
    ("mse shapes", lambda: nn.functional.mse_loss(t, mt.ones(3, 2)), r"mse_loss: .*\(3, 2\)"),
    ("Linear input", lambda: nn.Linear(4, 2)(mt.ones(3, 3)), r"linear: input has 3 features"),
    ("LayerNorm shape", lambda: nn.LayerNorm(4)(t), r"layer_norm: .*\(4,\)"),
    ("SGD lr", lambda: optim.SGD([nn.Parameter(mt.ones(2))], lr=-1), r"SGD: .*lr=-1"),
    ("Adam betas", lambda: optim.Adam([nn.Parameter(mt.ones(2))], betas=(1.5, 0.9)), r"Adam: "),
    ("Dropout p", lambda: nn.Dropout(1.5), r"Dropout: .*1\.5"),
    (
        "clip negative norm",
        lambda: nn.utils.clip_grad_norm_([nn.Parameter(mt.ones(2))], -1.0),
        r"max_norm .*-1",
    ),  # noqa: E501
    ("manual_seed str", lambda: mt.manual_seed("a"), r"manual_seed: .*str"),
    ("int requires grad", lambda: mt.ones(2, dtype=mt.int64).requires_grad_(), r"int64"),
    (
        "grad of wrong shape",
        lambda: setattr(mt.ones(2, requires_grad=True), "grad", mt.ones(3)),
        r"\(3,\)",
    ),  # noqa: E501
    ("as_strided out of bounds", lambda: t.as_strided((10,), (1,)), r"as_strided: .*6 elements"),
]


@pytest.mark.parametrize("call, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(call, pattern):
    with pytest.raises((TypeError, ValueError, RuntimeError, IndexError, KeyError)) as caught:
        call()
    assert not isinstance(caught.value, (AttributeError, ZeroDivisionError))
    assert caught.match(pattern), str(caught.value)


def test_a_failed_in_place_op_loses_nothing():
    # an error in the middle of an in-place write leaves the tensor as it was
    x = mt.tensor([1.0, 2.0, 3.0])
    version = x._version
    with pytest.raises(RuntimeError):
        x.add_(mt.ones(2))
    assert x.tolist() == [1.0, 2.0, 3.0] and x._version == version
