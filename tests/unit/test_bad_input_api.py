"""Bad input across the newer API (dtypes, amp, optimizers, layers, losses, indexing,
autograd, serialization, jit, distributed, data): an error of PyTorch's type that names
the op and the offending value, never a silent result; and a failed call loses nothing.

The cases come from a sweep of ~500 bad calls thrown at minitorch and PyTorch side by
side; each one here was a silent result, a raw Python/numpy error or an AttributeError
before the shared checks (``minitorch.checks``, ``shape.normalize_dim``, ``Function.dtypes``
in ``Function.apply``, the optimizers' ``_check_group``) caught it.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

import minitorch as mt
import minitorch.distributed as dist
from minitorch import amp, nn, optim
from minitorch.nn import functional as F


def _p(*shape: int) -> nn.Parameter:
    return nn.Parameter(mt.ones(*shape))


def _x23() -> mt.Tensor:
    return mt.arange(6.0).reshape(2, 3)


def _scaled() -> tuple:
    """A parameter whose gradient came from a scaled loss, its SGD and its GradScaler."""
    p = _p(2)
    opt = optim.SGD([p], lr=0.1)
    scaler = amp.GradScaler("cpu")
    scaler.scale((p * 2).sum()).backward()
    return p, opt, scaler


def _file(data: bytes, tmp_path) -> str:
    path = tmp_path / "bad.pt"
    path.write_bytes(data)
    return str(path)


# (what is wrong, the call, the exception type, a pattern naming the op and the bad value)
CASES = [
    # --- dtypes and casts
    ("to a junk device string", lambda: mt.ones(2).to("float99"), ValueError, r"to: .*'float99'"),
    ("to a list", lambda: mt.ones(2).to([1]), TypeError, r"to: list \[1\] is not a dtype"),
    ("to three positionals", lambda: mt.ones(2).to("cpu", mt.float32, 3), TypeError, r"to: .*3"),
    ("type_as a float", lambda: mt.ones(2).type_as(3.0), TypeError, r"type_as: .*'other'.*float"),
    ("promote_types junk", lambda: mt.promote_types(mt.float32, "x"), TypeError, r"promote_types"),
    ("finfo of a str", lambda: mt.finfo("x"), TypeError, r"finfo: str 'x'"),
    (
        "softmax of ints",
        lambda: mt.ones(2, dtype=mt.int64).softmax(0),
        RuntimeError,
        r"softmax: .*int64",
    ),
    (
        "log_softmax of bools",
        lambda: mt.log_softmax(mt.ones(2, dtype=mt.bool), 0),
        RuntimeError,
        r"log_softmax: .*bool",
    ),
    (
        "matmul int with float",
        lambda: mt.ones(2, 2, dtype=mt.int64) @ mt.ones(2, 2),
        RuntimeError,
        r"matmul: .*int64 and float32",
    ),
    (
        "matmul half with float",
        lambda: mt.ones(2, 2).half() @ mt.ones(2, 2),
        RuntimeError,
        r"matmul: .*float16 and float32",
    ),
    (
        "matmul bfloat16 with float",
        lambda: mt.ones(2, 2).bfloat16() @ mt.ones(2, 2),
        RuntimeError,
        r"matmul: .*bfloat16",
    ),
    (
        "matmul of bools",
        lambda: mt.ones(2, 2, dtype=mt.bool) @ mt.ones(2, 2, dtype=mt.bool),
        RuntimeError,
        r"matmul: .*bool",
    ),
    (
        "linear of ints",
        lambda: nn.Linear(2, 2)(mt.ones(2, 2, dtype=mt.int64)),
        RuntimeError,
        r"linear: .*int64",
    ),
    (
        "where with a float condition",
        lambda: mt.where(mt.ones(2), mt.ones(2), mt.zeros(2)),
        RuntimeError,
        r"where: .*boolean.*float32",
    ),
    (
        "sub of a bool mask",
        lambda: 1 - (mt.ones(2) > 0),
        RuntimeError,
        r"sub: not supported with a bool tensor",
    ),
    ("exp of a list", lambda: mt.exp([1.0]), RuntimeError, r"exp: unsupported operand type list"),
    ("sqrt of a str", lambda: mt.sqrt("a"), RuntimeError, r"sqrt: unsupported operand type str"),
    ("log of None", lambda: mt.log(None), RuntimeError, r"log: unsupported operand type NoneType"),
    ("softmax of a list", lambda: mt.softmax([1.0], 0), TypeError, r"softmax: .*'input'.*list"),
    ("sum of a list", lambda: mt.sum([1.0]), TypeError, r"sum: .*'input'.*list"),
    ("reshape of a list", lambda: mt.reshape([1.0], 1), TypeError, r"reshape: .*'input'.*list"),
    (
        "fill_ with a 1-d tensor",
        lambda: mt.ones(2).fill_(mt.ones(2)),
        RuntimeError,
        r"fill_: .*0-dim.*\(2,\)",
    ),
    ("fill_ with a str", lambda: mt.ones(2).fill_("a"), TypeError, r"fill_: .*str 'a'"),
    ("rand of ints", lambda: mt.rand(2, dtype=mt.int64), TypeError, r"rand: .*int64"),
    ("randn of ints", lambda: mt.randn(2, dtype=mt.int64), TypeError, r"randn: .*int64"),
    ("zeros_like a list", lambda: mt.zeros_like([1.0]), TypeError, r"zeros_like: .*list"),
    ("full_like a float", lambda: mt.full_like(3.0, 1.0), TypeError, r"full_like: .*float"),
    ("empty negative", lambda: mt.empty(-1), RuntimeError, r"empty: negative dimension -1"),
    ("randperm of bools", lambda: mt.randperm(3, dtype=mt.bool), TypeError, r"randperm: .*bool"),
    ("manual_seed too big", lambda: mt.manual_seed(-(2**70)), ValueError, r"manual_seed: .*-\d+"),
    (
        "rand with a junk generator",
        lambda: mt.rand(2, generator=3),
        TypeError,
        r"generator .*int 3",
    ),
    # --- devices
    ("device cuda:x", lambda: mt.device("cuda:x"), ValueError, r"device: .*'cuda:x'"),
    ("device cpu:1:2", lambda: mt.device("cpu:1:2"), ValueError, r"device: .*'cpu:1:2'"),
    ("negative device index", lambda: mt.device("cuda", -1), RuntimeError, r"device: .*-1"),
    ("device of None", lambda: mt.device(None), TypeError, r"device: .*None"),
    ("zeros on device 3.5", lambda: mt.zeros(2, device=3.5), TypeError, r"zeros: .*3\.5"),
    ("tensor on xpu9", lambda: mt.tensor([1.0], device="xpu9"), ValueError, r"tensor: .*'xpu9'"),
    ("to a device list", lambda: mt.ones(2).to(device=["cpu"]), TypeError, r"to: .*list"),
    ("cuda.enable gpu", lambda: mt.cuda.enable("gpu"), ValueError, r"cuda\.enable: .*'gpu'"),
    # --- amp: autocast and GradScaler
    ("autocast a non-callable", lambda: mt.autocast("cpu")(5), TypeError, r"autocast.*int 5"),
    (
        "is_autocast_enabled junk",
        lambda: amp.is_autocast_enabled("tpu"),
        ValueError,
        r"autocast: device_type .*'tpu'",
    ),
    ("autocast enabled str", lambda: mt.autocast("cpu", enabled="yes"), TypeError, r"enabled"),
    ("autocast dtype junk", lambda: mt.autocast("cpu", dtype="x"), TypeError, r"autocast: str 'x'"),
    (
        "GradScaler init_scale str",
        lambda: amp.GradScaler(init_scale="big"),
        TypeError,
        r"GradScaler: init_scale .*'big'",
    ),
    (
        "GradScaler init_scale 0",
        lambda: amp.GradScaler(init_scale=0.0),
        ValueError,
        r"GradScaler: init_scale .*init_scale=0",
    ),
    (
        "GradScaler init_scale nan",
        lambda: amp.GradScaler(init_scale=float("nan")),
        ValueError,
        r"GradScaler: init_scale .*nan",
    ),
    (
        "GradScaler growth_factor None",
        lambda: amp.GradScaler(growth_factor=None),
        TypeError,
        r"GradScaler: growth_factor .*None",
    ),
    (
        "GradScaler growth_factor inf",
        lambda: amp.GradScaler(growth_factor=float("inf")),
        ValueError,
        r"GradScaler: growth_factor .*inf",
    ),
    (
        "GradScaler backoff_factor str",
        lambda: amp.GradScaler(backoff_factor="half"),
        TypeError,
        r"GradScaler: backoff_factor .*'half'",
    ),
    (
        "GradScaler growth_interval 2.5",
        lambda: amp.GradScaler(growth_interval=2.5),
        TypeError,
        r"GradScaler: growth_interval .*2\.5",
    ),
    (
        "GradScaler growth_interval bool",
        lambda: amp.GradScaler(growth_interval=True),
        TypeError,
        r"GradScaler: growth_interval .*True",
    ),
    ("GradScaler device tpu", lambda: amp.GradScaler("tpu"), ValueError, r"GradScaler: .*'tpu'"),
    ("GradScaler scale an int", lambda: amp.GradScaler().scale(3), ValueError, r"scale: .*int 3"),
    ("GradScaler scale a dict", lambda: amp.GradScaler().scale({}), ValueError, r"scale: .*dict"),
    (
        "GradScaler step a str",
        lambda: _scaled()[2].step("sgd"),
        TypeError,
        r"GradScaler\.step: .*optimizer.*str 'sgd'",
    ),
    (
        "GradScaler unscale_ an int",
        lambda: _scaled()[2].unscale_(5),
        TypeError,
        r"GradScaler\.unscale_: .*int 5",
    ),
    (
        "GradScaler set_growth_factor 0.5",
        lambda: amp.GradScaler().set_growth_factor(0.5),
        ValueError,
        r"set_growth_factor: growth_factor .*0\.5",
    ),
    (
        "GradScaler set_growth_interval 0",
        lambda: amp.GradScaler().set_growth_interval(0),
        ValueError,
        r"set_growth_interval: growth_interval .*0",
    ),
    (
        "GradScaler load_state_dict of a list",
        lambda: amp.GradScaler().load_state_dict([1]),
        TypeError,
        r"GradScaler\.load_state_dict: .*list",
    ),
    # --- optimizers and schedulers
    ("SGD lr str", lambda: optim.SGD([_p(2)], lr="0.1"), TypeError, r"SGD: lr .*'0\.1'"),
    ("SGD lr nan", lambda: optim.SGD([_p(2)], lr=float("nan")), ValueError, r"SGD: lr .*nan"),
    ("SGD lr None", lambda: optim.SGD([_p(2)], lr=None), TypeError, r"SGD: lr .*None"),
    ("SGD momentum str", lambda: optim.SGD([_p(2)], momentum="x"), TypeError, r"SGD: momentum"),
    ("SGD dampening str", lambda: optim.SGD([_p(2)], dampening="x"), TypeError, r"SGD: dampening"),
    (
        "SGD weight_decay -1",
        lambda: optim.SGD([_p(2)], weight_decay=-1.0),
        ValueError,
        r"SGD: weight_decay .*-1",
    ),
    (
        "SGD nesterov without momentum",
        lambda: optim.SGD([_p(2)], nesterov=True),
        ValueError,
        r"SGD: Nesterov .*momentum=0",
    ),
    ("Adam beta1 1.0", lambda: optim.Adam([_p(2)], betas=(1.0, 0.9)), ValueError, r"Adam: beta1"),
    (
        "Adam betas a float",
        lambda: optim.Adam([_p(2)], betas=0.9),
        ValueError,
        r"Adam: betas .*0\.9",
    ),
    ("Adam eps str", lambda: optim.Adam([_p(2)], eps="x"), TypeError, r"Adam: eps .*'x'"),
    (
        "AdamW weight_decay -1",
        lambda: optim.AdamW([_p(2)], weight_decay=-1.0),
        ValueError,
        r"AdamW: weight_decay .*-1",
    ),
    ("SGD params None", lambda: optim.SGD(None), TypeError, r"SGD: params .*None"),
    ("SGD params a tensor", lambda: optim.SGD(_p(2)), TypeError, r"SGD: params .*Parameter"),
    (
        "SGD params floats",
        lambda: optim.SGD([1.0, 2.0]),
        TypeError,
        r"SGD can only optimize .*float",
    ),
    (
        "SGD duplicate params",
        lambda: (lambda p: optim.SGD([p, p]))(_p(2)),
        ValueError,
        r"SGD: parameter 1 .*more than once",
    ),
    (
        "Adam of an int tensor",
        lambda: optim.Adam([mt.ones(2, dtype=mt.int64)]),
        ValueError,
        r"Adam: parameter 0 has dtype .*int64",
    ),
    (
        "group without params",
        lambda: optim.SGD([{"lr": 0.1}]),
        ValueError,
        r"add_param_group: .*'params'",
    ),
    (
        "group lr negative",
        lambda: optim.Adam([{"params": [_p(2)], "lr": -1.0}]),
        ValueError,
        r"Adam: lr .*-1",
    ),
    (
        "add_param_group a list",
        lambda: optim.SGD([_p(2)], lr=0.1).add_param_group([_p(2)]),
        TypeError,
        r"SGD\.add_param_group: .*list",
    ),
    (
        "zero_grad set_to_none str",
        lambda: optim.SGD([_p(2)]).zero_grad(set_to_none="no"),
        TypeError,
        r"zero_grad: set_to_none",
    ),
    (
        "StepLR of a str",
        lambda: optim.lr_scheduler.StepLR("sgd", step_size=2),
        TypeError,
        r"StepLR: expected an Optimizer.*str",
    ),
    (
        "StepLR step_size 0",
        lambda: optim.lr_scheduler.StepLR(optim.SGD([_p(2)]), step_size=0),
        ValueError,
        r"StepLR: step_size .*0",
    ),
    (
        "CosineAnnealingLR T_max 0",
        lambda: optim.lr_scheduler.CosineAnnealingLR(optim.SGD([_p(2)]), T_max=0),
        ValueError,
        r"CosineAnnealingLR: T_max .*0",
    ),
    (
        "LambdaLR of an int",
        lambda: optim.lr_scheduler.LambdaLR(optim.SGD([_p(2)]), lr_lambda=3),
        TypeError,
        r"LambdaLR: lr_lambda .*int 3",
    ),
    (
        "LinearLR end_factor 2",
        lambda: optim.lr_scheduler.LinearLR(optim.SGD([_p(2)]), end_factor=2.0),
        ValueError,
        r"LinearLR: end_factor .*2\.0",
    ),
    (
        "clip_grad_norm_ norm_type str",
        lambda: nn.utils.clip_grad_norm_([_p(2)], 1.0, norm_type="x"),
        TypeError,
        r"clip_grad_norm_: norm_type .*'x'",
    ),
    (
        "clip_grad_value_ negative",
        lambda: nn.utils.clip_grad_value_([_p(2)], -1.0),
        ValueError,
        r"clip_grad_value_: clip_value .*-1",
    ),
    # --- layers and modules
    (
        "Linear of a list",
        lambda: nn.Linear(2, 2)([1.0, 2.0]),
        TypeError,
        r"linear: .*'input'.*list",
    ),
    ("Linear of a 0-d", lambda: nn.Linear(1, 2)(mt.tensor(1.0)), RuntimeError, r"linear: .*\(\)"),
    ("Embedding of a list", lambda: nn.Embedding(4, 2)([1, 2]), TypeError, r"embedding: .*list"),
    ("Dropout p str", lambda: nn.Dropout("0.5"), TypeError, r"Dropout: p .*'0\.5'"),
    (
        "dropout of ints",
        lambda: F.dropout(mt.ones(2, dtype=mt.int64)),
        RuntimeError,
        r"dropout: .*int64",
    ),
    ("LayerNorm eps -1", lambda: nn.LayerNorm(4, eps=-1.0), ValueError, r"LayerNorm: eps .*-1"),
    ("LayerNorm shape 4.5", lambda: nn.LayerNorm(4.5), TypeError, r"LayerNorm: .*4\.5"),
    (
        "BatchNorm1d momentum 2",
        lambda: nn.BatchNorm1d(3, momentum=2.0),
        ValueError,
        r"BatchNorm1d: momentum .*2",
    ),
    (
        "BatchNorm1d num_features 3.5",
        lambda: nn.BatchNorm1d(3.5),
        TypeError,
        r"BatchNorm1d: num_features .*3\.5",
    ),
    (
        "MaxPool2d kernel larger than input",
        lambda: nn.MaxPool2d(4)(mt.ones(1, 1, 3, 3)),
        RuntimeError,
        r"max_pool2d: the kernel \(4, 4\) is larger .*\(3, 3\)",
    ),
    ("MaxPool2d stride 0", lambda: nn.MaxPool2d(2, stride=0), ValueError, r"MaxPool2d: stride"),
    ("AvgPool2d kernel 0", lambda: nn.AvgPool2d(0), ValueError, r"AvgPool2d: kernel_size"),
    (
        "register_parameter dotted",
        lambda: nn.Module().register_parameter("a.b", _p(2)),
        KeyError,
        r"register_parameter: .*a\.b",
    ),
    (
        "register_buffer an int",
        lambda: nn.Module().register_buffer("b", 3),
        TypeError,
        r"register_buffer: 'b' .*int 3",
    ),
    (
        "Module.to an int dtype",
        lambda: nn.Linear(2, 2).to(mt.int64),
        TypeError,
        r"Module\.to: .*int64",
    ),
    (
        "Module.requires_grad_ str",
        lambda: nn.Linear(2, 2).requires_grad_("no"),
        TypeError,
        r"requires_grad_: requires_grad .*'no'",
    ),
    (
        "Module.apply an int",
        lambda: nn.Linear(2, 2).apply(3),
        TypeError,
        r"Module\.apply: fn .*int",
    ),
    (
        "forward hook an int",
        lambda: nn.Linear(2, 2).register_forward_hook(3),
        TypeError,
        r"register_forward_hook: hook .*int",
    ),
    (
        "Sequential index 3",
        lambda: nn.Sequential(nn.ReLU())[3],
        IndexError,
        r"Sequential: index 3 is out of range",
    ),
    (
        "ModuleList set an int",
        lambda: nn.ModuleList([nn.ReLU()]).__setitem__(0, 3),
        TypeError,
        r"add_module: int",
    ),
    (
        "load_state_dict of a list",
        lambda: nn.Linear(2, 2).load_state_dict([1, 2]),
        TypeError,
        r"load_state_dict: .*dict-like.*list",
    ),
    (
        "nn.init of a list",
        lambda: nn.init.uniform_([1.0]),
        TypeError,
        r"uniform_: argument 'tensor' .*list",
    ),
    ("GELU approximate junk", lambda: nn.GELU(approximate="x"), ValueError, r"GELU: .*'x'"),
    (
        "Embedding padding_idx 7 of 4",
        lambda: nn.Embedding(4, 2, padding_idx=7),
        ValueError,
        r"Embedding: padding_idx .*7",
    ),
    # --- losses
    (
        "cross_entropy a list target",
        lambda: F.cross_entropy(mt.ones(2, 3), [0, 1]),
        TypeError,
        r"cross_entropy: argument 'target' .*list",
    ),
    (
        "cross_entropy reduction avg",
        lambda: F.cross_entropy(mt.ones(2, 3), mt.tensor([0, 1]), reduction="avg"),
        ValueError,
        r"cross_entropy: reduction .*'avg'",
    ),
    (
        "cross_entropy 2-d target for 1-d input",
        lambda: F.cross_entropy(mt.ones(3), mt.tensor([[0]])),
        RuntimeError,
        r"nll_loss: .*\(3,\).*\(1, 1\)",
    ),
    (
        "cross_entropy float target of wrong shape",
        lambda: F.cross_entropy(mt.ones(2, 3), mt.tensor([0.0, 1.0])),
        RuntimeError,
        r"cross_entropy: .*float32.*\(2,\)",
    ),
    (
        "nll_loss float target",
        lambda: F.nll_loss(mt.ones(2, 3), mt.ones(2, 3)),
        TypeError,
        r"nll_loss: .*float32",
    ),
    (
        "nll_loss ignore_index float",
        lambda: F.nll_loss(mt.ones(2, 3), mt.tensor([0, 1]), ignore_index=0.5),
        TypeError,
        r"nll_loss: ignore_index .*0\.5",
    ),
    (
        "cross_entropy weight for 2 of 3 classes",
        lambda: nn.CrossEntropyLoss(weight=mt.ones(2))(mt.ones(2, 3), mt.tensor([0, 2])),
        RuntimeError,
        r"nll_loss: weight .*3 classes.*\(2,\)",
    ),
    (
        "mse_loss a list target",
        lambda: F.mse_loss(mt.ones(2), [1.0, 2.0]),
        TypeError,
        r"mse_loss: argument 'target' .*list",
    ),
    (
        "mse_loss reduction junk",
        lambda: nn.MSELoss(reduction="x")(mt.ones(2), mt.ones(2)),
        ValueError,
        r"MSELoss: reduction .*'x'",
    ),
    (
        "bce with an int target",
        lambda: F.binary_cross_entropy_with_logits(mt.ones(2), mt.tensor([1, 0])),
        RuntimeError,
        r"binary_cross_entropy_with_logits: .*int64",
    ),
    (
        "bce pos_weight shape",
        lambda: nn.BCEWithLogitsLoss(pos_weight=mt.ones(3))(mt.ones(2, 2), mt.ones(2, 2)),
        RuntimeError,
        r"binary_cross_entropy_with_logits \(pos_weight\): .*\(3,\)",
    ),
    # --- indexing and dims
    ("float index", lambda: _x23()[0.5], IndexError, r"getitem: index 0\.5 of type float"),
    ("str index", lambda: _x23()["a"], IndexError, r"getitem: index 'a' of type str"),
    (
        "float tensor index",
        lambda: _x23()[mt.tensor([0.0, 1.0])],
        IndexError,
        r"getitem: .*float32",
    ),
    ("float slice", lambda: _x23()[0.5:2], TypeError, r"getitem: slice .*start=0\.5"),
    (
        "setitem float index",
        lambda: _x23().__setitem__(0.5, 1.0),
        IndexError,
        r"setitem: index 0\.5",
    ),
    ("squeeze dim 0.5", lambda: _x23().squeeze(0.5), TypeError, r"squeeze: dim .*0\.5"),
    ("transpose dim 1.0", lambda: _x23().transpose(0, 1.0), TypeError, r"transpose: dim .*1\.0"),
    ("flatten dim 0.5", lambda: _x23().flatten(0.5), TypeError, r"flatten: dim .*0\.5"),
    ("softmax dim None", lambda: mt.softmax(_x23(), None), TypeError, r"softmax: dim .*None"),
    ("max dim str", lambda: mt.max(_x23(), "a"), TypeError, r"max: dim .*'a'"),
    ("max keepdim str", lambda: _x23().max(0, keepdim="x"), TypeError, r"max: keepdim .*'x'"),
    ("sum keepdim str", lambda: _x23().sum(0, keepdim="no"), TypeError, r"sum: keepdim .*'no'"),
    ("view_as a list", lambda: mt.ones(2).view_as([1, 2]), TypeError, r"view_as: .*list"),
    (
        "as_strided negative stride",
        lambda: _x23().as_strided((2,), (-1,)),
        RuntimeError,
        r"as_strided: .*stride \(-1,\)",
    ),
    # --- autograd
    (
        "backward with a list gradient",
        lambda: (mt.ones(2, requires_grad=True) * 2).backward([1.0, 1.0]),
        TypeError,
        r"backward: gradient .*list",
    ),
    (
        "grad of an unused input",
        lambda: (lambda a, b: mt.autograd.grad((a * 2).sum(), [b]))(
            mt.ones(2, requires_grad=True), mt.ones(3, requires_grad=True)
        ),
        RuntimeError,
        r"grad: .*input 0, shape \(3,\)",
    ),
    (
        "requires_grad set to a str",
        lambda: setattr(mt.ones(2), "requires_grad", "yes"),
        TypeError,
        r"requires_grad .*'yes'",
    ),
    (
        "register_hook an int",
        lambda: mt.ones(2, requires_grad=True).register_hook(3),
        TypeError,
        r"register_hook: hook .*int",
    ),
    (
        "detach_ a view",
        lambda: (mt.ones(2, requires_grad=True) * 1)[0:1].detach_(),
        RuntimeError,
        r"detach_: .*\(1,\)",
    ),
    (
        "post-accumulate hook an int",
        lambda: mt.ones(2, requires_grad=True).register_post_accumulate_grad_hook(3),
        TypeError,
        r"register_post_accumulate_grad_hook: hook .*int",
    ),
    ("set_grad_enabled str", lambda: mt.set_grad_enabled("yes"), TypeError, r"set_grad_enabled"),
    (
        "set_detect_anomaly str",
        lambda: mt.autograd.set_detect_anomaly("yes"),
        TypeError,
        r"set_detect_anomaly: mode .*'yes'",
    ),
    # --- serialization and jit
    ("save to an int", lambda: mt.save(mt.ones(2), 3), TypeError, r"save: .*int"),
    (
        "load a missing file",
        lambda: mt.load("/nonexistent/x.pt"),
        FileNotFoundError,
        r"load: .*x\.pt",
    ),
    ("load a directory", lambda: mt.load("/"), IsADirectoryError, r"load: '/' is a directory"),
    ("trace an int", lambda: mt.jit.trace(5, (mt.ones(2),)), TypeError, r"trace: .*int 5"),
    (
        "trace with too few inputs",
        lambda: mt.jit.trace(lambda a, b: a + b, (mt.ones(2),)),
        TypeError,
        r"trace: .*1 example input.*'b'",
    ),
    (
        "traced call with two inputs",
        lambda: mt.jit.trace(lambda a: a * 2, (mt.ones(2),))(mt.ones(2), mt.ones(2)),
        TypeError,
        r"takes 1 inputs \(a\), but 2 were given",
    ),
    (
        "traced Linear on wrong features",
        lambda: mt.jit.trace(nn.Linear(3, 2), (mt.ones(1, 3),))(mt.ones(1, 4)),
        RuntimeError,
        r"linear: .*\(1, 4\) has 4 features",
    ),
    # --- distributed and data
    (
        "all_reduce without a group",
        lambda: dist.all_reduce(mt.ones(2)),
        RuntimeError,
        r"all_reduce: .*init_process_group",
    ),
    ("get_rank without a group", lambda: dist.get_rank(), RuntimeError, r"get_rank: .*initialized"),
    (
        "init_process_group world_size 0",
        lambda: dist.init_process_group("local", "tcp://127.0.0.1:1", rank=0, world_size=0),
        ValueError,
        r"init_process_group: .*world_size=0",
    ),
    (
        "DistributedSampler rank 2 of 2",
        lambda: dist.DistributedSampler(list(range(10)), num_replicas=2, rank=2),
        ValueError,
        r"DistributedSampler: Invalid rank 2",
    ),
    (
        "DistributedSampler of an int",
        lambda: dist.DistributedSampler(5, num_replicas=2, rank=0),
        TypeError,
        r"DistributedSampler: .*int 5",
    ),
    (
        "DistributedSampler set_epoch str",
        lambda: dist.DistributedSampler(list(range(4)), num_replicas=2, rank=0).set_epoch("x"),
        TypeError,
        r"set_epoch: epoch .*'x'",
    ),
    (
        "DataLoader of an int",
        lambda: mt.data.DataLoader(5),
        TypeError,
        r"DataLoader: dataset .*int 5",
    ),
    (
        "DataLoader collate_fn an int",
        lambda: mt.data.DataLoader([1, 2], collate_fn=3),
        TypeError,
        r"DataLoader: collate_fn .*int",
    ),
    (
        "random_split fractions over 1",
        lambda: mt.data.random_split(list(range(10)), [0.5, 0.6]),
        ValueError,
        r"random_split: .*\[0\.5, 0\.6\]",
    ),
    ("Subset index 5 of 3", lambda: mt.data.Subset([1, 2, 3], [5]), IndexError, r"Subset: .*\[5\]"),
]


@pytest.mark.parametrize("call, kind, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(call, kind, pattern):
    with pytest.raises(kind) as caught:
        call()
    assert caught.match(pattern), str(caught.value)


def test_minitorch_distributed_is_reachable_after_import_minitorch():
    # as torch.distributed after `import torch`: not an AttributeError on first use (a fresh
    # interpreter, since this module's own import of minitorch.distributed would hide it)
    code = "import minitorch; print(minitorch.distributed.get_world_size.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "get_world_size"


# --- a failed call loses nothing ------------------------------------------------------------
def test_a_failed_optimizer_load_state_dict_loses_nothing():
    p = _p(2)
    opt = optim.Adam([p], lr=0.1)
    p.grad = mt.ones(2)
    opt.step()
    before = {k: np.array(v.numpy(), copy=True) for k, v in opt.state[p].items() if k != "step"}
    saved = opt.state_dict()
    saved["state"] = {7: saved["state"][0]}  # no parameter 7
    saved["param_groups"][0]["lr"] = 9.0
    with pytest.raises(ValueError, match=r"load_state_dict: state for parameter 7"):
        opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == 0.1
    for k, v in before.items():
        np.testing.assert_array_equal(opt.state[p][k].numpy(), v)


def test_optimizer_load_state_dict_refuses_wrongly_shaped_state():
    p = _p(2)
    opt = optim.Adam([p], lr=0.1)
    p.grad = mt.ones(2)
    opt.step()
    saved = opt.state_dict()
    saved["state"][0] = dict(saved["state"][0], exp_avg=mt.ones(5))
    with pytest.raises(ValueError, match=r"'exp_avg' of parameter 0 has shape \(5,\)"):
        opt.load_state_dict(saved)
    assert opt.state[p]["exp_avg"].shape == (2,)


def test_a_bad_lr_set_on_a_group_fails_there_and_the_step_still_works():
    a, b = _p(2), _p(2)
    opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    a.grad, b.grad = mt.ones(2), mt.ones(2)
    with pytest.raises(TypeError, match=r"SGD: lr must be a number, but got str 'x'"):
        opt.param_groups[1]["lr"] = "x"  # by hand, or a scheduler's lambda returning junk
    with pytest.raises(ValueError, match=r"SGD: momentum .*-1"):
        opt.param_groups[0]["momentum"] = -1.0
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0.0
    opt.step()  # the groups kept their valid values, so the step is the usual one
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.detach().numpy(), [0.9, 0.9])


def test_a_scheduler_returning_junk_fails_at_its_step():
    opt = optim.SGD([_p(2)], lr=0.1)
    sched = optim.lr_scheduler.LambdaLR(opt, lambda epoch: float("nan") if epoch else 1.0)
    with pytest.raises(ValueError, match=r"SGD: lr must be a finite number, but got lr=nan"):
        sched.step()
    assert opt.param_groups[0]["lr"] == 0.1


def test_a_failed_add_param_group_adds_nothing():
    p = _p(2)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [_p(2), p]})
    assert len(opt.param_groups) == 1


def test_a_failed_grad_scaler_load_state_dict_loses_nothing():
    scaler = amp.GradScaler(init_scale=8.0)
    before = scaler.state_dict()
    bad = dict(before, scale=4.0, growth_factor=0.5)
    with pytest.raises(ValueError, match=r"GradScaler\.load_state_dict: growth_factor .*0\.5"):
        scaler.load_state_dict(bad)
    assert scaler.state_dict() == before


def test_unscale_twice_leaves_the_gradients_unscaled_once():
    p, opt, scaler = _scaled()
    scaler.unscale_(opt)
    grad = p.grad.tolist()
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called"):
        scaler.unscale_(opt)
    assert p.grad.tolist() == grad == [2.0, 2.0]


def test_step_twice_steps_once():
    p, opt, scaler = _scaled()
    scaler.step(opt)
    after_one = p.tolist()
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
        scaler.step(opt)
    assert p.tolist() == after_one


def test_a_failed_module_load_state_dict_loads_nothing():
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    new = {k: v + 5 for k, v in model.state_dict().items()}
    new["1.weight"] = mt.ones(3, 1)  # the last key is the wrong shape
    with pytest.raises(RuntimeError, match=r"size mismatch for 1\.weight"):
        model.load_state_dict(new)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_module_to_an_int_dtype_moves_nothing():
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Module.to"):
        model.to(mt.int64)
    assert model.weight.dtype is mt.float32 and model.bias.dtype is mt.float32


def test_batch_norm_refuses_one_sample_before_counting_it():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"batch_norm: expected more than 1 value .*\(1, 3\)"):
        bn(mt.ones(1, 3))
    assert bn.num_batches_tracked.item() == 0
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x.sub_(mt.ones(2, 3)),
        lambda x: x.mul_(mt.ones(2)),
        lambda x: x.copy_(mt.ones(2, 2)),
        lambda x: x.__setitem__(0.5, 1.0),
    ],
    ids=["sub_ widening", "mul_ shapes", "copy_ shapes", "setitem float index"],
)
def test_a_failed_in_place_op_leaves_tensor_and_version_as_they_were(op):
    x = mt.arange(3.0)
    version = x._version
    with pytest.raises((RuntimeError, IndexError, TypeError)):
        op(x)
    assert x.tolist() == [0.0, 1.0, 2.0] and x._version == version


# --- what the shared checks accept stays accepted -----------------------------------------
def test_the_checks_keep_pytorch_s_valid_spellings():
    optim.SGD([_p(2)], lr=mt.tensor(0.1))  # a 0-d tensor lr, as PyTorch allows
    optim.Adam([_p(2)], betas=[0.9, 0.99])  # betas as a list
    amp.GradScaler(init_scale=1024, growth_interval=np.int64(5))  # ints, numpy ints
    assert mt.ones(2, 3).sum(np.int64(1)).shape == (2,)  # a numpy int dim
    assert mt.cat([mt.ones(2), mt.ones(2, dtype=mt.int64)]).dtype is mt.float32  # promotes
    assert (mt.ones(2, 2).double() @ mt.ones(2, 2).double()).dtype is mt.float64
    mt.manual_seed(-1)  # negative seeds wrap, as in PyTorch
    nn.utils.clip_grad_norm_([_p(2)], float("inf"))  # max_norm=inf: only measure the norm
    assert nn.Linear(0, 2)(mt.ones(1, 0)).shape == (1, 2)  # an empty layer, as in PyTorch
    assert mt.randperm(4, dtype=mt.int32).dtype is mt.int32


def test_a_corrupt_file_is_a_clear_error(tmp_path):
    buf = io.BytesIO()
    mt.save({"w": mt.ones(100)}, buf)
    with pytest.raises(mt.SerializationError, match=r"load: "):
        mt.load(_file(buf.getvalue()[:-200], tmp_path))
    with pytest.raises(mt.SerializationError, match=r"pickle"):
        mt.load(_file(b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", tmp_path))
