"""Differential tests of the losses real programs need (issue 40, round 2): BCELoss and
F.binary_cross_entropy (weight, reductions, the clamp of each log at -100), smooth_l1_loss
and SmoothL1Loss (beta, beta=0) and F.one_hot."""

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")


def same(mine, theirs, what, rtol=1e-7):
    a, b = np.asarray(mine.detach().numpy()), theirs.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype}, torch {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10, err_msg=what)


def pair(values, requires_grad=False):
    array = np.asarray(values, dtype=np.float64)
    return mt.tensor(array, requires_grad=requires_grad), torch.tensor(
        array, requires_grad=requires_grad
    )


def raises_like(call_mine, call_torch):
    with pytest.raises(Exception) as theirs:
        call_torch()
    with pytest.raises(type(theirs.value)):
        call_mine()


# 0 and 1 exactly: the clamp of log at -100 and the 1e-12 floor of the gradient
PROBS = [[0.0, 0.3, 1.0], [0.9, 0.5, 1e-30]]
TARGETS = [[1.0, 0.0, 0.0], [1.0, 0.25, 1.0]]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_torch(reduction, weighted):
    # catches: an unclamped log (inf at p=0), the gradient's floor missing (inf or nan),
    # weight ignored or broadcast wrongly, the target's gradient missing, BCELoss's options
    p, tp = pair(PROBS, True)
    t, tt = pair(TARGETS, True)
    w, tw = pair([1.0, 2.0, 3.0]) if weighted else (None, None)
    out = nn.functional.binary_cross_entropy(p, t, w, reduction=reduction)
    tout = torch.nn.functional.binary_cross_entropy(tp, tt, tw, reduction=reduction)
    same(out, tout, f"bce {reduction} weighted={weighted}")
    grad = np.arange(1.0, 7.0).reshape(2, 3) if reduction == "none" else 1.0
    out.backward(mt.tensor(grad))
    tout.backward(torch.tensor(grad))
    same(p.grad, tp.grad, "bce d/dinput")
    same(t.grad, tt.grad, "bce d/dtarget")
    module = nn.BCELoss(w, reduction=reduction)(p, t)
    same(module, torch.nn.BCELoss(tw, reduction=reduction)(tp, tt), "BCELoss")


def test_binary_cross_entropy_refuses_what_torch_refuses():
    # catches: probabilities outside [0, 1], shapes that differ, an integer target accepted
    for p, t in [([1.5], [1.0]), ([0.5, 0.5], [1.0]), ([0.5], [1])]:
        raises_like(
            lambda m=mt, p=p, t=t: m.nn.functional.binary_cross_entropy(m.tensor(p), m.tensor(t)),
            lambda m=torch, p=p, t=t: m.nn.functional.binary_cross_entropy(
                m.tensor(p), m.tensor(t)
            ),
        )


@pytest.mark.parametrize("beta", [1.0, 0.0, 0.5, 3.0])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_loss_matches_torch(beta, reduction):
    # catches: beta ignored, beta=0 dividing by zero (it is the L1 loss), the wrong side of
    # |d| = beta, SmoothL1Loss's options lost
    x, tx = pair([0.0, 0.5, 2.0, -3.0, 1.0, -0.2], True)
    y, ty = pair([0.0, 0.0, 0.0, 0.0, 0.0, 0.3])
    out = nn.functional.smooth_l1_loss(x, y, reduction=reduction, beta=beta)
    tout = torch.nn.functional.smooth_l1_loss(tx, ty, reduction=reduction, beta=beta)
    same(out, tout, f"smooth_l1 beta={beta} {reduction}")
    out.sum().backward()
    tout.sum().backward()
    same(x.grad, tx.grad, f"smooth_l1 grad beta={beta}")
    module = nn.SmoothL1Loss(reduction=reduction, beta=beta)(x, y)
    same(module, torch.nn.SmoothL1Loss(reduction=reduction, beta=beta)(tx, ty), "SmoothL1Loss")


def test_losses_run_in_float32_under_cpu_autocast_like_torch():
    # catches: the new losses missing from the autocast policy (bfloat16 losses)
    for m in (mt, torch):
        a, b = m.tensor([0.5, 0.2]).bfloat16(), m.tensor([1.0, 0.0]).bfloat16()
        with m.autocast("cpu", dtype=m.bfloat16):
            for loss in (m.nn.functional.binary_cross_entropy(a, b),
                         m.nn.functional.smooth_l1_loss(a, b)):  # fmt: skip
                assert str(loss.dtype).endswith("float32"), (m.__name__, loss.dtype)


@pytest.mark.parametrize(
    "values,num_classes", [([[0, 2], [1, 1]], -1), ([1], 4), ([], 3), ([3, 0], 4)]
)
def test_one_hot_matches_torch(values, num_classes):
    # catches: num_classes=-1 not inferred, an extra dim in the wrong place, a float result
    a, ta = mt.tensor(values, dtype=mt.long), torch.tensor(values, dtype=torch.long)
    same(nn.functional.one_hot(a, num_classes), torch.nn.functional.one_hot(ta, num_classes),
         f"one_hot({values}, {num_classes})")  # fmt: skip


@pytest.mark.parametrize("values,num_classes,dtype", [([-1, 2], -1, "long"), ([1, 2], -1, "float"),
                                                      ([3], 3, "long")])  # fmt: skip
def test_one_hot_refuses_what_torch_refuses(values, num_classes, dtype):
    # catches: negative classes wrapping around, float indices, a class past num_classes
    a = mt.tensor(values, dtype=getattr(mt, dtype))
    ta = torch.tensor(values, dtype=getattr(torch, dtype))
    raises_like(lambda: nn.functional.one_hot(a, num_classes),
                lambda: torch.nn.functional.one_hot(ta, num_classes))  # fmt: skip
