"""Differential tests of the functions and methods real programs need (issue 40, round 2):
meshgrid, normal's overloads, roll, narrow, unique, the bitwise ops and operators,
randint's two forms, indexing with a ``range`` and ``format`` of a 0-d tensor."""

import warnings

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def same(mine, theirs, what):
    a, b = np.asarray(mine.detach().numpy()), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype}, torch {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=what)


def both(array):
    array = np.asarray(array)
    return mt.tensor(array), torch.tensor(array)


def module(t):
    """minitorch or torch: whichever ``t`` belongs to."""
    return mt if isinstance(t, mt.Tensor) else torch


def raises_like(call_mine, call_torch, what):
    """Both refuse, with the same exception type."""
    with pytest.raises(Exception) as theirs:
        call_torch()
    with pytest.raises(type(theirs.value)):
        call_mine()


# --- meshgrid -------------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (3,)])
def test_meshgrid_matches_torch(indexing, sizes):
    # catches: 'xy' not swapping the first two dims (d2l's plots), a list argument refused,
    # gradients that do not reach the inputs
    ins = [np.arange(n, dtype=np.float64) + 10 * i for i, n in enumerate(sizes)]
    mine = [mt.tensor(a, requires_grad=True) for a in ins]
    theirs = [torch.tensor(a, requires_grad=True) for a in ins]
    out, tout = mt.meshgrid(*mine, indexing=indexing), torch.meshgrid(*theirs, indexing=indexing)
    assert len(out) == len(tout)
    for k, (o, to) in enumerate(zip(out, tout, strict=True)):
        same(o, to, f"meshgrid{sizes} {indexing} output {k}")
    sum((o * (k + 1)).sum() for k, o in enumerate(out)).backward()
    sum((o * (k + 1)).sum() for k, o in enumerate(tout)).backward()
    for m, t in zip(mine, theirs, strict=True):
        same(m.grad, t.grad, f"meshgrid{sizes} grad")
    listed = mt.meshgrid(list(mine), indexing=indexing)
    same(listed[0], tout[0], "meshgrid of a list")


def test_meshgrid_without_indexing_warns_and_is_ij():
    # catches: a silent default (PyTorch warns) or 'xy' as the default
    a, b = both(np.arange(2)), both(np.arange(3))
    with pytest.warns(UserWarning, match="indexing"):
        out = mt.meshgrid(a[0], b[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = torch.meshgrid(a[1], b[1])
    same(out[0], tout[0], "meshgrid default")
    with pytest.raises(RuntimeError, match="indexing"):
        mt.meshgrid(a[0], b[0], indexing="yx")


# --- normal ---------------------------------------------------------------------------------
def test_normal_overloads_match_torch_in_shape_dtype_and_gradient():
    # catches: an overload missing (tensor/float, float/tensor, floats and a size), the
    # wrong broadcast shape or dtype, a nonzero gradient (PyTorch's is zero)
    cases = [
        lambda m: m.normal(m.zeros(2, 3), m.ones(3)),
        lambda m: m.normal(m.zeros(2, dtype=m.float64), 2.0),
        lambda m: m.normal(0.0, m.ones(3)),
        lambda m: m.normal(2, 3, (2, 3)),
        lambda m: m.normal(0.0, 1.0, size=(4,), dtype=m.float64),
        lambda m: m.normal(1.0, 0.0, (3,)),
    ]
    for k, case in enumerate(cases):
        out, tout = case(mt), case(torch)
        assert out.shape == tuple(tout.shape), f"case {k}"
        assert str(out.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1], f"case {k}"
    same(cases[-1](mt), cases[-1](torch), "normal with std 0 is the mean")
    mean, std = mt.zeros(3, requires_grad=True), mt.ones(3, requires_grad=True)
    mt.normal(mean, std).sum().backward()
    assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3


def test_normal_draws_follow_the_generator_and_its_statistics():
    # catches: a draw ignoring generator=, a std applied as variance, out= not written
    g1, g2 = mt.Generator().manual_seed(3), mt.Generator().manual_seed(3)
    a = mt.normal(mt.full((20000,), 2.0), 3.0, generator=g1)
    b = mt.normal(mt.full((20000,), 2.0), 3.0, generator=g2)
    assert a.tolist() == b.tolist()
    assert abs(a.mean().item() - 2.0) < 0.1 and abs(a.std().item() - 3.0) < 0.1
    out = mt.empty(3)
    assert mt.normal(0.0, 1.0, (3,), out=out) is out


def test_normal_refuses_what_torch_refuses():
    # catches: a negative std accepted, floats without a size, integer means
    raises_like(lambda: mt.normal(mt.zeros(2), -1.0), lambda: torch.normal(torch.zeros(2), -1.0),
                "negative std")  # fmt: skip
    raises_like(lambda: mt.normal(0.0, -1.0, (2,)), lambda: torch.normal(0.0, -1.0, (2,)), "std")
    raises_like(lambda: mt.normal(0, 1), lambda: torch.normal(0, 1), "no size")
    raises_like(
        lambda: mt.normal(mt.zeros(2, dtype=mt.long), 1.0),
        lambda: torch.normal(torch.zeros(2, dtype=torch.long), 1.0),
        "long mean",
    )


# --- roll and narrow ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shifts,dims", [(1, None), (-7, None), (1, 0), ((1, -1), (0, 1)), (-1, 1), (4, -1), (0, 0),
                    ((2, 1), (1, 1))],
)  # fmt: skip
def test_roll_matches_torch(shifts, dims):
    # catches: no-dims roll not over the flattened tensor, negative or oversized shifts,
    # tuples of shifts, a gradient that does not roll back
    data = np.arange(12.0).reshape(3, 4)
    a, ta = mt.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out = a.roll(shifts) if dims is None else mt.roll(a, shifts, dims)
    tout = ta.roll(shifts) if dims is None else torch.roll(ta, shifts, dims)
    same(out, tout, f"roll({shifts}, {dims})")
    weights = np.arange(12.0).reshape(3, 4) ** 2
    (out * mt.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    same(a.grad, ta.grad, f"roll({shifts}, {dims}) grad")


def test_roll_refuses_misaligned_shifts():
    a, ta = both(np.arange(4))
    raises_like(lambda: mt.roll(a, (1, 2), (0,)), lambda: torch.roll(ta, (1, 2), (0,)), "align")


@pytest.mark.parametrize("dim,start,length", [(0, 2, 3), (0, -3, 2), (1, 0, 4), (-1, 3, 1),
                                              (0, 10, 0), (0, "tensor", 3)])  # fmt: skip
def test_narrow_matches_torch(dim, start, length):
    # catches: negative start not counted from the end, a tensor start refused, a copy
    # where PyTorch gives a view
    a, ta = both(np.arange(40).reshape(10, 4))
    s, ts = (mt.tensor(2), torch.tensor(2)) if start == "tensor" else (start, start)
    out, tout = a.narrow(dim, s, length), ta.narrow(dim, ts, length)
    same(out, tout, f"narrow({dim}, {start}, {length})")
    if out.numel():
        out.fill_(-1)
        tout.fill_(-1)
        same(a, ta, "narrow is a view")


@pytest.mark.parametrize("start,length", [(11, 1), (-11, 1), (5, 6)])
def test_narrow_out_of_range_is_refused_like_torch(start, length):
    a, ta = both(np.arange(10))
    raises_like(lambda: a.narrow(0, start, length), lambda: ta.narrow(0, start, length), "narrow")


# --- unique ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("inverse,counts", [(False, False), (True, False), (False, True),
                                            (True, True)])  # fmt: skip
def test_unique_matches_torch(dim, inverse, counts):
    # catches: unsorted values, an inverse of the flat shape, counts missing or int32,
    # the wrong tuple for each flag combination, dim ignored
    data = np.array([[3, 1, 3], [1, 1, 0], [3, 1, 3]])
    a, ta = both(data)
    kwargs = dict(return_inverse=inverse, return_counts=counts, dim=dim)
    out, tout = mt.unique(a, **kwargs), torch.unique(ta, **kwargs)
    if not (inverse or counts):
        out, tout = (out,), (tout,)
    assert len(out) == len(tout)
    for k, (o, to) in enumerate(zip(out, tout, strict=True)):
        same(o, to, f"unique({kwargs}) output {k}")
    same(a.unique(sorted=False), ta.unique(sorted=False), "method, sorted=False")


# --- bitwise ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_bitwise_ops_and_operators_match_torch(dtype):
    # catches: & | ^ as logical ops on integers (5 & 3 is 1, not True), ~ as logical_not on
    # integers (~5 is -6), a promoted dtype, scalars on the left refused, in-place &= missing
    x, y = np.array([5, 3, 0, 1]), np.array([3, 6, 1, 1])
    a, ta = both(x.astype(dtype))
    b, tb = both(y.astype(dtype))
    for name, op in [("and", lambda p, q: p & q), ("or", lambda p, q: p | q),
                     ("xor", lambda p, q: p ^ q), ("method", lambda p, q: p.bitwise_and(q)),
                     ("fn", lambda p, q: module(p).bitwise_xor(p, q)),
                     ("scalar", lambda p, q: p | 1), ("rscalar", lambda p, q: 1 ^ p)]:  # fmt: skip
        same(op(a, b), op(ta, tb), f"{name} on {dtype}")
    same(~a, ~ta, f"~ on {dtype}")
    same(mt.bitwise_not(a), torch.bitwise_not(ta), f"bitwise_not on {dtype}")
    a &= b
    ta &= tb
    same(a, ta, f"&= on {dtype}")


def test_bitwise_ops_refuse_floats_like_torch():
    a, ta = both(np.ones(2))
    raises_like(lambda: a & 1, lambda: ta & 1, "& on floats")
    raises_like(lambda: ~a, lambda: ~ta, "~ on floats")
    raises_like(lambda: mt.tensor([1]) & 1.5, lambda: torch.tensor([1]) & 1.5, "& a float")


# --- randint ---------------------------------------------------------------------------------
def test_randint_forms_match_torch():
    # catches: randint(high, size) read as randint(low, high), dtype= or keywords refused
    calls = [
        lambda m: m.randint(10, (3,)),
        lambda m: m.randint(3, 10, (2, 2)),
        lambda m: m.randint(low=2, high=4, size=(5,)),
        lambda m: m.randint(5, size=(2,)),
        lambda m: m.randint(0, 2, (3,), dtype=m.float32),
        lambda m: m.randint(7, (4,), generator=m.Generator().manual_seed(1)),
    ]
    for k, call in enumerate(calls):
        out, tout = call(mt), call(torch)
        assert out.shape == tuple(tout.shape), f"form {k}"
        assert str(out.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1], f"form {k}"
        assert 0 <= out.min().item() and out.max().item() < 10, f"form {k}"
    assert set(mt.randint(3, 5, (200,)).tolist()) == {3, 4}
    raises_like(lambda: mt.randint(5, 3), lambda: torch.randint(5, 3), "size an int")
    raises_like(lambda: mt.randint(5, 5, (2,)), lambda: torch.randint(5, 5, (2,)), "empty range")


# --- range indices and format ---------------------------------------------------------------
def test_indexing_with_a_range_reads_and_writes_like_torch():
    # catches: a range refused as an index ("What is torch.nn really?" slices batches so)
    data = np.arange(12.0).reshape(3, 4)
    a, ta = both(data)
    same(a[range(1, 3)], ta[range(1, 3)], "t[range]")
    same(a[range(0, 3, 2), range(2)], ta[range(0, 3, 2), range(2)], "t[range, range]")
    same(a[:, range(0)], ta[:, range(0)], "t[:, empty range]")
    a[range(1, 3)] = 0.0
    ta[range(1, 3)] = 0.0
    same(a, ta, "t[range] = 0")


def test_format_of_a_0d_tensor_is_its_number_and_nd_refuses_like_torch():
    # catches: f"{loss:.4f}" failing (nanoGPT's logging), n-d accepted with a spec
    for value, spec in [(1.23456, ".4f"), (3, "5d"), (True, ""), (2.5, ">8.2e")]:
        a, ta = both(value)
        assert format(a, spec) == format(ta, spec), (value, spec)
    a, ta = both(np.ones(2))
    raises_like(lambda: f"{a:.4f}", lambda: f"{ta:.4f}", "n-d with a spec")
    assert format(a) == str(a)


def test_bitwise_ops_export_to_onnx_and_script_like_eager(tmp_path):
    # catches: & | ^ ~ (now bitwise ops) lost to the exporter (bool: And/Or/Xor/Not; integers:
    # Bitwise*, opset 18), and jit.script's ~ still a logical not (~5 would be False, not -6)
    pytest.importorskip("onnxruntime")
    from minitorch import jit
    from minitorch import onnx as mt_onnx

    from .test_onnx import assert_round_trip

    def masks(x, y):
        return (~(x > y) | (y < 0.2)) & (x != 0.5) ^ (x < 0.1)

    def ints(a, b):
        return (a & b) | (~a ^ 3)

    g = mt.Generator().manual_seed(0)
    x, y = mt.rand(3, 4, generator=g), mt.rand(3, 4, generator=g)
    ops = assert_round_trip(masks, (x, y), tmp_path / "masks.onnx")
    assert {"And", "Or", "Xor", "Not"} <= set(ops)
    a, b = mt.tensor([[5, -3, 0]]), mt.tensor([[6, 1, 7]])
    ops = assert_round_trip(ints, (a, b), tmp_path / "ints.onnx", opset_version=18)
    assert "BitwiseNot" in ops
    with pytest.raises(mt_onnx.OnnxExportError, match="opset 18"):
        mt_onnx.export(ints, (a, b), tmp_path / "old.onnx", opset_version=17)
    assert jit.script(ints)(a, b).tolist() == ints(a, b).tolist()


# catches: zeros(size=(2, 3)) refused (d2l's Builders' Guide writes torch.rand(size=(2, 4)))
@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_the_shape_as_size_keyword_like_torch(name):
    for size in ((2, 3), [4], ()):
        assert tuple(getattr(mt, name)(size=size).shape) == tuple(
            getattr(torch, name)(size=size).shape
        )
    with pytest.raises(TypeError):
        getattr(torch, name)(2, size=(2,))
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        getattr(mt, name)(2, size=(2,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        getattr(mt, name)(shape=(2,))
