"""Differential tests of the nn, optim and runtime surface real PyTorch programs use
(issue 25): interpolate, adaptive pooling, RMSprop, layer reprs and options, DataParallel
on one device, Variable, the backends' flags, threads, the CUDA memory functions on a
machine without CUDA, load(weights_only=), and copying and pickling tensors."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn import functional as F

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def both(array, requires_grad=False):
    array = np.asarray(array, dtype=np.float64)
    return mt.tensor(array, requires_grad=requires_grad), torch.tensor(
        array, requires_grad=requires_grad
    )


def close(mine, theirs, what, rtol=1e-6, atol=1e-8):
    a, b = mine.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


# --- F.interpolate ------------------------------------------------------------------------------
CASES = [
    ((1, 2, 4, 5), dict(size=(7, 3), mode="nearest")),
    ((1, 2, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((1, 1, 5, 5), dict(scale_factor=0.5, mode="nearest")),
    ((2, 1, 4, 4), dict(size=(3, 6), mode="bilinear", align_corners=False)),
    ((2, 1, 4, 4), dict(size=(3, 6), mode="bilinear", align_corners=True)),
    ((1, 2, 3, 5), dict(scale_factor=1.5, mode="bilinear")),
    ((1, 1, 6, 6), dict(size=(2, 2), mode="bilinear")),
    ((2, 3, 5), dict(size=9, mode="linear", align_corners=True)),
    ((2, 3, 5), dict(scale_factor=0.6, mode="linear")),
    ((1, 1, 2, 3, 4), dict(size=(3, 3, 3), mode="trilinear")),
    ((1, 1, 2, 3, 4), dict(scale_factor=2, mode="nearest")),
]


@pytest.mark.parametrize("shape,kwargs", CASES, ids=[str(k) for _, k in CASES])
def test_interpolate_matches_torch(shape, kwargs):
    # catches: the source-index formulas (half-pixel centres, align_corners, the clamp at 0),
    # output sizes from a scale factor, and gradients scattered back to the wrong pixels
    values = np.sin(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape)
    x, tx = both(values, requires_grad=True)
    y, ty = F.interpolate(x, **kwargs), torch.nn.functional.interpolate(tx, **kwargs)
    close(y, ty, f"interpolate {kwargs}")
    weights = np.cos(np.arange(ty.numel(), dtype=np.float64)).reshape(ty.shape)
    (y * mt.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    close(x.grad, tx.grad, f"d interpolate {kwargs}")


def test_interpolate_errors_are_pytorchs():
    x = mt.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(x, size=2, mode="bicubic")
    with pytest.raises(ValueError, match="bilinear.*4-d"):
        F.interpolate(mt.zeros(1, 4, 4), size=2, mode="bilinear")


@pytest.mark.parametrize("size", [(1, 1), 3, (2, None), (5, 4)])
def test_adaptive_avg_pool2d_matches_torch(size):
    values = np.arange(2 * 7 * 5, dtype=np.float64).reshape(1, 2, 7, 5) ** 0.5
    x, tx = both(values, requires_grad=True)
    y, ty = nn.AdaptiveAvgPool2d(size)(x), torch.nn.AdaptiveAvgPool2d(size)(tx)
    close(y, ty, f"adaptive_avg_pool2d {size}")
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad, f"d adaptive_avg_pool2d {size}")
    assert repr(nn.AdaptiveAvgPool2d(size)) == repr(torch.nn.AdaptiveAvgPool2d(size))


# --- optim.RMSprop --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"momentum": 0.9},
        {"centered": True},
        {"alpha": 0.9, "weight_decay": 0.1},
        {"maximize": True},
    ],
)
def test_rmsprop_matches_torch_over_steps(options):
    # catches: eps inside the root, the centred variance, momentum on the divided gradient
    values = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    p, tp = both(values, requires_grad=True)
    opt = mt.optim.RMSprop([p], lr=0.01, **options)
    topt = torch.optim.RMSprop([tp], lr=0.01, **options)
    for _ in range(4):
        for param, optimizer in ((p, opt), (tp, topt)):
            optimizer.zero_grad()
            (param**3).sum().backward()
            optimizer.step()
    close(p, tp, f"RMSprop {options}", rtol=1e-10)
    state = opt.state_dict()["state"][0]
    assert set(state) == set(topt.state_dict()["state"][0])  # the same buffers, by name


def test_rmsprop_checks_its_options():
    with pytest.raises(ValueError, match="alpha"):
        mt.optim.RMSprop([mt.zeros(1, requires_grad=True)], alpha=-0.1)
    with pytest.raises(ValueError, match="momentum"):
        mt.optim.RMSprop([mt.zeros(1, requires_grad=True)], momentum=-1.0)


# --- layers: PyTorch's options and reprs ----------------------------------------------------------
def test_layer_reprs_are_pytorchs():
    pairs = [
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
        (nn.Dropout(0.2), torch.nn.Dropout(0.2)),
        (nn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
        (nn.MaxPool2d(3, 2, 1), torch.nn.MaxPool2d(3, 2, 1)),
        (nn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
        (nn.BatchNorm1d(4), torch.nn.BatchNorm1d(4)),
        (nn.BatchNorm2d(3, bias=False), torch.nn.BatchNorm2d(3, bias=False)),
        (nn.LayerNorm(5), torch.nn.LayerNorm(5)),
        (nn.LayerNorm(5, bias=False), torch.nn.LayerNorm(5, bias=False)),
    ]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
    assert list(nn.LayerNorm(5, bias=False).state_dict()) == list(
        torch.nn.LayerNorm(5, bias=False).state_dict()
    )
    with pytest.raises(NotImplementedError, match="ceil_mode"):
        nn.MaxPool2d(2, ceil_mode=True)


def test_inplace_relu_and_dropout_write_into_their_input():
    x = mt.tensor([[-1.0, 2.0]]) * 1.0
    out = nn.ReLU(inplace=True)(x)
    assert out is x and x.tolist() == [[0.0, 2.0]]
    leaf = mt.tensor([-1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        nn.ReLU(inplace=True)(leaf)  # as PyTorch: a leaf that requires grad
    h = leaf * 1.0
    nn.ReLU(inplace=True)(h).sum().backward()  # recorded: the gradient goes through
    assert leaf.grad.tolist() == [0.0]
    y = mt.ones(4, 4)
    assert nn.Dropout(0.5, inplace=True)(y) is y


# --- DataParallel on a machine without GPUs -------------------------------------------------------
def test_dataparallel_without_gpus_calls_the_module_as_pytorch_does():
    if mt.cuda.is_available():
        pytest.skip("a GPU is here: DataParallel moves inputs to it")
    model = nn.Sequential(nn.Linear(3, 2))
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2))
    wrapped, twrapped = nn.DataParallel(model), torch.nn.DataParallel(tmodel)
    assert wrapped.module is model and wrapped.device_ids == twrapped.device_ids == []
    assert (
        list(wrapped.state_dict())
        == list(twrapped.state_dict())
        == [
            "module.0.weight",
            "module.0.bias",
        ]
    )
    assert repr(wrapped) == repr(twrapped)
    x = mt.ones(4, 3)
    assert mt.equal(wrapped(x), model(x))
    assert nn.parallel.DataParallel is nn.DataParallel
    assert nn.parallel.DistributedDataParallel is mt.distributed.DistributedDataParallel


# --- Variable, backends, threads, CUDA memory, default device ------------------------------------
def test_variable_is_the_deprecated_alias_that_returns_a_tensor():
    from minitorch.autograd import Variable

    a = mt.ones(2)
    v = Variable(a, requires_grad=True)
    assert type(v) is mt.Tensor and v.requires_grad and v.is_leaf
    assert v.data_ptr() == a.data_ptr()  # shares the data, as PyTorch's
    assert isinstance(a, Variable)  # every tensor counts as one
    assert not Variable(v * 2).requires_grad  # a new leaf: detached
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(a, volatile=True)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])


def test_backends_flags_are_kept_and_report_no_cudnn():
    cudnn = mt.backends.cudnn
    assert cudnn.is_available() is False
    if torch.version.cuda is None:  # PyPI's Linux torch bundles cuDNN, GPU or not
        assert torch.backends.cudnn.is_available() is False
    assert cudnn.version() is None
    saved = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert mt.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = saved
    assert mt.backends.mps.is_available() is False
    assert mt.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32


def test_num_threads_round_trip_and_refuse_zero():
    before = mt.get_num_threads()
    try:
        mt.set_num_threads(1)
        assert mt.get_num_threads() == 1
    finally:
        mt.set_num_threads(before)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            mt.set_num_threads(bad)
    assert isinstance(mt.get_num_interop_threads(), int)


def test_cuda_memory_functions_without_cuda_are_pytorchs():
    if mt.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a GPU is here")
    mt.cuda.empty_cache()
    torch.cuda.empty_cache()
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved"):
        assert getattr(mt.cuda, name)() == getattr(torch.cuda, name)() == 0, name
    assert mt.cuda.memory_stats() == torch.cuda.memory_stats() == {}
    for name in ("memory_summary", "synchronize", "current_device"):
        with pytest.raises(RuntimeError, match=f"{name}: CUDA is not available"):
            getattr(mt.cuda, name)()


def test_default_device_is_the_cpu():
    assert str(mt.get_default_device()) == str(torch.get_default_device()) == "cpu"
    mt.set_default_device("cpu")
    mt.set_default_device(None)
    with pytest.raises(NotImplementedError, match="pass device='cuda:0'"):
        mt.set_default_device("cuda")


# --- load(weights_only=), deepcopy, pickle -------------------------------------------------------
def test_load_accepts_weights_only(tmp_path):
    path = tmp_path / "state.pt"
    mt.save(nn.Linear(2, 2).state_dict(), path)
    for weights_only in (True, False, None):
        assert set(mt.load(path, weights_only=weights_only)) == {"weight", "bias"}
    with pytest.raises(TypeError, match="weights_only"):
        mt.load(path, weights_only="yes")


def test_deepcopy_of_a_module_copies_its_storage():
    # catches: a copy whose array and storage are two objects (writes seen by one only)
    model = nn.Linear(2, 2)
    twin = copy.deepcopy(model)
    assert type(twin.weight) is nn.Parameter and twin.weight.requires_grad
    with mt.no_grad():
        twin.weight.fill_(1.0)
    assert twin.weight.view(-1).tolist() == [1.0] * 4  # through a view: the same memory
    assert not mt.equal(model.weight, twin.weight)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(model.weight * 2)


def test_tensors_pickle_for_other_processes():
    t = mt.arange(6.0).view(2, 3).t()  # a strided view: sent as a contiguous copy
    back = pickle.loads(pickle.dumps(t))
    assert back.tolist() == t.tolist() and back.is_contiguous()
    p = pickle.loads(pickle.dumps(nn.Parameter(mt.ones(2))))
    assert type(p) is nn.Parameter and p.requires_grad
    with pytest.raises(RuntimeError, match="non-leaf tensor which requires_grad"):
        pickle.dumps(mt.ones(2, requires_grad=True) * 2)


def test_pin_memory_without_a_gpu_warns_as_pytorch():
    if mt.cuda.is_available():
        pytest.skip("a GPU is here")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mt.data.DataLoader([1, 2], pin_memory=True)
    assert any("no accelerator is found" in str(w.message) for w in caught)
