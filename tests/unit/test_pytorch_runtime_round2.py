"""What real programs need around the ops (issue 40, round 2): torch.cuda's seeding and
device functions without a GPU, RandomSampler's lazy draws, Linear's bias under bfloat16
autocast, save's refusals naming what to save instead, ScriptError as a RuntimeError."""

import io
import itertools

import numpy as np
import pytest

import minitorch as mt
from minitorch import SerializationError, jit, nn

torch = pytest.importorskip("torch", reason="PyTorch (the 'reference' extra) is not installed")

no_gpu = pytest.mark.skipif(
    mt.cuda.is_available() or torch.cuda.is_available(), reason="a GPU is here"
)


# --- torch.cuda without a GPU -------------------------------------------------------------
@no_gpu
def test_cuda_seeding_is_a_silent_no_op_without_a_gpu_as_in_torch():
    # catches: cuda.manual_seed_all missing (5 of the programs call it), a no-op that
    # refuses, a bad seed accepted
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(mt.cuda, name)(0) is None and getattr(torch.cuda, name)(0) is None
        for m in (mt, torch):
            with pytest.raises(ValueError):
                getattr(m.cuda, name)("a")
    mt.cuda.seed(), mt.cuda.seed_all()
    assert mt.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    assert mt.cuda.is_bf16_supported(including_emulation=False) is False
    mt.cuda.set_device(-1)  # a negative index is a no-op in both
    torch.cuda.set_device(-1)


@no_gpu
def test_cuda_calls_that_need_a_device_raise_without_one():
    # catches: a silent answer where PyTorch raises (a made-up capability, a set_device
    # that pretends), a wrong device type accepted
    for call in (lambda m: m.cuda.set_device(0), lambda m: m.cuda.get_device_capability(),
                 lambda m: m.cuda.get_device_capability(0)):  # fmt: skip
        with pytest.raises((AssertionError, AttributeError, RuntimeError)):
            call(torch)  # (torch's CPU build: "not compiled with CUDA", or a missing hook)
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            call(mt)
    for m in (mt, torch):
        with pytest.raises(ValueError):
            m.cuda.set_device("cpu")


# --- RandomSampler with replacement draws lazily -----------------------------------------
def test_random_sampler_with_replacement_draws_lazily_in_chunks():
    # catches: all num_samples indices drawn up front (10**10 of them: out of memory, as
    # minGPT's and makemore's loaders ask), a count that is off, indices out of range
    sampler = mt.utils.data.RandomSampler(range(7), replacement=True, num_samples=10**10)
    first = list(itertools.islice(iter(sampler), 100))
    assert len(sampler) == 10**10 and len(first) == 100 and set(first) <= set(range(7))
    for total in (1, 31, 32, 70):
        draws = list(mt.utils.data.RandomSampler(range(3), replacement=True, num_samples=total))
        assert len(draws) == total and set(draws) <= {0, 1, 2}
    mt.manual_seed(4)
    a = list(mt.utils.data.RandomSampler(range(5), replacement=True, num_samples=40))
    mt.manual_seed(4)
    assert a == list(mt.utils.data.RandomSampler(range(5), replacement=True, num_samples=40))


# --- autocast: the bias joins the accumulation ------------------------------------------
@pytest.mark.parametrize("shape", [(1, 2), (2,), (1, 1, 2)])
def test_linear_adds_its_bias_before_rounding_under_bfloat16_autocast(shape):
    # catches: the product rounded to bfloat16 before the bias is added (1 + 2**-9 rounds to
    # 1, and the -1 bias then leaves 0 where PyTorch gives 2**-9)
    outs = []
    for m in (mt, torch):
        layer = m.nn.Linear(2, 1)
        with m.no_grad():
            layer.weight.copy_(m.tensor([[1.0, 1.0]]))
            layer.bias.fill_(-1.0)
        x = m.tensor([1.0, 0.001953125]).reshape(shape)
        with m.autocast("cpu", dtype=m.bfloat16):
            out = layer(x)
        outs.append(out.float().detach().numpy())
        bf = m.nn.functional.linear(x.bfloat16(), layer.weight.bfloat16(), layer.bias.bfloat16())
        outs.append(bf.float().detach().numpy())
    assert outs[0].tolist() == outs[2].tolist() and outs[0].reshape(-1).tolist() == [0.001953125]
    assert outs[1].tolist() == outs[3].tolist()


# --- save refuses pickling, and says what to save instead -------------------------------
class Plain:
    pass


@pytest.mark.parametrize(
    "obj,instead",
    [
        (nn.Linear(2, 2), "state_dict"),  # torch.save(model)
        ({"model": nn.Linear(1, 1)}, "state_dict"),
        (lambda: mt.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1), "state_dict"),
        (np.ones(3), "from_numpy"),  # torch.save of numpy arrays
        ({"x": np.zeros((2, 2))}, "from_numpy"),
        (np.float32(1.0), "item()"),
        (print, "values"),
        ({1, 2}, "list"),
        (b"abc", "uint8 tensor"),
        (1 + 2j, "z.real"),
        (Plain(), "state_dict"),
        (mt.float32, "str("),
        (mt.device("cpu"), "str("),
        ({("a", "b"): 1}, "str(key)"),
        (mt.ones(2).bfloat16(), "t.float()"),
        ("cycle", "without the cycle"),
    ],
)
def test_every_refusal_to_save_names_what_to_save_instead(obj, instead):
    # catches: a refusal that only says no (torch.save(model), torch.save(array) are what
    # 7 of the programs do: the message must say to save a state_dict or tensors)
    if isinstance(obj, str) and obj == "cycle":
        obj = []
        obj.append(obj)
    elif callable(obj) and not isinstance(obj, nn.Module) and obj is not print:
        obj = obj()
    with pytest.raises(SerializationError) as err:
        mt.save(obj, io.BytesIO())
    assert "instead" in str(err.value) and instead in str(err.value), str(err.value)


def test_every_refusal_to_load_names_what_to_do_instead(tmp_path):
    # catches: loading a torch.save (zip) or pickle file refused without the way out
    for name, data in (("pickle.pt", b"\x80\x04K\x01."), ("zip.pt", b"PK\x03\x04rest")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(SerializationError, match="state_dict.*instead"):
            mt.load(tmp_path / name)
    mt.save({"w": mt.ones(1)}, tmp_path / "ok.mt")
    with pytest.raises(NotImplementedError, match="instead"):
        mt.load(tmp_path / "ok.mt", mmap=True)


# --- ScriptError ----------------------------------------------------------------------------
def test_script_error_is_a_runtime_error_as_torchs():
    # catches: `except RuntimeError` around torch.jit.script missing minitorch's error
    def uses_with(x):
        with mt.no_grad():
            y = x * 2
        return y

    with pytest.raises(RuntimeError, match="'with' statement is not supported") as err:
        jit.script(uses_with)
    assert isinstance(err.value, jit.ScriptError) and err.value.lineno > 0


# --- how minitorch spells itself standing in for torch ----------------------------------
def test_standing_in_for_torch_values_print_as_torch_and_code_keeps_its_name():
    # catches: dtypes or sizes printing minitorch. under as_torch (tutorials print torch.),
    # or a class renamed to torch's (tracebacks must show which framework ran)
    from minitorch import as_torch, dtypes, size

    before, sizes = dtypes.display_name, getattr(mt.Tensor, "_sizes", False)
    as_torch.use_torch_names()
    try:
        t = mt.ones(2, 3, dtype=mt.float64)
        tt = torch.ones(2, 3, dtype=torch.float64)
        for show in (str, repr):
            assert show(t.dtype) == show(tt.dtype)
            assert show(t.shape) == show(tt.shape)
        assert t.type() == tt.type() and repr(t) == repr(tt)
        assert type(t).__module__.startswith("minitorch") and mt.__name__ == "minitorch"
    finally:
        dtypes.display_name = before
        if not sizes:
            size.use_plain_shapes()
