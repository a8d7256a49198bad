"""``minitorch.cuda.amp`` (PyTorch's deprecated ``torch.cuda.amp`` spellings) and CUDA mixed
precision on a machine without CUDA, side by side with torch (issue 25 items 1 and 3): the
old names warn with a FutureWarning, and a CUDA GradScaler or autocast region without CUDA
warns and disables itself instead of scaling by 65536."""

from __future__ import annotations

import warnings

import pytest

import minitorch as mt
import minitorch.cuda.amp as cuda_amp

torch = pytest.importorskip("torch")

no_cuda = pytest.mark.skipif(
    mt.cuda.is_available() or torch.cuda.is_available(), reason="checks the machine without CUDA"
)


def _caught(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = make()
    return made, [(w.category, str(w.message)) for w in caught]


def test_the_old_spellings_are_the_new_ones_and_say_so():
    for make, new in [
        (lambda: cuda_amp.GradScaler(enabled=False), mt.amp.GradScaler),
        (lambda: cuda_amp.autocast(enabled=False), mt.amp.autocast),
    ]:
        made, said = _caught(make)
        assert isinstance(made, new)
        assert [c for c, _ in said] == [FutureWarning]
        assert "is deprecated. Please use `minitorch.amp." in said[0][1]
    _, theirs = _caught(lambda: torch.cuda.amp.GradScaler(enabled=False))
    assert [c for c, _ in theirs] == [FutureWarning]
    assert mt.cuda.amp is cuda_amp  # reachable as an attribute, as torch.cuda.amp is


# catches: GradScaler("cuda") without CUDA staying enabled at 65536 (torch warns, disables
# itself, and scale(x) returns x)
@no_cuda
@pytest.mark.parametrize("spelling", ["amp", "cuda.amp"])
def test_a_cuda_scaler_without_cuda_disables_itself_as_torchs(spelling):
    ours_new = lambda: mt.amp.GradScaler("cuda")  # noqa: E731
    theirs_new = lambda: torch.amp.GradScaler("cuda")  # noqa: E731
    make = (
        (ours_new, theirs_new)
        if spelling == "amp"
        else (cuda_amp.GradScaler, torch.cuda.amp.GradScaler)
    )
    for build, T in zip(make, (mt, torch), strict=True):
        scaler, said = _caught(build)
        assert any(c is UserWarning and "CUDA is not available.  Disabling." in m for c, m in said)
        x = T.ones(2)
        assert scaler.is_enabled() is False and scaler.get_scale() == 1.0
        assert scaler.scale(x) is x and scaler.state_dict() == {}


@no_cuda
def test_a_cuda_autocast_region_without_cuda_is_off_as_torchs():
    for make, T in [
        (lambda: mt.amp.autocast("cuda"), mt),
        (lambda: torch.amp.autocast("cuda"), torch),
        (cuda_amp.autocast, mt),
        (torch.cuda.amp.autocast, torch),
    ]:
        region, said = _caught(make)
        assert any(c is UserWarning and "CUDA is not available" in m for c, m in said)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with region:
                enabled = mt.amp.is_autocast_enabled if T is mt else torch.is_autocast_enabled
                assert enabled("cuda") is False
