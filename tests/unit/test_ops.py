"""Compute ops (elementwise, reductions, matmul, joins) against numpy, on any layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import minitorch
from minitorch.shape import Layout

from .tensor_helpers import FAST, FEW, layouts, make_tensor, nonempty_shapes, random_values, seeds

BINARY = {
    "add": (minitorch.add, lambda a, b: a + b, np.add),
    "sub": (minitorch.sub, lambda a, b: a - b, np.subtract),
    "mul": (minitorch.mul, lambda a, b: a * b, np.multiply),
    "div": (minitorch.div, lambda a, b: a / b, np.divide),
    "pow": (minitorch.pow, lambda a, b: a**b, np.power),
    "maximum": (minitorch.maximum, lambda a, b: a.maximum(b), np.maximum),
    "minimum": (minitorch.minimum, lambda a, b: a.minimum(b), np.minimum),
    "eq": (minitorch.eq, lambda a, b: a == b, np.equal),
    "ne": (minitorch.ne, lambda a, b: a != b, np.not_equal),
    "lt": (minitorch.lt, lambda a, b: a < b, np.less),
    "le": (minitorch.le, lambda a, b: a <= b, np.less_equal),
    "gt": (minitorch.gt, lambda a, b: a > b, np.greater),
    "ge": (minitorch.ge, lambda a, b: a >= b, np.greater_equal),
}

broadcast_pairs = mutually_broadcastable_shapes(num_shapes=2, min_side=0, max_side=4, max_dims=4)


def _operands(name, shapes, seed, dtype):
    (sa, sb), _ = shapes
    a = random_values(sa, seed, dtype)
    b = random_values(sb, seed + 1, dtype)
    if name == "pow":  # keep powers real and finite
        a = np.abs(a) + (1 if dtype.startswith("int") else 0)
        b = np.abs(b) % 3 if dtype.startswith("int") else b
    if name == "div" and dtype.startswith("int"):
        b = np.where(b == 0, 3, b)
    return a, b


@FAST
@given(
    st.sampled_from(sorted(BINARY)),
    broadcast_pairs,
    seeds,
    layouts,
    layouts,
    st.sampled_from(["float64", "float32", "int64"]),
)
def test_binary_ops_broadcast_like_numpy(name, shapes, seed, layout_a, layout_b, dtype):
    fn, operator, np_fn = BINARY[name]
    a, b = _operands(name, shapes, seed, dtype)
    ta, base_a = make_tensor(a, layout_a)
    tb, base_b = make_tensor(b, layout_b)
    expected = np_fn(a, b)
    for out in (fn(ta, tb), operator(ta, tb)):
        assert out.shape == expected.shape == shapes.result_shape
        if name == "div" and dtype == "int64":  # true division of integers: default float
            assert out.dtype is minitorch.float32
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
        else:
            assert out.dtype.np == expected.dtype
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6 if "32" in dtype else 0)
        assert out.untyped_storage() is not base_a.untyped_storage()
        assert out.untyped_storage() is not base_b.untyped_storage()
        assert out.is_contiguous() and out.storage_offset() == 0
    # the inputs are untouched
    np.testing.assert_array_equal(ta.numpy(), a)
    np.testing.assert_array_equal(tb.numpy(), b)


@FAST
@given(st.sampled_from(["add", "sub", "mul", "div", "maximum", "lt"]), nonempty_shapes, seeds)
def test_binary_ops_with_python_scalars(name, shape, seed):
    fn, operator, np_fn = BINARY[name]
    a = random_values(shape, seed, "float32")
    t = minitorch.from_numpy(a)
    for scalar in (2.5, -3):
        for out, expected in ((fn(t, scalar), np_fn(a, scalar)), (fn(scalar, t), np_fn(scalar, a))):
            # a Python scalar never widens the tensor's dtype
            assert out.dtype is (minitorch.bool if name == "lt" else minitorch.float32)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    if name in ("add", "sub", "mul", "div"):
        np.testing.assert_allclose(operator(4.0, t).numpy(), np_fn(4.0, a), rtol=1e-6)


def test_reflected_operators():
    t = minitorch.tensor([1.0, 2.0, 4.0])
    assert (1 - t).tolist() == [0.0, -1.0, -3.0]
    assert (8 / t).tolist() == [8.0, 4.0, 2.0]
    assert (2**t).tolist() == [2.0, 4.0, 16.0]
    assert (3 * t).tolist() == [3.0, 6.0, 12.0]
    assert (-t).tolist() == [-1.0, -2.0, -4.0]
    assert abs(minitorch.tensor([-1, 2])).tolist() == [1, 2]


def test_integer_division_gives_float32():
    a, b = minitorch.tensor([1, 2, 3]), minitorch.tensor([2, 2, 2])
    for out in (a / b, a / 2, 3 / b, minitorch.div(a, b)):
        assert out.dtype is minitorch.float32
    assert (a / b).tolist() == [0.5, 1.0, 1.5]
    d = minitorch.tensor([1.0, 2.0], dtype=minitorch.float64) / 2
    assert d.dtype is minitorch.float64


def test_type_promotion_follows_pytorch():
    i64 = minitorch.tensor([1, 2])
    f32 = minitorch.tensor([1.0, 2.0])
    f16 = minitorch.tensor([1.0, 2.0], dtype=minitorch.float16)
    assert (i64 + 1).dtype is minitorch.int64
    assert (minitorch.tensor([1, 2], dtype=minitorch.int32) * 2).dtype is minitorch.int32
    assert (f32 * 2.5).dtype is minitorch.float32
    # PyTorch: an integer tensor and a Python float give the default float, not float64
    assert (i64 + 0.5).dtype is minitorch.float32
    assert (i64 * 0.5).dtype is minitorch.float32
    # PyTorch: int64 with float32 gives float32; int64 with float16 gives float16
    assert (i64 * f32).dtype is minitorch.float32
    assert (f32 - i64).dtype is minitorch.float32
    assert (f16 / i64).dtype is minitorch.float16


def test_comparisons_and_logical_ops_give_bool():
    a = minitorch.tensor([1, 2, 3])
    assert (a > 1).dtype is minitorch.bool
    assert ((a > 1) & (a < 3)).tolist() == [False, True, False]
    assert ((a < 2) | (a > 2)).tolist() == [True, False, True]
    assert (~(a == 2)).tolist() == [True, False, True]
    assert minitorch.all(a > 0).item() is True and (a > 2).any().item() is True
    assert (a > 5).any().item() is False and (a > 1).all().item() is False


@FEW
@given(array_shapes(min_dims=0, max_dims=3, max_side=4), seeds, layouts)
def test_where_broadcasts_like_numpy(shape, seed, layout):
    a = random_values(shape, seed, "float64")
    cond = random_values(shape, seed + 1, "bool")
    t, _ = make_tensor(a, layout)
    c = minitorch.tensor(cond)
    out = minitorch.where(c, t, minitorch.tensor(0.0, dtype=minitorch.float64))
    np.testing.assert_array_equal(out.numpy(), np.where(cond, a, 0.0))
    out = minitorch.where(c, 1.0, t)
    np.testing.assert_array_equal(out.numpy(), np.where(cond, 1.0, a))


UNARY = {
    "neg": (minitorch.neg, lambda a: -a),
    "abs": (minitorch.abs, np.abs),
    "exp": (minitorch.exp, np.exp),
    "log": (lambda t: minitorch.log(minitorch.abs(t)), lambda a: np.log(np.abs(a))),
    "sqrt": (lambda t: minitorch.sqrt(t.abs()), lambda a: np.sqrt(np.abs(a))),
    "tanh": (minitorch.tanh, np.tanh),
    "sigmoid": (minitorch.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "relu": (minitorch.relu, lambda a: np.maximum(a, 0)),
}
FLOATING = {"exp", "log", "sqrt", "tanh", "sigmoid"}


@FAST
@given(st.sampled_from(sorted(UNARY)), nonempty_shapes, seeds, layouts, st.sampled_from(["f", "i"]))
def test_unary_ops_match_numpy(name, shape, seed, layout, kind):
    fn, np_fn = UNARY[name]
    a = random_values(shape, seed, "float64" if kind == "f" else "int64")
    if name == "log" and kind == "i":
        a = np.where(a == 0, 1, a)
    t, _ = make_tensor(a, layout)
    out = fn(t)
    if kind == "i":
        expected_dtype = minitorch.float32 if name in FLOATING else minitorch.int64
    else:
        expected_dtype = minitorch.float64
    assert out.dtype is expected_dtype
    assert out.shape == a.shape
    np.testing.assert_allclose(out.numpy(), np_fn(a), rtol=1e-6)


def test_sigmoid_does_not_overflow():
    out = minitorch.sigmoid(minitorch.tensor([-1000.0, 0.0, 1000.0]))
    assert out.tolist() == [0.0, 0.5, 1.0]


# --- reductions ---------------------------------------------------------------------------
@st.composite
def reduce_cases(draw, min_side=0, allow_tuple=True):
    shape = draw(array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=4))
    nd = len(shape)
    options = [st.none()]
    if nd:
        options.append(st.integers(-nd, nd - 1))
        if allow_tuple:
            options.append(
                st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd).map(
                    lambda ds: tuple(d - nd if i % 2 else d for i, d in enumerate(ds))
                )
            )
    dim = draw(st.one_of(*options))
    return shape, dim, draw(st.booleans())


@FAST
@given(reduce_cases(), seeds, layouts, st.sampled_from(["float64", "float32", "int64"]))
def test_sum_matches_numpy(case, seed, layout, dtype):
    shape, dim, keepdim = case
    a = random_values(shape, seed, dtype)
    t, _ = make_tensor(a, layout)
    out = t.sum(dim, keepdim=keepdim)
    expected = np.sum(a, axis=dim, keepdims=keepdim)
    assert out.shape == np.shape(expected)
    assert out.dtype.np == np.asarray(expected).dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)
    functional = minitorch.sum(t, dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(functional.numpy(), out.numpy())


@FAST
@given(reduce_cases(min_side=1), seeds, layouts, st.sampled_from(["float64", "int64"]))
def test_mean_matches_numpy(case, seed, layout, dtype):
    shape, dim, keepdim = case
    a = random_values(shape, seed, dtype)
    t, _ = make_tensor(a, layout)
    out = t.mean(dim, keepdim=keepdim)
    expected = np.mean(a, axis=dim, keepdims=keepdim)
    assert out.shape == np.shape(expected)
    assert out.dtype is (minitorch.float64 if dtype == "float64" else minitorch.float32)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


@FAST
@given(reduce_cases(min_side=1, allow_tuple=False), seeds, layouts, st.sampled_from(["max", "min"]))
def test_max_min_with_dim_return_values_and_indices(case, seed, layout, which):
    shape, dim, keepdim = case
    a = random_values(shape, seed, "int64")  # small ints: ties pick the first index
    t, _ = make_tensor(a, layout)
    np_val, np_arg = (np.max, np.argmax) if which == "max" else (np.min, np.argmin)
    if dim is None:
        out = getattr(t, which)()
        assert out.shape == () and out.item() == np_val(a)
        arg = getattr(t, "arg" + which)()
        assert arg.shape == () and arg.item() == np_arg(a)  # index into the flattened tensor
        return
    out = getattr(minitorch, which)(t, dim, keepdim)
    assert isinstance(out, tuple) and out._fields == ("values", "indices")
    values, indices = out
    assert values is out.values and indices is out.indices
    np.testing.assert_array_equal(out.values.numpy(), np_val(a, axis=dim, keepdims=keepdim))
    np.testing.assert_array_equal(out.indices.numpy(), np_arg(a, axis=dim, keepdims=keepdim))
    assert out.values.dtype is minitorch.int64 and out.indices.dtype is minitorch.int64
    arg = getattr(t, "arg" + which)(dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(arg.numpy(), out.indices.numpy())
    method = getattr(t, which)(dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(method.values.numpy(), out.values.numpy())


def test_reduction_examples():
    x = minitorch.arange(6).view(2, 3)
    assert x.sum().item() == 15 and x.sum().shape == ()
    assert x.sum(0).tolist() == [3, 5, 7]
    assert x.sum(dim=(0, 1), keepdim=True).shape == (1, 1)
    assert x.sum(-1, keepdim=True).tolist() == [[3], [12]]
    assert x.mean().dtype is minitorch.float32 and x.mean().item() == 2.5
    assert x.mean(dim=1).tolist() == [1.0, 4.0]
    assert minitorch.tensor([True, True, False]).sum().dtype is minitorch.int64
    assert minitorch.tensor([1, 2], dtype=minitorch.int32).sum().dtype is minitorch.int64
    assert x.sum(dtype=minitorch.float64).dtype is minitorch.float64
    m = minitorch.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]]).max(dim=1)
    assert m.values.tolist() == [5.0, 7.0] and m.indices.tolist() == [1, 0]
    assert minitorch.tensor([[3, 1], [0, 2]]).min(1, keepdim=True).indices.tolist() == [[1], [0]]
    assert x.T.sum(0).tolist() == [3, 12]  # reductions read views through their strides


# --- matmul -------------------------------------------------------------------------------
@FAST
@given(
    mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3, max_side=4),
    seeds,
    layouts,
    layouts,
)
def test_matmul_matches_numpy_including_batched_and_1d(shapes, seed, layout_a, layout_b):
    (sa, sb), result = shapes
    a, b = random_values(sa, seed), random_values(sb, seed + 1)
    ta, _ = make_tensor(a, layout_a)
    tb, _ = make_tensor(b, layout_b)
    expected = np.matmul(a, b)
    for out in (ta @ tb, minitorch.matmul(ta, tb), ta.matmul(tb)):
        assert out.shape == np.shape(expected) == result
        assert out.dtype is minitorch.float64
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_matmul_examples():
    a = minitorch.arange(6.0).view(2, 3)
    assert (a @ minitorch.ones(3)).tolist() == [3.0, 12.0]
    assert (minitorch.ones(2) @ a).tolist() == [3.0, 5.0, 7.0]
    v = minitorch.tensor([1.0, 2.0, 3.0])
    dot = v @ v
    assert dot.shape == () and dot.item() == 14.0
    assert (a @ a.T).tolist() == [[5.0, 14.0], [14.0, 50.0]]
    batch = minitorch.ones(4, 2, 3) @ minitorch.ones(3, 5)
    assert batch.shape == (4, 2, 5) and batch.sum().item() == 4 * 2 * 5 * 3


# --- joining ------------------------------------------------------------------------------
@FAST
@given(array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=3), st.data(), seeds)
def test_cat_matches_numpy(shape, data, seed):
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    arrays, tensors = [], []
    for i, n in enumerate(sizes):
        s = list(shape)
        s[dim] = n
        a = random_values(tuple(s), seed + i)
        t, _ = make_tensor(a, data.draw(layouts))
        arrays.append(a)
        tensors.append(t)
    out = minitorch.cat(tensors, dim=dim)
    expected = np.concatenate(arrays, axis=dim)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)
    assert all(out.untyped_storage() is not t.untyped_storage() for t in tensors)
    assert minitorch.cat(tuple(tensors), dim).shape == expected.shape


@FAST
@given(array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), st.data(), seeds)
def test_stack_matches_numpy(shape, data, seed):
    nd = len(shape)
    dim = data.draw(st.integers(-nd - 1, nd))
    arrays = [random_values(shape, seed + i) for i in range(data.draw(st.integers(1, 3)))]
    tensors = [make_tensor(a, data.draw(layouts))[0] for a in arrays]
    out = minitorch.stack(tensors, dim=dim)
    expected = np.stack(arrays, axis=dim)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


# --- the choke point ----------------------------------------------------------------------
def test_every_op_goes_through_function_apply(monkeypatch):
    calls = []
    original = minitorch.Function.apply.__func__

    def counting(cls, *args, **kwargs):
        calls.append(cls.name)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(minitorch.Function, "apply", classmethod(counting))
    x = minitorch.ones(2, 3)
    ops = {
        "add": lambda: x + 1,
        "mul": lambda: x * x,
        "exp": lambda: x.exp(),
        "sum": lambda: x.sum(0),
        "max": lambda: x.max(1),
        "matmul": lambda: x @ x.T,
        "view": lambda: x.view(6),
        "permute": lambda: x.T,
        "expand": lambda: x[:1].expand(4, 3),
        "getitem": lambda: x[0],
        "cat": lambda: minitorch.cat([x, x]),
        "to": lambda: x.to(minitorch.float64),
        "clone": lambda: x.clone(),
    }
    for name, run in ops.items():
        calls.clear()
        run()
        assert name in calls, f"{name} did not go through Function.apply (saw {calls})"


def test_compute_functions_get_raw_arrays_and_view_functions_map_layouts():
    seen = []

    class Double(minitorch.Function):
        @staticmethod
        def forward(ctx, a):
            seen.append(type(a))
            return a * 2

    class Diagonal(minitorch.ViewFunction):
        @staticmethod
        def forward(ctx, x: Layout) -> Layout:
            n = min(x.shape)
            return Layout((n,), (x.strides[0] + x.strides[1],), x.offset)

    x = minitorch.arange(9.0).view(3, 3)
    assert Double.apply(x).tolist() == [[0, 2, 4], [6, 8, 10], [12, 14, 16]]
    assert seen == [np.ndarray]
    assert Double.name == "double"
    d = Diagonal.apply(x)
    assert d.tolist() == [0.0, 4.0, 8.0] and d.stride() == (4,)
    assert d.untyped_storage() is x.untyped_storage()
    d.fill_(-1.0)
    assert x.tolist() == [[-1.0, 1.0, 2.0], [3.0, -1.0, 5.0], [6.0, 7.0, -1.0]]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.int64])
def test_clone_copies_into_new_contiguous_storage(dtype):
    x = minitorch.arange(6, dtype=dtype).view(2, 3).T
    c = x.clone()
    assert c.untyped_storage() is not x.untyped_storage()
    assert c.is_contiguous() and c.stride() == (2, 1) and c.dtype is dtype
    c.fill_(0)
    assert x.tolist() == [[0, 3], [1, 4], [2, 5]]
