"""Differential tests of the PyTorch surface real programs use (issue 25): the elementwise
maths family, clamp, the floating point tests, norms, remainders, whole-tensor
comparisons, ``out=``, dtype aliases and PyTorch's ``grad_fn`` names."""

import math

import numpy as np
import pytest

import minitorch as mt
from minitorch.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def both(array, requires_grad=False, dtype=np.float64):
    array = np.asarray(array, dtype=dtype)
    return mt.tensor(array, requires_grad=requires_grad), torch.tensor(
        array, requires_grad=requires_grad
    )


def close(mine, theirs, what, rtol=1e-6, atol=1e-8):
    a, b = mine.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (
        f"{what}: dtype {mine.dtype}, torch {theirs.dtype}"
    )
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# --- the elementwise family: values, gradients, names -------------------------------------
# (name, inputs where the function and its derivative are defined)
UNARY = [
    ("sin", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("cos", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("tan", [-1.2, -0.5, 0.0, 0.7, 1.3]),
    ("asin", [-0.9, -0.2, 0.0, 0.5, 0.95]),
    ("acos", [-0.9, -0.2, 0.0, 0.5, 0.95]),
    ("atan", [-5.0, -0.5, 0.0, 1.0, 30.0]),
    ("sinh", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("cosh", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("asinh", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("acosh", [1.1, 1.5, 2.0, 5.0, 30.0]),
    ("atanh", [-0.9, -0.2, 0.0, 0.5, 0.95]),
    ("log1p", [-0.9, -0.2, 0.0, 1.0, 30.0]),
    ("expm1", [-3.0, -0.5, 0.0, 1e-8, 2.5]),
    ("log2", [0.1, 0.5, 1.0, 2.0, 30.0]),
    ("log10", [0.1, 0.5, 1.0, 2.0, 30.0]),
    ("reciprocal", [-3.0, -0.5, 0.25, 1.0, 2.5]),
    ("rsqrt", [0.1, 0.5, 1.0, 2.0, 30.0]),
    ("square", [-3.0, -0.5, 0.0, 1.0, 2.5]),
    ("floor", [-2.5, -0.5, 0.2, 1.0, 2.7]),
    ("ceil", [-2.5, -0.5, 0.2, 1.0, 2.7]),
    ("round", [-2.5, -0.5, 0.5, 1.5, 2.7]),
    ("trunc", [-2.5, -0.5, 0.2, 1.0, 2.7]),
    ("frac", [-2.5, -0.5, 0.2, 1.0, 2.7]),
]


@pytest.mark.parametrize("name,values", UNARY, ids=[n for n, _ in UNARY])
def test_unary_op_matches_torch_forward_backward_and_grad_fn(name, values):
    # catches: a wrong numpy function, a wrong derivative, a node named unlike PyTorch's
    x, tx = both(values, requires_grad=True)
    y, ty = getattr(mt, name)(x), getattr(torch, name)(tx)
    close(y, ty, name)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__, name
    weights = np.linspace(0.5, 1.5, len(values))
    (y * mt.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    close(x.grad, tx.grad, f"d {name}")
    close(getattr(x.detach(), name)(), ty.detach(), f"Tensor.{name}")  # the method too


@pytest.mark.parametrize("name", ["sin", "tan", "asinh", "log1p", "rsqrt", "reciprocal"])
def test_smooth_unary_ops_pass_gradcheck_twice(name):
    # catches: a backward written with raw arrays (it could not be differentiated again)
    x = mt.tensor([0.3, 0.7, 1.2], dtype=mt.float64, requires_grad=True)
    fn = getattr(mt, name)
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name", ["sin", "log2", "rsqrt", "atan"])
def test_integer_input_gives_the_default_float_dtype(name):
    # catches: numpy's float64 for integer input where PyTorch gives float32
    x, tx = both([1, 2, 4], dtype=np.int64)
    close(getattr(mt, name)(x), getattr(torch, name)(tx), name, rtol=1e-6)


def test_rounding_an_integer_tensor_keeps_it():
    x, tx = both([-3, 0, 7], dtype=np.int64)
    for name in ("floor", "ceil", "round", "trunc"):
        close(getattr(mt, name)(x), getattr(torch, name)(tx), name)
    with pytest.raises(RuntimeError, match="frac"):
        mt.frac(x)


def test_round_with_decimals_and_half_to_even():
    x, tx = both([1.2345, -2.5, 0.5, 1.5, 12.5])
    close(mt.round(x), torch.round(tx), "round")
    close(mt.round(x, decimals=2), torch.round(tx, decimals=2), "round(decimals=2)")
    close(x.round(decimals=-1), tx.round(decimals=-1), "round(decimals=-1)")


def test_isnan_isinf_isfinite():
    values = [1.0, float("nan"), float("inf"), -float("inf"), 0.0]
    x, tx = both(values, dtype=np.float32)
    for name in ("isnan", "isinf", "isfinite"):
        got, want = getattr(mt, name)(x), getattr(torch, name)(tx)
        assert got.dtype == mt.bool and got.tolist() == want.tolist(), name
        assert getattr(x, name)().tolist() == want.tolist(), f"Tensor.{name}"
    ints, tints = both([1, 2], dtype=np.int64)
    assert mt.isfinite(ints).tolist() == torch.isfinite(tints).tolist()
    assert mt.isnan(ints).tolist() == [False, False]
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    assert not mt.isnan(w).requires_grad  # a test has no gradient


# --- clamp -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "low,high",
    [(0.0, None), (None, 0.5), (-0.5, 0.5), (0.5, -0.5), (-1.0, 1.0)],
    ids=["min", "max", "both", "min>max", "ties"],
)
def test_clamp_with_numbers_matches_torch(low, high):
    # catches: the gradient not passing at the bounds (PyTorch's >= / <=), min > max
    values = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]
    x, tx = both(values, requires_grad=True)
    y, ty = mt.clamp(x, low, high), torch.clamp(tx, low, high)
    close(y, ty, "clamp")
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "ClampBackward1"
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad, "d clamp")


def test_clamp_with_tensor_bounds_sends_gradients_to_the_bound_used():
    xs, lows = [-2.0, 0.0, 0.5, 3.0, 1.0], [-1.0, 0.0, 1.0, 0.0, 2.0]
    x, tx = both(xs, requires_grad=True)
    low, tlow = both(lows, requires_grad=True)
    high, thigh = both(1.0, requires_grad=True)  # 0-d: broadcast
    y, ty = mt.clamp(x, low, high), torch.clamp(tx, tlow, thigh)
    close(y, ty, "clamp(tensors)")
    assert type(y.grad_fn).__name__ == "ClampBackward0" == type(ty.grad_fn).__name__
    y.sum().backward()
    ty.sum().backward()
    for mine, theirs, what in ((x, tx, "x"), (low, tlow, "min"), (high, thigh, "max")):
        close(mine.grad, theirs.grad, f"d clamp / d {what}")


def test_clamp_variants_and_errors():
    x, tx = both([-2.0, 0.5, 3.0])
    close(x.clip(0, 1), tx.clip(0, 1), "clip")
    close(x.clamp_min(0), tx.clamp_min(0), "clamp_min")
    close(mt.clamp_max(x, 1), torch.clamp_max(tx, 1), "clamp_max")
    ints, tints = both([1, 2, 3], dtype=np.int64)
    close(ints.clamp(min=1.5), tints.clamp(min=1.5), "clamp an int tensor with a float")
    y = x.clone()
    assert y.clamp_(min=0) is y and y.tolist() == [0.0, 0.5, 3.0]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        mt.clamp(x)
    with pytest.raises(TypeError, match="clamp.*'min'"):
        mt.clamp(x, min="0")


# --- norms -------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, math.inf, -math.inf, 0])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True)])
def test_vector_norm_matches_torch(p, dim, keepdim):
    # catches: the wrong reduction, keepdim lost, the inf-norm gradient not shared on ties
    values = np.array([[[1.0, -2.0], [0.5, 3.0]], [[-3.0, 3.0], [0.0, 1.5]]])
    x, tx = both(values, requires_grad=True)
    y = mt.linalg.vector_norm(x, p, dim, keepdim)
    ty = torch.linalg.vector_norm(tx, p, dim, keepdim)
    close(y, ty, f"vector_norm p={p}")
    assert type(y.grad_fn).__name__ == "LinalgVectorNormBackward0"
    y.sum().backward()
    ty.sum().backward()
    if p == 0:  # piecewise constant: PyTorch leaves the gradient undefined, minitorch 0
        assert tx.grad is None and not x.grad.any()
        return
    close(x.grad, tx.grad, f"d vector_norm p={p}")


def test_tensor_norm_and_linalg_norm():
    values = np.array([[1.0, -2.0, 2.0], [0.0, 3.0, -4.0]])
    x, tx = both(values)
    close(x.norm(), tx.norm(), "norm()")
    close(mt.norm(x, p=1, dim=1), torch.norm(tx, p=1, dim=1), "norm(p=1, dim=1)")
    close(x.norm(dim=0, keepdim=True), tx.norm(dim=0, keepdim=True), "norm(dim=0)")
    close(mt.linalg.norm(x), torch.linalg.norm(tx), "linalg.norm (Frobenius)")
    for ord in ("fro", 1, -1, math.inf, -math.inf):
        close(mt.linalg.norm(x, ord), torch.linalg.norm(tx, ord), f"matrix norm {ord}")
    close(mt.linalg.norm(x, 3, dim=1), torch.linalg.norm(tx, 3, dim=1), "linalg.norm(3, dim)")
    with pytest.raises(NotImplementedError, match="singular values"):
        mt.linalg.norm(x, 2)
    with pytest.raises(NotImplementedError, match="nuc"):
        x.norm(p="nuc")
    with pytest.raises(RuntimeError, match="floating point"):
        mt.linalg.vector_norm(mt.tensor([1, 2]))
    zero = mt.zeros(3, dtype=mt.float64, requires_grad=True)
    zero.norm().backward()
    assert zero.grad.tolist() == [0.0, 0.0, 0.0]  # the subgradient at 0, as PyTorch


# --- remainders -----------------------------------------------------------------------------------
def test_remainder_fmod_floor_divide_match_torch():
    a, ta = both([-7.0, -2.5, 0.0, 3.5, 7.0], requires_grad=True)
    b, tb = both([2.0, -1.5, 3.0, 2.0, -3.0], requires_grad=True)
    for name in ("remainder", "fmod"):
        y, ty = getattr(mt, name)(a, b), getattr(torch, name)(ta, tb)
        close(y, ty, name)
        y.sum().backward()
        ty.sum().backward()
        close(a.grad, ta.grad, f"d {name}/da")
        close(b.grad, tb.grad, f"d {name}/db")
        a.grad = b.grad = ta.grad = tb.grad = None
    ints, tints = both(list(range(-5, 5)), dtype=np.int64)
    close(ints % 3, tints % 3, "int % 3")
    close(ints // 3, tints // 3, "int // 3")
    close(7 % mt.tensor([3, 4]), 7 % torch.tensor([3, 4]), "7 % tensor")
    close(ints.float() // 2.5, tints.float() // 2.5, "float // float")


# --- whole-tensor comparisons ---------------------------------------------------------------------
def test_equal_allclose_isclose():
    a, ta = both([1.0, 2.0, float("nan")])
    b, tb = both([1.0, 2.0 + 1e-9, float("nan")])
    assert mt.equal(a[:2], b[:2].clone()) == torch.equal(ta[:2], tb[:2].clone())
    assert mt.equal(a, a) == torch.equal(ta, ta)  # NaN != NaN
    assert mt.equal(mt.ones(2), mt.ones(3)) is False
    assert mt.allclose(a, b) == torch.allclose(ta, tb)
    assert mt.allclose(a, b, equal_nan=True) == torch.allclose(ta, tb, equal_nan=True)
    assert a.allclose(b, equal_nan=True)
    inf, tinf = both([float("inf"), -float("inf"), 1.0])
    assert mt.isclose(inf, inf).tolist() == torch.isclose(tinf, tinf).tolist()
    assert (
        mt.isclose(a, b, rtol=0, atol=1e-12).tolist()
        == torch.isclose(ta, tb, rtol=0, atol=1e-12).tolist()
    )
    with pytest.raises(RuntimeError, match="float64 did not match float32"):
        mt.isclose(a, a.float())


# --- out= -----------------------------------------------------------------------------------------
def test_out_argument_writes_into_the_given_tensor():
    a = mt.ones(2, 2)
    y = mt.zeros(2, 2)
    assert mt.matmul(a, a, out=y) is y and y.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    z = mt.zeros(2, 2)
    assert mt.mul(a, 3, out=z) is z and z.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert mt.add(a, a, alpha=2).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    empty = mt.empty(0)
    assert mt.cat([a, a], out=empty) is empty and empty.shape == (4, 2)
    with pytest.warns(UserWarning, match="resized"):
        mt.add(a, a, out=mt.zeros(3))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        mt.mul(a, 2, out=mt.zeros(2, 2, dtype=mt.int64))
    w = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        mt.mul(w, 2, out=mt.zeros(2))
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        mt.sin(a, out=[0.0])


# --- dtypes ---------------------------------------------------------------------------------------
def test_dtype_aliases_are_pytorchs():
    for name in ("float", "double", "half", "long", "int", "short", "bool", "float16", "uint8"):
        assert str(getattr(mt, name)).split(".")[1] == str(getattr(torch, name)).split(".")[1]
    assert mt.float is mt.float32 and mt.short is mt.int16 and mt.int is mt.int32
    assert mt.tensor([1, 2], dtype=mt.short).dtype is mt.int16


def test_quantized_dtypes_exist_but_make_no_ordinary_tensor():
    assert mt.qint8.is_quantized and not mt.float32.is_quantized
    assert not mt.qint8.is_floating_point and mt.qint8.itemsize == torch.qint8.itemsize == 1
    assert repr(mt.quint8) == "minitorch.quint8"
    with pytest.raises(TypeError, match="quantized dtype"):
        mt.zeros(2, dtype=mt.qint8)
    with pytest.raises(TypeError, match="quantized dtype"):
        mt.ones(2).to(mt.quint8)


# --- grad_fn names, as PyTorch prints them --------------------------------------------------------
NAMED = {
    "add": lambda x, w, v: x + 1,
    "mul": lambda x, w, v: x * x,
    "rsub": lambda x, w, v: 1 - x,
    "sub": lambda x, w, v: x - 1,
    "pow scalar": lambda x, w, v: x**2,
    "pow tensor": lambda x, w, v: x**x,
    "scalar pow": lambda x, w, v: 2**x,
    "sum": lambda x, w, v: x.sum(),
    "sum dim": lambda x, w, v: x.sum(1),
    "mean": lambda x, w, v: x.mean(),
    "mean dim": lambda x, w, v: x.mean(0),
    "max": lambda x, w, v: x.max(),
    "max dim": lambda x, w, v: x.max(1)[0],
    "mm": lambda x, w, v: x @ w,
    "mv": lambda x, w, v: x @ v,
    "dot": lambda x, w, v: v @ v,
    "select": lambda x, w, v: x[0],
    "slice": lambda x, w, v: x[1:],
    "select after slice": lambda x, w, v: x[1:, 0],
    "unsqueeze index": lambda x, w, v: x[None],
    "view": lambda x, w, v: x.view(-1),
    "relu": lambda x, w, v: x.relu(),
    "exp": lambda x, w, v: x.exp(),
    "where": lambda x, w, v: (x > 0).float() * x,
}


@pytest.mark.parametrize("case", list(NAMED))
def test_grad_fn_names_are_pytorchs(case):
    # catches: the node names without PyTorch's overload number, or the wrong overload
    values = np.arange(1.0, 13.0).reshape(3, 4) / 4
    x, tx = both(values, requires_grad=True)
    w, tw = both(np.ones((4, 2)), requires_grad=True)
    v, tv = both(np.ones(4), requires_grad=True)
    mine, theirs = NAMED[case](x, w, v), NAMED[case](tx, tw, tv)
    assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert f"grad_fn=<{type(theirs.grad_fn).__name__}>" in repr(mine)


@pytest.mark.parametrize("shape,bias", [((3, 4), True), ((3, 4), False), ((4,), False)])
def test_linear_records_pytorchs_node_with_its_inputs_in_pytorchs_order(shape, bias):
    x, tx = both(np.ones(shape), requires_grad=True)
    w, tw = both(np.ones((2, 4)), requires_grad=True)
    b, tb = both(np.ones(2), requires_grad=True)
    y = mt.nn.functional.linear(x, w, b if bias else None)
    ty = torch.nn.functional.linear(tx, tw, tb if bias else None)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    if shape == (3, 4) and bias:  # addmm(bias, x, weight.T): the bias is the first input
        first = y.grad_fn.next_functions[0][0]
        assert type(first).__name__ == "AccumulateGrad" and first.variable is b
        y.sum().backward()  # the reordered edges still carry the right gradients
        ty.sum().backward()
        for mine, theirs in ((x, tx), (w, tw), (b, tb)):
            close(mine.grad, theirs.grad, "linear gradients")


def test_custom_function_nodes_have_no_number_as_in_pytorch():
    class Double(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = Double.apply(mt.ones(2, requires_grad=True))
    assert type(y.grad_fn).__name__ == "DoubleBackward"


def test_the_blitz_walk_of_loss_grad_fn_matches_pytorch():
    # the 60-minute Blitz: MSELoss -> Linear -> (its first input)
    values = np.linspace(-1, 1, 12).reshape(3, 4)
    x, tx = both(values, requires_grad=False)
    w, tw = both(np.ones((2, 4)) / 4, requires_grad=True)
    b, tb = both(np.zeros(2), requires_grad=True)
    target, ttarget = both(np.ones((3, 2)))
    loss = mt.nn.MSELoss()(mt.nn.functional.linear(mt.relu(x), w, b), target)
    tloss = torch.nn.MSELoss()(torch.nn.functional.linear(torch.relu(tx), tw, tb), ttarget)
    names = []
    for node in (loss, tloss):
        fn = node.grad_fn
        names.append(
            [
                type(fn).__name__,
                type(fn.next_functions[0][0]).__name__,
                type(fn.next_functions[0][0].next_functions[0][0]).__name__,
                fn.next_functions[1][0],
            ]
        )
    assert names[0] == names[1] == ["MseLossBackward0", "AddmmBackward0", "AccumulateGrad", None]
    loss.backward()
    tloss.backward()
    close(w.grad, tw.grad, "d mse_loss / d weight")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_are_one_node_each_as_in_pytorch(reduction):
    x, tx = both(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
    t, tt = both(np.linspace(1, 0, 12).reshape(4, 3), requires_grad=True)
    y = mt.nn.functional.mse_loss(x, t, reduction=reduction)
    ty = torch.nn.functional.mse_loss(tx, tt, reduction=reduction)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "MseLossBackward0"
    labels, tlabels = mt.tensor([0, 2, -100, 1]), torch.tensor([0, 2, -100, 1])
    ce = mt.nn.functional.cross_entropy(x, labels, reduction=reduction)
    tce = torch.nn.functional.cross_entropy(tx, tlabels, reduction=reduction)
    for mine, theirs in ((y, ty), (ce, tce)):
        close(mine, theirs, "loss")
        assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__
        parent = mine.grad_fn.next_functions[0][0]
        assert type(parent).__name__ == type(theirs.grad_fn.next_functions[0][0]).__name__
        mine.sum().backward()
        theirs.sum().backward()
    close(x.grad, tx.grad, "d (mse + cross entropy) / d x")
    close(t.grad, tt.grad, "d mse / d target")


def test_mse_and_nll_pass_gradgradcheck():
    x = mt.tensor([[0.1, -0.4, 0.9], [1.2, 0.3, -0.7]], dtype=mt.float64, requires_grad=True)
    t = mt.tensor([[0.5, 0.5, 0.0], [1.0, -1.0, 0.2]], dtype=mt.float64, requires_grad=True)
    mse = mt.nn.functional.mse_loss
    assert gradcheck(mse, (x, t)) and gradgradcheck(mse, (x, t))

    def ce(x):
        return mt.nn.functional.cross_entropy(x, mt.tensor([2, 0]), weight=mt.ones(3) * 2)

    assert gradcheck(ce, (x,)) and gradgradcheck(ce, (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_is_one_node_and_matches_torch(reduction, weighted):
    # catches: an overflow for large logits, pos_weight on the wrong term, the mean's scale
    x, tx = both([[-30.0, -1.0, 0.0], [0.5, 2.0, 40.0]], requires_grad=True)
    t, tt = both([[0.0, 1.0, 0.5], [1.0, 0.2, 0.0]], requires_grad=True)
    kw = {"reduction": reduction}
    if weighted:
        kw_mine = dict(kw, weight=mt.tensor([1.0, 0.5, 2.0]), pos_weight=mt.tensor([3.0]))
        kw_torch = dict(kw, weight=torch.tensor([1.0, 0.5, 2.0]), pos_weight=torch.tensor([3.0]))
    else:
        kw_mine = kw_torch = kw
    y = mt.nn.functional.binary_cross_entropy_with_logits(x, t, **kw_mine)
    ty = torch.nn.functional.binary_cross_entropy_with_logits(tx, tt, **kw_torch)
    close(y, ty, "bce_with_logits")
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad, "d bce / d input")
    close(t.grad, tt.grad, "d bce / d target")
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        mt.nn.functional.binary_cross_entropy_with_logits(
            x, t, weight=mt.ones(3, requires_grad=True)
        )
