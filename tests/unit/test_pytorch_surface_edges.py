"""Differential tests of the surface added since issue 25 and of chapter 08's API against
PyTorch, over edge arguments (issue 37): empty tensors, 0-d, negative dims and indices,
NaN/inf, dtypes, non-contiguous inputs, values out of a dtype's range, schedulers resumed
and chained, save/load of views and parameters, attention and the BPE tokenizer.

Every case of ``tests/sweeps/surface_cases.py`` runs with minitorch and with torch (or,
where PyTorch has no such API, against a reference): the results must agree (shape, dtype,
values; 16-bit floats rounded once from float32), and where PyTorch raises, minitorch must
raise too, with a message that names the op and is not a raw Python/numpy error.
``python tests/sweeps/sweep_surface.py`` runs the same cases and counts the verdicts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweeps"))

import surface_cases  # noqa: E402
import sweep_surface  # noqa: E402

#: Where minitorch deliberately differs, and why: (case name, verdict).
DELIBERATE = {
    # PyTorch's math kernel takes a negative dropout probability and drops nothing;
    # minitorch refuses it as F.dropout does
    "sdpa dropout_p=-0.1": "refused",
    # PyTorch's CPU take_along_dim does not check its indices: index 4 of a size-4 dim reads
    # the next row's element (out of the tensor for larger ones); minitorch refuses it
    "take_along_dim big": "refused",
}

CASES = surface_cases.all_cases()


@pytest.fixture(autouse=True)
def _plain_names():
    """Each case compares dtype names, whatever an earlier test left as the display name."""
    from minitorch import dtypes, size

    before = dtypes.display_name
    yield
    dtypes.display_name = before
    size.use_sizes()


@pytest.mark.parametrize("case", CASES, ids=[c[1] for c in CASES])
def test_agrees_with_pytorch_or_refuses_clearly(case):
    verdict, why = sweep_surface.classify(case, torch)
    assert verdict == DELIBERATE.get(case[1], "agree"), f"{case[1]}: {verdict}: {why}"


def test_the_cases_cover_each_kind():
    # the sweep's promise: several hundred inputs, every op of the surface among them
    ops = {case[0] for case in CASES}
    assert len(CASES) >= 500
    for op in ("gather", "scatter", "index_select", "embedding", "masked_fill", "fill_",
               "full", "mm", "mv", "dot", "bmm", "var", "std", "chunk", "split", "sort",
               "argsort", "topk", "stack", "hstack", "vstack", "dstack", "column_stack",
               "gelu", "silu", "elu", "leaky_relu", "softplus", "mish", "hardswish",
               "masked_scatter", "add_", "StepLR", "MultiStepLR",
               "ExponentialLR", "CosineAnnealingLR", "LinearLR", "LambdaLR", "save",
               "scaled_dot_product_attention", "decode", "encode", "train", "take",
               "take_along_dim", "index_add", "index_copy", "index_fill", "scatter_add",
               "tensor_split", "unbind", "msort"):  # fmt: skip
        assert op in ops, op
