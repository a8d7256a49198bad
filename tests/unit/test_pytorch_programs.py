"""Real PyTorch programs run on minitorch (``tests/programs/``): each prints the same as it
does on torch (see ``tests/programs/run.py`` for how outputs are compared).

torch's outputs come from ``tests/programs/torch_outputs.json`` for every program whose
source matches its recording; torch runs only for programs changed since (kept in
pytest's cache; ``python tests/programs/run.py --record`` rewrites the recording), and
without torch installed those are skipped. The minitorch side always runs: forks of one
process, two programs at a time.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
_spec = importlib.util.spec_from_file_location("pytorch_programs_run", PROGRAMS / "run.py")
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run  # (dataclasses look their module up)
_spec.loader.exec_module(run)
HAVE_TORCH = importlib.util.find_spec("torch") is not None

#: Programs that do not yet run the same, and why; each is an expected failure (strict: one
#: that starts passing must leave this list).
KNOWN: dict[str, str] = {}

ALL = run.discover()
RECORDED = run.recorded(ALL)


@pytest.fixture(scope="module")
def verdicts(request: pytest.FixtureRequest) -> dict:
    cache = getattr(request.config, "cache", None)
    known = dict(RECORDED)
    for p in ALL:
        hit = cache.get(f"pytorch_programs/{p.name}/{p.key}", None) if cache else None
        if p.name not in known and hit is not None:
            known[p.name] = hit
    programs = [p for p in ALL if p.name in known or HAVE_TORCH]
    results = run.run_corpus(programs, jobs=2, timeout=180.0, torch_cache=known)
    if cache is not None:
        for p in programs:
            if p.name not in RECORDED and known[p.name]["rc"] == 0:
                cache.set(f"pytorch_programs/{p.name}/{p.key}", known[p.name])
    return results


def test_the_corpus_is_all_here_and_recorded() -> None:
    # catches: a program lost or misnamed (run.py finds programs by their header), and a
    # program changed without re-recording torch's output (then torch runs in every test run)
    assert len(ALL) >= 46, [p.name for p in ALL]
    assert set(KNOWN) <= {p.name for p in ALL}, sorted(set(KNOWN) - {p.name for p in ALL})
    stale = sorted(p.name for p in ALL if p.name not in RECORDED)
    assert not stale, f"re-record torch's outputs (tests/programs/run.py --record): {stale}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(p.name, marks=pytest.mark.xfail(reason=KNOWN[p.name], strict=True))
        if p.name in KNOWN
        else p.name
        for p in ALL
    ],
)
def test_program_prints_what_torch_prints(name: str, verdicts: dict) -> None:
    if name not in verdicts:
        pytest.skip(f"{name} changed since torch_outputs.json was recorded, and torch is absent")
    status, reason = verdicts[name]
    assert status != "torch-fail", f"{name} does not run on torch itself: {reason}"
    assert status == "same", f"{name}: {status}: {reason}"


def test_compare_masks_what_it_should() -> None:
    # catches: a comparison that accepts anything, or one that trips on object addresses
    exact = run.Program("x", PROGRAMS / "x.py", "exact", False)
    masked = run.Program("x", PROGRAMS / "x.py", "masked", False)
    assert run.compare(exact, "<Node object at 0x7f01>", "<Node object at 0x55aa>") is None
    assert run.compare(exact, "tensor([1.0000, 2.0000])", "tensor([1.0001, 2.0000])") is None
    assert run.compare(exact, "tensor([1.0, 2.0])", "tensor([1.5, 2.0])") is not None
    assert run.compare(exact, "AddBackward0", "AddBackward") is not None
    assert run.compare(masked, "loss 0.25 (3, 4)", "loss -1.75 (3, 4)") is None
    assert run.compare(masked, "loss 0.25 (3, 4)", "loss 0.25 (3, 5)") is not None
    assert run.compare(masked, "a\nb", "a") is not None
    # a number with a unit of seconds is a number (masked timings), not part of the text
    assert run.compare(masked, "| time:  0.19s | 12.5ms |", "| time:  1.73s | 9.0ms |") is None
    assert run.compare(exact, "took 3s", "took 4s") is not None
