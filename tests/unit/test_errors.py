"""Bad input gets an error that names the op and the offending shapes, dims or devices."""

from __future__ import annotations

import re

import pytest

import minitorch


def on_fake_gpu(t: minitorch.Tensor) -> minitorch.Tensor:
    """Make ``t`` report cuda:0 as its device, without a GPU (only the label changes)."""
    t.untyped_storage().device = minitorch.device("cuda:0")
    assert t.device == "cuda:0" and t.is_cuda
    return t


# --- broadcasting -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "run"),
    [
        ("add", lambda a, b: a + b),
        ("sub", lambda a, b: minitorch.sub(a, b)),
        ("mul", lambda a, b: a * b),
        ("div", lambda a, b: a / b),
        ("maximum", lambda a, b: minitorch.maximum(a, b)),
        ("eq", lambda a, b: a == b),
        ("lt", lambda a, b: a < b),
    ],
)
def test_broadcast_mismatch_names_the_op_and_both_shapes(name, run):
    a, b = minitorch.ones(2, 3), minitorch.ones(4)
    with pytest.raises(RuntimeError) as info:
        run(a, b)
    message = str(info.value)
    assert message.startswith(f"{name}:"), message
    assert "(2, 3)" in message and "(4,)" in message
    assert "broadcast" in message


def test_where_broadcast_mismatch():
    with pytest.raises(RuntimeError, match=r"^where: .*\(2,\).*\(3,\)"):
        minitorch.where(minitorch.ones(2) > 0, minitorch.ones(3), 0.0)


def test_in_place_shape_mismatch_names_the_op_and_shapes():
    x = minitorch.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"^copy_: .*\(4,\).*\(2, 3\)"):
        x.copy_(minitorch.ones(4))
    with pytest.raises(RuntimeError, match=r"^setitem: .*\(2,\).*\(3,\)"):
        x[0] = minitorch.ones(2)


# --- views --------------------------------------------------------------------------------
def test_impossible_view_says_why_and_suggests_reshape():
    x = minitorch.arange(6).view(2, 3).T
    with pytest.raises(RuntimeError) as info:
        x.view(6)
    message = str(info.value)
    assert message.startswith("view:")
    assert "(3, 2)" in message and "(1, 3)" in message and "(6,)" in message
    assert "contiguous" in message and ".reshape(" in message


def test_view_with_the_wrong_number_of_elements():
    with pytest.raises(RuntimeError, match=r"^view: shape \(4, 2\) is invalid for input of size 6"):
        minitorch.zeros(2, 3).view(4, 2)
    with pytest.raises(RuntimeError, match=r"^reshape: only one dimension can be inferred"):
        minitorch.zeros(2, 3).reshape(-1, -1)


def test_expand_to_an_incompatible_size():
    x = minitorch.zeros(3, 4)
    with pytest.raises(RuntimeError) as info:
        x.expand(2, 3, 5)
    message = str(info.value)
    assert message.startswith("expand:")
    assert "(2, 3, 5)" in message and "(3, 4)" in message and "5" in message
    with pytest.raises(RuntimeError, match=r"^expand: .*\(4,\).*\(3, 4\)"):
        x.expand(4)
    with pytest.raises(RuntimeError, match="^expand: -1"):
        x.expand(-1, 3, 4)


def test_permute_with_repeated_or_missing_dims():
    x = minitorch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"^permute: dims=\(0, 0, 1\) repeats a dim"):
        x.permute(0, 0, 1)
    with pytest.raises(RuntimeError, match=r"^permute: dims=\(2, 0, 2\) repeats a dim"):
        x.permute(-1, 0, 2)
    with pytest.raises(RuntimeError, match=r"^permute: the tensor has 3 dims but dims=\(1, 0\)"):
        x.permute(1, 0)
    with pytest.raises(IndexError, match="^permute: dim 3 is out of range"):
        x.permute(0, 1, 3)


def test_dims_out_of_range_name_the_op():
    x = minitorch.zeros(2, 3)
    cases = [
        ("transpose", lambda: x.transpose(0, 2)),
        ("squeeze", lambda: x.squeeze(2)),
        ("flatten", lambda: x.flatten(0, 5)),
        ("sum", lambda: x.sum(-3)),
        ("mean", lambda: x.mean(2)),
        ("max", lambda: x.max(2)),
        ("argmin", lambda: x.argmin(7)),
        ("cat", lambda: minitorch.cat([x, x], dim=2)),
        ("size", lambda: x.size(2)),
        ("stride", lambda: x.stride(-3)),
    ]
    for op, run in cases:
        with pytest.raises(IndexError, match=rf"^{op}: dim -?\d is out of range for a 2-d tensor"):
            run()
    # unsqueeze and stack may insert a dim at any of ndim + 1 places, as in PyTorch
    with pytest.raises(IndexError, match=r"^stack: dim 4 is out of range .*\(expected -3 to 2\)"):
        minitorch.stack([x, x], dim=4)
    with pytest.raises(
        IndexError, match=r"^unsqueeze: dim 4 is out of range .*\(expected -3 to 2\)"
    ):
        x.unsqueeze(4)


def test_as_strided_out_of_storage_bounds():
    x = minitorch.arange(12)
    with pytest.raises(RuntimeError) as info:
        x.as_strided((3, 5), (4, 1))
    message = str(info.value)
    assert message.startswith("as_strided: size (3, 5), stride (4, 1)")
    assert "position 12, past the end of a storage of 12 elements" in message
    assert x.as_strided((3, 4), (4, 1)).tolist()[-1] == [8, 9, 10, 11]  # the last one fits
    with pytest.raises(RuntimeError, match=r"^as_strided: .*offset 10.*position 13"):
        x.as_strided((2, 2), (2, 1), 10)
    with pytest.raises(RuntimeError, match="^as_strided: size .* differ in length"):
        x.as_strided((2, 2), (1,))
    with pytest.raises(RuntimeError, match="^as_strided: .*non-negative"):
        x.as_strided((2,), (-1,))
    with pytest.raises(RuntimeError, match="^as_strided: .*non-negative"):
        x.as_strided((2,), (1,), -1)


def test_writing_into_an_expanded_tensor_is_refused():
    # PyTorch: "unsupported operation: more than one element of the written-to tensor refers
    # to a single memory location. Please clone() the tensor before performing the operation."
    base = minitorch.zeros(1)
    e = base.expand(3)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.add_(minitorch.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="single memory location"):
        e.fill_(1.0)
    assert base.tolist() == [0.0]


# --- indexing -----------------------------------------------------------------------------
def test_index_out_of_bounds_names_the_dim_and_size():
    x = minitorch.zeros(3, 4)
    with pytest.raises(
        IndexError, match=r"^getitem: index 3 is out of bounds for dim 0 with size 3"
    ):
        x[3]
    with pytest.raises(
        IndexError, match=r"^getitem: index -5 is out of bounds for dim 1 with size 4"
    ):
        x[0, -5]
    with pytest.raises(
        IndexError, match=r"^getitem: too many indices for a tensor of shape \(3, 4\)"
    ):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]


def test_advanced_index_out_of_bounds_names_the_op():
    x = minitorch.zeros(3, 4)
    with pytest.raises(IndexError) as info:
        x[[0, 5]]
    message = str(info.value)
    assert message.startswith("getitem:"), message
    assert "5" in message and "3" in message
    with pytest.raises(IndexError, match="^getitem:"):
        x[minitorch.tensor([1]), minitorch.tensor([4])]


def test_advanced_index_with_an_empty_list_gives_an_empty_tensor():
    x = minitorch.arange(12).view(3, 4)
    picked = x[[]]  # PyTorch: tensor([], size=(0, 4), dtype=torch.int64)
    assert picked.shape == (0, 4) and picked.dtype is minitorch.int64


def test_negative_slice_steps_are_refused_like_pytorch():
    # PyTorch raises ValueError("step must be greater than zero")
    with pytest.raises(ValueError, match="step must be positive") as info:
        minitorch.arange(5)[::-1]
    assert str(info.value).count("getitem:") == 1, str(info.value)


# --- compute ops --------------------------------------------------------------------------
def test_matmul_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError) as info:
        minitorch.ones(2, 3) @ minitorch.ones(2, 3)
    message = str(info.value)
    assert message.startswith("matmul:") and "(2, 3)" in message and message.count("(2, 3)") == 2
    with pytest.raises(RuntimeError, match=r"^matmul: .*\(3,\).*\(4,\)"):
        minitorch.ones(3) @ minitorch.ones(4)
    with pytest.raises(RuntimeError, match=r"^matmul: .*\(2, 3, 4\).*\(5, 4, 6\)"):
        minitorch.ones(2, 3, 4) @ minitorch.ones(5, 4, 6)  # batch dims do not broadcast
    with pytest.raises(RuntimeError, match=r"^matmul: both arguments need at least 1 dim"):
        minitorch.matmul(minitorch.tensor(2.0), minitorch.ones(3))


def test_cat_and_stack_mismatch_name_the_shapes():
    a, b = minitorch.zeros(2, 3), minitorch.zeros(3, 2)
    with pytest.raises(RuntimeError) as info:
        minitorch.cat([a, b], dim=1)
    message = str(info.value)
    assert message.startswith("cat:") and "(2, 3)" in message and "(3, 2)" in message
    assert "dim 1" in message
    with pytest.raises(RuntimeError, match=r"^cat: .*\(2, 3\).*\(3,\)"):
        minitorch.cat([a, minitorch.zeros(3)])
    with pytest.raises(RuntimeError, match="^cat: expected a non-empty"):
        minitorch.cat([])
    with pytest.raises(RuntimeError, match=r"^stack: .*\(2, 3\).*\(3, 2\)"):
        minitorch.stack([a, b])
    with pytest.raises(RuntimeError, match="^stack: expected a non-empty"):
        minitorch.stack([])


def test_reductions_of_empty_tensors():
    with pytest.raises(
        RuntimeError, match=r"^max: cannot reduce an empty tensor \(shape \(0, 3\)\)"
    ):
        minitorch.zeros(0, 3).max()
    with pytest.raises(RuntimeError, match=r"^min: cannot reduce an empty tensor"):
        minitorch.zeros(0).min(0)


def test_item_and_bool_of_many_elements():
    with pytest.raises(RuntimeError, match=r"^item: a Tensor with 6 elements .*\(2, 3\)"):
        minitorch.zeros(2, 3).item()
    with pytest.raises(RuntimeError, match="2 elements is ambiguous"):
        bool(minitorch.zeros(2))
    with pytest.raises(TypeError, match="integer tensors of a single element"):
        [1, 2][minitorch.tensor(1.0)]


def test_bad_data_and_dtypes():
    with pytest.raises(ValueError, match="^tensor: cannot make a tensor from list"):
        minitorch.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="^tensor: .*mixed or unsupported"):
        minitorch.tensor(["a", 1, None])
    with pytest.raises(TypeError, match="is not a dtype"):
        minitorch.zeros(2, dtype="fancy")
    with pytest.raises(TypeError, match="complex128"):
        minitorch.tensor(minitorch.zeros(2).numpy().astype(complex))


# --- devices ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "run"),
    [
        ("add", lambda g, c: g + c),
        ("add", lambda g, c: c + g),
        ("mul", lambda g, c: minitorch.mul(g, c)),
        ("matmul", lambda g, c: g @ c),
        ("cat", lambda g, c: minitorch.cat([c, g])),
        ("stack", lambda g, c: minitorch.stack([c, g])),
        ("where", lambda g, c: minitorch.where(c > 0, g, c)),
        ("maximum", lambda g, c: g.maximum(c)),
    ],
)
def test_mixing_devices_names_both_devices(name, run):
    gpu = on_fake_gpu(minitorch.ones(2))
    cpu = minitorch.ones(2)
    with pytest.raises(RuntimeError) as info:
        run(gpu, cpu)
    message = str(info.value)
    assert message.startswith(f"{name}:"), message
    assert "cuda:0" in message and re.search(r"\bcpu\b", message)
    assert "same device" in message


def test_writing_across_devices_names_both_devices():
    gpu = on_fake_gpu(minitorch.ones(2))
    cpu = minitorch.zeros(2)
    for op, run in (
        ("copy_", lambda: cpu.copy_(gpu)),
        ("setitem", lambda: cpu.__setitem__(0, gpu[0])),
    ):
        with pytest.raises(RuntimeError, match=rf"^{op}: expected all tensors on the same device"):
            run()
    assert cpu.tolist() == [0.0, 0.0]


def test_numpy_of_a_cuda_tensor_says_to_copy_to_the_host():
    gpu = on_fake_gpu(minitorch.ones(2))
    with pytest.raises(TypeError, match=r"^numpy: can't convert a cuda:0 tensor.*\.cpu\(\)"):
        gpu.numpy()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_cuda_without_a_gpu_is_a_clear_error():
    x = minitorch.ones(2)
    for run in (
        lambda: x.to("cuda"),
        lambda: x.cuda(),
        lambda: minitorch.zeros(2, device="cuda"),
        lambda: minitorch.tensor([1.0], device="cuda:0"),
    ):
        with pytest.raises(RuntimeError, match=r"cuda:0 is not available.*cupy.*device='cpu'"):
            run()
    assert minitorch.cuda.device_count() == 0
