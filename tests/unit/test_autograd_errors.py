"""Every autograd safety net fires, with PyTorch's kind of message."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import autograd
from minitorch.autograd import GradcheckError, gradcheck
from minitorch.function import Function


def leaf(values, dtype=minitorch.float64):
    return minitorch.tensor(values, dtype=dtype, requires_grad=True)


# --- a second backward through a freed graph ---------------------------------------------------
def test_second_backward_through_a_freed_graph():
    a = leaf([1.0, 2.0])
    y = (a.exp() * a).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert "Trying to backward through the graph a second time" in message
    assert "Specify retain_graph=True" in message


def test_a_second_backward_through_a_write_into_a_view_says_the_same():
    # catches: two messages for one error (CopySlices had a shorter one of its own); torch
    # gives its one message here too
    x, w = leaf([1.0, 2.0, 3.0]), leaf([2.0, 3.0])
    base = x * 1.0
    base[1:3].mul_(w)
    out = base.sum()
    out.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True") as info:
        out.backward()
    assert str(info.value).startswith("Trying to backward through the graph a second time")


def test_retain_graph_allows_a_second_backward():
    a = leaf([1.0, 2.0])
    y = (a.exp() * a).sum()
    y.backward(retain_graph=True)
    first = a.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * first)


def test_saved_tensors_cannot_be_read_after_backward():
    a = leaf([1.0])
    y = a.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = y.grad_fn.saved_tensors


def test_a_graph_that_saved_nothing_can_be_walked_twice():
    a = leaf([1.0])
    y = (a + 1).sum()  # like PyTorch: only saved tensors are freed
    y.backward()
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0])


# --- in-place change to a saved tensor ---------------------------------------------------------
def test_inplace_change_of_a_saved_input_is_detected():
    a = leaf([1.0, 2.0, 3.0])
    h = a * 1
    y = h * h  # saves h (version 0)
    h.add_(1)  # version 1
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    message = str(info.value)
    assert "modified by an inplace operation" in message
    assert "[float64 (3,)] is at version 1; expected version 0 instead" in message
    assert "MulBackward" in message


def test_inplace_change_of_a_saved_output_is_detected():
    a = leaf([1.0, 2.0, 3.0])
    y = a.exp()  # saves its output
    y[0] = 0.0
    y.add_(1)
    with pytest.raises(
        RuntimeError, match=r"\[float64 \(3,\)\] is at version 2; expected version 0"
    ):
        y.sum().backward()


def test_inplace_change_through_a_detached_alias_is_detected():
    a = leaf([1.0, 2.0])
    y = a.sigmoid()
    y.detach().zero_()  # shares the version counter, as in PyTorch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_change_of_an_unsaved_tensor_is_fine():
    a = leaf([1.0, 2.0])
    h = a * 2
    y = h + 1  # add saves nothing
    h.add_(5)
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])


# --- backward on a non-scalar without a gradient -----------------------------------------------
def test_backward_on_a_non_scalar_needs_a_gradient():
    a = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (a * 2).backward()


def test_backward_gradient_of_the_wrong_shape():
    a = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (a * 2).backward(minitorch.ones(3, dtype=minitorch.float64))


def test_backward_on_a_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        minitorch.tensor([1.0]).sum().backward()


# --- in-place ops on leaves that require grad --------------------------------------------------
@pytest.mark.parametrize(
    "write",
    [
        lambda w: w.add_(1),
        lambda w: w.mul_(2),
        lambda w: w.zero_(),
        lambda w: w.copy_(minitorch.zeros(2, dtype=minitorch.float64)),
        lambda w: w.__setitem__(0, 5.0),
        lambda w: w.__iadd__(1.0),
    ],
)
def test_inplace_on_a_leaf_that_requires_grad(write):
    w = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
        write(w)
    with minitorch.no_grad():
        write(w)  # allowed: this is how optimizers update parameters


def test_inplace_on_a_view_of_a_leaf():
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[0:1].fill_(3.0)


# --- flags --------------------------------------------------------------------------------------
def test_numpy_of_a_tensor_that_requires_grad():
    a = leaf([1.0])
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\) instead"):
        a.numpy()
    assert a.detach().numpy().tolist() == [1.0]


def test_only_floating_tensors_can_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        minitorch.tensor([1, 2], requires_grad=True)


def test_requires_grad_of_a_non_leaf_cannot_be_turned_off():
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False


def test_retain_grad_on_a_tensor_without_grad():
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        minitorch.tensor([1.0]).retain_grad()


# --- anomaly mode ------------------------------------------------------------------------------
def test_detect_anomaly_names_the_forward_op_of_a_nan_gradient():
    x = leaf([0.0, 1.0])
    with autograd.detect_anomaly():
        y = x.sqrt()  # d sqrt(x)/dx = inf at 0, and 0 * inf = nan below
        z = (y * 0).sum()
        with pytest.raises(RuntimeError) as info:
            z.backward()
    message = str(info.value)
    assert "Function 'SqrtBackward0' returned" in message
    assert "The forward op 'sqrt'" in message
    assert "y = x.sqrt()" in message  # the line of the forward call


def test_without_anomaly_mode_nans_pass_silently():
    x = leaf([0.0, 1.0])
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_detect_anomaly_points_at_an_error_inside_backward():
    class Broken(Function):
        @staticmethod
        def forward(ctx, x):
            return x.copy()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("bug in my backward")

    x = leaf([1.0])
    with autograd.detect_anomaly():
        y = Broken.apply(x)
        with pytest.raises(ValueError) as info:
            y.sum().backward()
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "The forward op 'broken'" in notes
    assert not autograd.is_anomaly_enabled()


# --- gradcheck ----------------------------------------------------------------------------------
class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # should be 2 * x


def test_gradcheck_reports_the_worst_element():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, (x,))
    message = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in message
    assert "d output[1, 1] / d input[1, 1]" in message  # the largest error: 4 vs 8
    assert "analytic 4 vs numerical 8" in message
    assert not gradcheck(WrongSquare.apply, (x,), raise_exception=False)


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="requires_grad=True"):
        gradcheck(lambda x: x * 2, (minitorch.tensor([1.0]),))


# --- custom Function mistakes --------------------------------------------------------------------
def test_backward_returning_the_wrong_number_of_gradients():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor):
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * 2  # forgot the None for `factor`

    with pytest.raises(
        RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"
    ):
        Scale.apply(leaf([1.0]), 2.0).sum().backward()


def test_backward_returning_a_gradient_of_the_wrong_shape():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return minitorch.ones(3, dtype=minitorch.float64)

    with pytest.raises(RuntimeError, match=r"returned an invalid gradient at index 0 - got \(3,\)"):
        Bad.apply(leaf([1.0, 2.0])).backward()


def test_backward_returning_a_numpy_array():
    class Raw(Function):
        @staticmethod
        def forward(ctx, x):
            return x.copy()

        @staticmethod
        def backward(ctx, grad):
            return grad.detach().numpy()

    with pytest.raises(TypeError, match="must return Tensors"):
        Raw.apply(leaf([1.0])).sum().backward()


def test_in_place_write_through_a_view_of_a_leaf_is_refused_clearly():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0:1].add_(1)


def test_a_function_without_backward():
    class ForwardOnly(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    y = ForwardOnly.apply(leaf([1.0]))
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="ForwardOnly has no backward"):
        y.sum().backward()
