"""Autocast's CPU op lists are PyTorch's, for every op minitorch has (issue 19 item 7).

Each op runs under ``autocast("cpu", dtype)`` in both frameworks, once on float32 inputs
(what the lower-precision list casts down) and once on inputs already in the low dtype
(what the float32 list casts up); the output dtypes must agree. Skipped without torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt

torch = pytest.importorskip("torch")

F, MF = torch.nn.functional, mt.nn.functional

# name -> (torch's call, minitorch's call, input shapes); the same code runs on both
OPS = {
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4, 5)]),
    "linear": (F.linear, MF.linear, [(3, 4), (5, 4)]),
    "conv2d": (F.conv2d, MF.conv2d, [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "softmax": (lambda a: a.softmax(-1), lambda a: a.softmax(-1), [(3, 4)]),
    "log_softmax": (lambda a: a.log_softmax(-1), lambda a: a.log_softmax(-1), [(3, 4)]),
    "exp": (lambda a: a.exp(), lambda a: a.exp(), [(3,)]),
    "log": (lambda a: a.abs().log(), lambda a: a.abs().log(), [(3,)]),
    "sqrt": (lambda a: a.abs().sqrt(), lambda a: a.abs().sqrt(), [(3,)]),
    "pow": (lambda a: a**2, lambda a: a**2, [(3,)]),
    "sum": (lambda a: a.sum(), lambda a: a.sum(), [(3,)]),
    "mean": (lambda a: a.mean(), lambda a: a.mean(), [(3,)]),
    "add": (lambda a, b: a + b, lambda a, b: a + b, [(3,), (3,)]),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, [(3,), (3,)]),
    "tanh": (lambda a: a.tanh(), lambda a: a.tanh(), [(3,)]),
    "sigmoid": (lambda a: a.sigmoid(), lambda a: a.sigmoid(), [(3,)]),
    "relu": (lambda a: a.relu(), lambda a: a.relu(), [(3,)]),
    "gelu": (F.gelu, MF.gelu, [(3,)]),
    "layer_norm": (lambda a: F.layer_norm(a, (4,)), lambda a: MF.layer_norm(a, (4,)), [(3, 4)]),
    "mse_loss": (F.mse_loss, MF.mse_loss, [(3,), (3,)]),
    "bce_with_logits": (
        lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
        lambda a, b: MF.binary_cross_entropy_with_logits(a, b.sigmoid()),
        [(3,), (3,)],
    ),
    "cat": (lambda a, b: torch.cat([a, b]), lambda a, b: mt.cat([a, b]), [(3,), (3,)]),
    "stack": (lambda a, b: torch.stack([a, b]), lambda a, b: mt.stack([a, b]), [(3,), (3,)]),
}
LOW = ["bfloat16", "float16"]


def _run(name: str, low: str, inputs_low: bool) -> tuple[str, str]:
    torch_call, mt_call, shapes = OPS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    tt = [torch.tensor(a) for a in arrays]
    mm = [mt.tensor(a) for a in arrays]
    if inputs_low:  # every input low, or (cat, stack) the first only: promote lists widen
        count = 1 if name in ("cat", "stack") else len(tt)
        tt = [t.to(getattr(torch, low)) if i < count else t for i, t in enumerate(tt)]
        mm = [m.to(getattr(mt, low)) if i < count else m for i, m in enumerate(mm)]
    with torch.autocast("cpu", dtype=getattr(torch, low)):
        expected = str(torch_call(*tt).dtype).removeprefix("torch.")
    with mt.autocast("cpu", dtype=getattr(mt, low)):
        got = mt_call(*mm).dtype.name
    return expected, got


@pytest.mark.parametrize("low", LOW)
@pytest.mark.parametrize("inputs_low", [False, True], ids=["float32 inputs", "low inputs"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_an_ops_dtype_under_cpu_autocast_is_pytorchs(name: str, low: str, inputs_low: bool) -> None:
    expected, got = _run(name, low, inputs_low)
    assert got == expected, (
        f"{name} under autocast('cpu', dtype={low}) with "
        f"{'low' if inputs_low else 'float32'} inputs: PyTorch gives {expected}, minitorch {got}"
    )
