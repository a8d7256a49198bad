"""Differential tests of more of the surface real PyTorch programs use (issue 25, the
older tutorials' spellings and what programs print): mm/bmm/mv/dot, var/std, chunk,
repeat, index_select, gather/scatter, sort, the new_* constructors and type(), tensor
comparison methods and in-place unary methods, return_types and optimizer reprs,
load_state_dict's result, script/trace reprs, ModuleList runs, inference_mode, iinfo,
torch.accelerator, torch.cpu.amp, leaky_relu/elu/silu and two more lr schedulers."""

import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import as_torch, nn

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


@pytest.fixture(autouse=True)
def torch_names():
    """Print as torch does (``torch.float64``, ``torch.return_types``), then put it back."""
    from minitorch import dtypes, size

    before, sizes = dtypes.display_name, getattr(mt.Tensor, "_sizes", False)
    as_torch.use_torch_names()
    yield
    dtypes.display_name = before
    if not sizes:  # (later tests in this process expect minitorch's plain tuples)
        size.use_plain_shapes()


def both(array, requires_grad=False, dtype=np.float64):
    array = np.asarray(array, dtype=dtype)
    return mt.tensor(array, requires_grad=requires_grad), torch.tensor(
        array, requires_grad=requires_grad
    )


def close(mine, theirs, what):
    a, b = np.asarray(mine.detach().numpy()), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype}, torch {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=what)


def values(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# --- matrix products ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op,shapes",
    [("mm", ((3, 4), (4, 2))), ("bmm", ((2, 3, 4), (2, 4, 5))), ("mv", ((3, 4), (4,))),
     ("dot", ((4,), (4,)))],
)  # fmt: skip
def test_matrix_products_match_torch(op, shapes):
    # catches: mm & co. missing as functions or methods (the older tutorials' x.mm(w1)),
    # and gradients that do not reach both operands
    (a, ta), (b, tb) = both(values(shapes[0]), True), both(values(shapes[1], 1), True)
    out, tout = getattr(a, op)(b), getattr(ta, op)(tb)
    close(out, tout, op)
    close(getattr(mt, op)(a, b), getattr(torch, op)(ta, tb), f"torch.{op}")
    out.sum().backward()
    tout.sum().backward()
    close(a.grad, ta.grad, f"d{op}/da")
    close(b.grad, tb.grad, f"d{op}/db")


def test_matrix_products_refuse_what_torch_refuses():
    # catches: mm broadcasting like matmul (torch refuses a 3-D operand) and a silent
    # result for mismatched inner sizes
    with pytest.raises(RuntimeError, match="mm: self must be a matrix"):
        mt.mm(mt.ones(2, 3, 4), mt.ones(4, 2))
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 4x2\)"):
        mt.ones(2, 3).mm(mt.ones(4, 2))
    with pytest.raises(RuntimeError, match="dot: inconsistent tensor size"):
        mt.dot(mt.ones(3), mt.ones(4))
    with pytest.raises(RuntimeError, match="bmm"):
        mt.bmm(mt.ones(2, 3, 4), mt.ones(3, 4, 5))


# --- reductions -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args,kwargs",
    [((), {}), ((1,), {}), ((0,), {"keepdim": True}), ((1,), {"unbiased": False}),
     (((0, 1),), {}), ((False,), {}), ((1,), {"correction": 0})],
)  # fmt: skip
def test_var_and_std_match_torch(args, kwargs):
    # catches: the biased/unbiased divisor mixed up, the old positional unbiased flag read
    # as a dim, keepdim lost, and gradients of the centred square
    x, tx = both(values((3, 4)), True)
    for name in ("var", "std"):
        out, tout = getattr(x, name)(*args, **kwargs), getattr(tx, name)(*args, **kwargs)
        close(out, tout, f"{name}{args}{kwargs}")
        out.sum().backward()
        tout.sum().backward()
        close(x.grad, tx.grad, f"d {name}{args}{kwargs}")
        x.grad, tx.grad = None, None


# --- pieces, copies and picking ---------------------------------------------------------------
@pytest.mark.parametrize("size,chunks,dim", [(6, 3, 0), (5, 2, 0), (5, 3, 0), (4, 6, 0), (7, 3, 1)])
def test_chunk_matches_torch(size, chunks, dim):
    # catches: chunk sizes computed as floor instead of ceil (torch may return fewer chunks)
    shape = (size, 2) if dim == 0 else (2, size)
    x, tx = both(values(shape))
    mine, theirs = x.chunk(chunks, dim), tx.chunk(chunks, dim)
    assert len(mine) == len(theirs), (size, chunks)
    for m, t in zip(mine, theirs, strict=True):
        close(m, t, f"chunk({chunks}, {dim})")


@pytest.mark.parametrize(
    "shape,reps", [((3,), (2,)), ((2, 3), (2, 2)), ((2,), (3, 2)), ((2, 1), (1, 3))]
)
def test_repeat_matches_torch(shape, reps):
    # catches: repeat tiling like repeat_interleave (elements doubled in place) and extra
    # leading sizes ignored; the gradient sums over the copies
    x, tx = both(values(shape), True)
    out, tout = x.repeat(*reps), tx.repeat(*reps)
    close(out, tout, f"repeat{reps}")
    w = values(tout.shape, 2)
    (out * mt.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    close(x.grad, tx.grad, f"d repeat{reps}")


def test_index_select_gather_scatter_match_torch():
    # catches: gather picking along the wrong dim, index_select's index read as a mask,
    # scatter_ writing rows instead of the indexed places, and gather's gradient
    x, tx = both(values((3, 4)), True)
    idx = [[0, 3], [1, 1], [2, 0]]
    for dim, index in ((1, idx), (0, [[2, 0, 1, 1]])):
        i, ti = mt.tensor(index), torch.tensor(index)
        out, tout = x.gather(dim, i), tx.gather(dim, ti)
        close(out, tout, f"gather dim {dim}")
        close(mt.gather(x, dim, i), torch.gather(tx, dim, ti), "torch.gather")
        out.sum().backward()
        tout.sum().backward()
        close(x.grad, tx.grad, f"d gather dim {dim}")
    sel = [2, 0, 2]
    close(x.index_select(1, mt.tensor(sel)), tx.index_select(1, torch.tensor(sel)), "index_select")
    z, tz = both(np.zeros((3, 5)))
    where = [[0], [2], [4]]
    z.scatter_(1, mt.tensor(where), 1.0)
    tz.scatter_(1, torch.tensor(where), 1.0)
    close(z, tz, "scatter_ value")
    src, tsrc = both(values((3, 2)))
    close(mt.zeros(3, 5, dtype=mt.float64).scatter(1, mt.tensor([[1, 3]] * 3), src),
          torch.zeros(3, 5, dtype=torch.float64).scatter(1, torch.tensor([[1, 3]] * 3), tsrc),
          "scatter src")  # fmt: skip
    with pytest.raises(RuntimeError, match="gather.*int64"):
        x.gather(1, mt.tensor([[0.0]]))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_match_torch(descending):
    # catches: descending ignored, ties reordered (torch's sort here is stable), indices of
    # the wrong dim, and values that do not carry the gradient back to their places
    data = [[3.0, 1.0, 2.0, 1.0], [0.5, 0.5, -1.0, 4.0]]
    x, tx = both(data, True)
    out, tout = (
        x.sort(dim=1, descending=descending),
        tx.sort(dim=1, descending=descending, stable=True),
    )
    close(out.values, tout.values, "sort values")
    close(out.indices, tout.indices, "sort indices")
    close(
        mt.argsort(x, dim=0, descending=descending),
        torch.argsort(tx, dim=0, descending=descending, stable=True),
        "argsort",
    )
    (out.values * mt.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    (tout.values * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    close(x.grad, tx.grad, "d sort")


def test_stacking_and_named_results_print_as_torch():
    # catches: hstack joining 1-D tensors along a dim they lack, and max/sort/topk results
    # printed as a minitorch namedtuple rather than torch.return_types
    a, ta = both([1.0, 2.0])
    close(mt.hstack([a, a]), torch.hstack([ta, ta]), "hstack 1-D")
    close(mt.vstack([a, a]), torch.vstack([ta, ta]), "vstack 1-D")
    m, tm = both(values((2, 3)))
    close(mt.hstack([m, m]), torch.hstack([tm, tm]), "hstack 2-D")
    x, tx = both([[1.0, 5.0], [4.0, 2.0]])
    for name, mine, theirs in (
        ("max", x.max(dim=0), tx.max(dim=0)),
        ("min", mt.min(x, 1), torch.min(tx, 1)),
        ("sort", x.sort(), tx.sort()),
        ("topk", x.topk(1), tx.topk(1)),
    ):
        assert repr(mine) == repr(theirs), name


# --- constructors, type names, methods ----------------------------------------------------------
def test_new_constructors_and_type_match_torch():
    # catches: new_* ignoring the source's dtype, dtype= overrides lost, and type() names
    x, tx = both([1.0, 2.0])
    for name, args in (("new_ones", (2, 3)), ("new_zeros", ((2,),)), ("new_full", ((2,), 7.0))):
        close(getattr(x, name)(*args), getattr(tx, name)(*args), name)
    close(x.new_ones(2, dtype=mt.int64), tx.new_ones(2, dtype=torch.int64), "new_ones dtype")
    close(x.new_tensor([3, 4]), tx.new_tensor([3, 4]), "new_tensor")
    assert x.new_empty(2, 2).shape == (2, 2) and x.new_zeros(3, requires_grad=True).requires_grad
    for dtype in ("float32", "float64", "int64", "int32", "bool", "uint8", "float16"):
        mine, theirs = x.to(getattr(mt, dtype)), tx.to(getattr(torch, dtype))
        assert mine.type() == theirs.type(), dtype
    assert x.type(mt.int32).dtype is mt.int32 and x.type("torch.LongTensor").dtype is mt.int64
    assert x.nelement() == 2 and mt.numel(x) == 2 and mt.is_tensor(x) and not mt.is_tensor([1])


def test_comparison_and_logical_methods_match_torch():
    # catches: the comparison ops missing as methods (x.eq(y).all() in the old Blitz)
    x, tx = both([1.0, 2.0, 3.0])
    y, ty = both([1.0, 0.0, 5.0])
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        close(getattr(x, name)(y), getattr(tx, name)(ty), name)
        close(getattr(x, name)(2.0), getattr(tx, name)(2.0), f"{name} scalar")
    b, tb = x.gt(1.5), tx.gt(1.5)
    close(b.logical_and(y.gt(0)), tb.logical_and(ty.gt(0)), "logical_and")
    close(b.logical_not(), tb.logical_not(), "logical_not")
    close(x.where(b, y), tx.where(tb, ty), "Tensor.where")
    close(
        x.multiply(y).subtract(y).divide(2.0), tx.multiply(ty).subtract(ty).divide(2.0), "aliases"
    )


@pytest.mark.parametrize(
    "name", ["exp_", "log_", "sqrt_", "abs_", "neg_", "tanh_", "sigmoid_", "relu_"]
)
def test_inplace_unary_methods_match_torch(name):
    # catches: an in-place method missing, writing a copy instead of the tensor, or
    # breaking the graph of the tensor it overwrites
    data = [0.5, 1.5, 2.0] if name in ("log_", "sqrt_") else [-1.0, 0.5, 2.0]
    x, tx = both(data, True)
    y, ty = x * 1.0, tx * 1.0
    assert getattr(y, name)() is y
    getattr(ty, name)()
    close(y, ty, name)
    assert y.grad_fn is not None and type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad, f"d {name}")


def test_other_inplace_methods_match_torch():
    # catches: masked_fill_/pow_/clamp_min_ returning new tensors instead of writing in place
    x, tx = both([-1.0, 0.5, 2.0])
    assert x.masked_fill_(x < 0, 0.0) is x
    tx.masked_fill_(tx < 0, 0.0)
    close(x, tx, "masked_fill_")
    close(x.pow_(2), tx.pow_(2), "pow_")
    close(x.clamp_min_(0.5).clamp_max_(3.0), tx.clamp_min_(0.5).clamp_max_(3.0), "clamp_min_")
    u = mt.zeros(1000).uniform_(-2, 3)
    assert u.min().item() >= -2 and u.max().item() < 3
    n = mt.zeros(4000).normal_(1.0, 0.5)
    assert abs(n.mean().item() - 1.0) < 0.05 and abs(n.std().item() - 0.5) < 0.05


def test_random_fills_are_tensor_methods_that_nn_init_calls():
    # catches: Tensor.uniform_ reaching up into nn.init (chapter 01 calling chapter 03), a
    # fill that draws other values than nn.init's, and an in-place fill of a leaf that
    # requires grad, which torch refuses outside no_grad (nn.init's functions use it)
    for method in ("uniform_", "normal_"):
        mine = getattr(mt.zeros(2, 3), method)(generator=mt.Generator().manual_seed(1))
        init = getattr(nn.init, method)(mt.zeros(2, 3), generator=mt.Generator().manual_seed(1))
        assert mine.tolist() == init.tolist(), method
        for lib in (mt, torch):
            leaf = lib.zeros(3, requires_grad=True)
            with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
                getattr(leaf, method)()
            getattr(lib.nn.init, method)(leaf)
            assert leaf.requires_grad and leaf.grad_fn is None
    with pytest.raises(TypeError, match="uniform_: expected a floating point tensor"):
        mt.zeros(3, dtype=mt.int64).uniform_()


def test_a_parameters_view_is_a_plain_tensor():
    # catches: weight[:3] (or weight.T) printed as "Parameter containing:" and registered
    # as a parameter, where torch gives a plain tensor with a SliceBackward0
    lin, tlin = nn.Linear(4, 3), torch.nn.Linear(4, 3)
    for mine, theirs in ((lin.bias[:2], tlin.bias[:2]), (lin.weight.T, tlin.weight.T)):
        assert type(mine).__name__ == type(theirs).__name__ == "Tensor"
        assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_creation_takes_requires_grad_and_as_tensor_shares_numpy_memory():
    # catches: eye/arange/linspace refusing requires_grad= (Learn the basics' torch.eye(4, 5,
    # requires_grad=True)), and as_tensor copying a numpy array torch would share
    for fn, args in (("eye", (4, 5)), ("arange", (3.0,)), ("linspace", (0, 1, 5))):
        mine = getattr(mt, fn)(*args, requires_grad=True)
        theirs = getattr(torch, fn)(*args, requires_grad=True)
        assert mine.requires_grad and mine.is_leaf
        close(mine, theirs, fn)
    array = np.ones(3)
    shared, tshared = mt.as_tensor(array), torch.as_tensor(array)
    array[0] = 5.0
    close(shared, tshared, "as_tensor shares memory")
    t = mt.ones(2)
    assert mt.as_tensor(t) is t and mt.as_tensor([1, 2]).dtype is mt.int64


# --- what programs print ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_repr_and_param_groups_match_torch(name):
    # catches: PyTorch's implementation flags (foreach, fused, capturable, differentiable,
    # decoupled_weight_decay) missing from the groups, weight_decay 0.0 for torch's 0, and
    # no blank line between parameter groups
    w, tw = nn.Parameter(mt.ones(2)), torch.nn.Parameter(torch.ones(2))
    b, tb = nn.Parameter(mt.ones(1)), torch.nn.Parameter(torch.ones(1))
    mine = getattr(mt.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    theirs = getattr(torch.optim, name)([{"params": [tw]}, {"params": [tb], "lr": 0.5}], lr=0.1)
    assert repr(mine) == repr(theirs)
    assert mine.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


def test_optimizer_flags_without_an_implementation_are_refused():
    # catches: fused=True or differentiable=True silently accepted (no such kernels here)
    w = nn.Parameter(mt.ones(2))
    with pytest.raises(ValueError, match="fused=True is not supported"):
        mt.optim.Adam([w], fused=True)
    with pytest.raises(ValueError, match="differentiable=True"):
        mt.optim.SGD([w], differentiable=True)
    mt.optim.SGD([w], foreach=True)  # always multi-tensor: any foreach is fine
    # decoupled_weight_decay=True makes Adam AdamW, as in PyTorch
    x, tx = nn.Parameter(mt.ones(2)), torch.nn.Parameter(torch.ones(2))
    mine = mt.optim.Adam([x], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
    theirs = torch.optim.Adam([tx], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
    for opt, p in ((mine, x), (theirs, tx)):
        (p * p).sum().backward()
        opt.step()
    np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-6)


def test_load_state_dict_result_prints_as_torch():
    # catches: the result printed as a plain namedtuple where torch prints
    # "<All keys matched successfully>" (what a notebook cell shows after loading)
    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    assert repr(lin.load_state_dict(lin.state_dict())) == repr(
        tlin.load_state_dict(tlin.state_dict())
    )
    mine, theirs = lin.load_state_dict({}, strict=False), tlin.load_state_dict({}, strict=False)
    assert repr(mine) == repr(theirs) and mine.missing_keys == theirs.missing_keys


def test_module_list_prints_runs_of_identical_modules_as_torch():
    # catches: ModuleList printing each of N identical layers where torch prints
    # "(0-2): 3 x Linear(...)"
    def make(lib):
        return lib.nn.ModuleList(
            [lib.nn.Linear(4, 4) for _ in range(3)] + [lib.nn.ReLU(), lib.nn.Linear(4, 2)]
        )

    assert repr(make(mt)) == repr(make(torch))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())


def test_activation_modules_match_torch():
    # catches: leaky_relu's slope applied to positives, elu's exp applied everywhere (inf
    # for large x), silu's gradient, and the modules' reprs
    x, tx = both([-3.0, -0.5, 0.0, 0.5, 40.0], True)
    for mine, theirs in (
        (nn.LeakyReLU(0.2), torch.nn.LeakyReLU(0.2)),
        (nn.LeakyReLU(), torch.nn.LeakyReLU()),
        (nn.ELU(alpha=0.7), torch.nn.ELU(alpha=0.7)),
        (nn.SiLU(), torch.nn.SiLU()),
    ):
        assert repr(mine) == repr(theirs)
        out, tout = mine(x), theirs(tx)
        close(out, tout, repr(mine))
        out.sum().backward()
        tout.sum().backward()
        close(x.grad, tx.grad, f"d {mine!r}")
        x.grad, tx.grad = None, None
    assert repr(nn.LeakyReLU(0.1, inplace=True)) == repr(torch.nn.LeakyReLU(0.1, inplace=True))


@pytest.mark.parametrize(
    "name,kwargs",
    [("ExponentialLR", {"gamma": 0.9}), ("MultiStepLR", {"milestones": [1, 3], "gamma": 0.1})],
)
def test_more_lr_schedulers_match_torch(name, kwargs):
    # catches: the decay applied one epoch late or at the wrong milestones
    mine = getattr(mt.optim.lr_scheduler, name)(
        mt.optim.SGD([nn.Parameter(mt.ones(1))], lr=1.0), **kwargs
    )
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    theirs = getattr(torch.optim.lr_scheduler, name)(opt, **kwargs)
    for _ in range(5):
        mine.optimizer.step()
        mine.step()
        opt.step()
        theirs.step()
        np.testing.assert_allclose(mine.get_last_lr(), theirs.get_last_lr(), rtol=1e-12)


class _Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class _Cell(nn.Module):
    def __init__(self, lib_nn, gate):
        super().__init__()
        self.dg = gate
        self.linear = lib_nn.Linear(4, 4)

    def forward(self, x, h):
        return mt.tanh(self.dg(self.linear(x)) + h)


def test_script_and_trace_reprs_match_torch(tmp_path):
    # catches: a scripted (or loaded) module printed under its class name where torch
    # prints RecursiveScriptModule, and a scripted function printed as a module
    class TGate(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    mine = mt.jit.script(_Cell(nn, _Gate()))
    assert repr(mine) == (
        "RecursiveScriptModule(\n  original_name=_Cell\n"
        "  (dg): RecursiveScriptModule(original_name=_Gate)\n"
        "  (linear): RecursiveScriptModule(original_name=Linear)\n)"
    )
    assert repr(torch.jit.script(TGate())) == "RecursiveScriptModule(original_name=TGate)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = mt.jit.trace(_Cell(nn, mt.jit.script(_Gate())), (mt.ones(3, 4), mt.ones(3, 4)))
    assert repr(traced) == (
        "_Cell(\n  original_name=_Cell\n  (dg): RecursiveScriptModule(original_name=_Gate)\n"
        "  (linear): Linear(original_name=Linear)\n)"
    )
    traced.save(str(tmp_path / "cell.pt"))
    assert repr(mt.jit.load(str(tmp_path / "cell.pt"))).startswith("RecursiveScriptModule(\n")

    def fn(x):
        return x * 2

    for lib in (mt, torch):
        ones = lib.ones(2)
        assert repr(lib.jit.trace(fn, (ones,))).startswith(
            "<torch.jit.torch.jit.ScriptFunction object at 0x"
        )


# --- modes, limits, devices ---------------------------------------------------------------------
def test_inference_mode_matches_torch():
    # catches: inference_mode missing, not switching grad off, not restoring on exit, and
    # inference_mode(False) switching grad off
    for lib in (mt, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            assert not (x * 2).requires_grad and lib.is_inference_mode_enabled()
        assert (x * 2).requires_grad and not lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            assert (x * 2).requires_grad

        @lib.inference_mode()
        def infer(t):
            return t * 2

        assert not infer(x).requires_grad


def test_iinfo_accelerator_and_cpu_amp_match_torch():
    # catches: iinfo missing or wrong limits, torch.accelerator missing (the newer tutorials'
    # `if torch.accelerator.is_available()`), and torch.cpu.amp.autocast not autocasting
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        mine, theirs = mt.iinfo(getattr(mt, name)), torch.iinfo(getattr(torch, name))
        assert (mine.min, mine.max, mine.bits, repr(mine)) == (
            theirs.min, theirs.max, theirs.bits, repr(theirs)
        )  # fmt: skip
    with pytest.raises(TypeError, match="iinfo"):
        mt.iinfo(mt.float32)
    if not torch.accelerator.is_available() and not mt.cuda.is_available():
        assert mt.accelerator.is_available() is False
        assert mt.accelerator.current_accelerator() is None
        assert mt.accelerator.device_count() == 0
        with pytest.raises(RuntimeError, match="none is available"):
            mt.accelerator.current_device_index()
    assert mt.distributed.get_default_backend_for_device("cpu") == "gloo"
    assert mt.distributed.get_default_backend_for_device(mt.device("cpu")) == "gloo"
    with pytest.raises(TypeError):
        mt.distributed.get_default_backend_for_device(None)
    a = mt.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with mt.cpu.amp.autocast():
            assert (a @ a.T).dtype is mt.bfloat16 and mt.is_autocast_enabled("cpu")
    assert not mt.is_autocast_enabled("cpu") and mt.get_autocast_dtype("cpu") is mt.bfloat16
    assert mt.cpu.is_available() and mt.cpu.device_count() == 1


def test_a_custom_autograd_function_computes_on_tensors_as_in_pytorch():
    # catches: torch.autograd.Function's forward given raw arrays (input.clamp(min=0) failed:
    # numpy arrays have no clamp), saved inputs not the tensors they were, and the node's repr
    # without PyTorch's torch.autograd.function. prefix
    torch = pytest.importorskip("torch")

    def my_relu(lib):
        class MyReLU(lib.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return input.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                (input,) = ctx.saved_tensors
                grad_input = grad_output.clone()
                grad_input[input < 0] = 0
                return grad_input

        return MyReLU

    values = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], dtype=np.float32)
    x = mt.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    y, ty = my_relu(mt).apply(x), my_relu(torch).apply(tx)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    prefix = f"<{mt.dtypes.display_name}.autograd.function.MyReLUBackward"  # ("torch" here)
    assert repr(y.grad_fn).split(" object")[0] == prefix
    assert repr(ty.grad_fn).startswith("<torch.autograd.function.MyReLUBackward")
    # minitorch's own ops (chapter 02: Function on arrays) still get arrays
    seen = []

    class Arrays(mt.Function):
        @staticmethod
        def forward(ctx, a):
            seen.append(type(a))
            return a * 2

    Arrays.apply(mt.ones(2))
    assert seen == [np.ndarray]
