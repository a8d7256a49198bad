"""Side-by-side sweep of the surface added since issue 25 and chapter 08 against PyTorch.

    python tests/sweeps/sweep_surface.py [-v] [-k WORD]

Runs every case of ``surface_cases.py`` with minitorch and with torch and counts:

- agree:   the same result (shape, dtype, values; NaN equal NaN), or both raise and ours
           names the op;
- wrong:   a different result, or no error where PyTorch raises;
- refused: we raise where PyTorch gives a result;
- vague:   both raise, but our message does not name the op;
- crash:   our error is a raw Python/numpy error (raised outside minitorch, or an
           AttributeError/KeyError/IndexError... of the implementation).

``-v`` prints each case that does not agree. Exit status 1 when any case is wrong or crashes.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import surface_cases  # noqa: E402

import minitorch  # noqa: E402

#: Error types that never come from a deliberate check of ours.
RAW = (AttributeError, ZeroDivisionError, AssertionError, NameError,
       UnboundLocalError, RecursionError, OverflowError, UnicodeError)  # fmt: skip
#: What Python and numpy say when code of ours fails without a check of its own.
RAW_MESSAGES = ("index out of range", "is not iterable", "has no attribute", "cannot unpack",
                "invalid literal", "values to unpack", "codec can't", "not subscriptable",
                "unsupported operand type(s)", "object cannot be interpreted",
                "out of bounds for int", "too large to convert", "ufunc")  # fmt: skip
PACKAGE = os.path.dirname(minitorch.__file__)


def plain(x: Any) -> Any:
    """A result as plain data: arrays (with their dtype's name), lists, numbers, strings."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "shape"):
        name = str(x.dtype).split(".")[-1]
        x = x.detach()
        if name == "bfloat16":
            x = x.float()
        return ("tensor", name, np.asarray(x.cpu().numpy()).copy())
    if isinstance(x, (tuple, list)):
        return [plain(v) for v in x]
    if isinstance(x, (np.generic,)):
        return x.item()
    if hasattr(x, "__class__") and type(x).__name__ == "Size":
        return list(x)
    return x


#: The relative size of one unit in the last place of the 16-bit floats.
HALF_ULP = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def _half_differs(xa: np.ndarray, xb: np.ndarray, ulp: float) -> str | None:
    """float16/bfloat16 results: rounding once from float32 gives PyTorch's values but for
    its float32 kernels' own last-bit differences from numpy's (a handful of values, 1 ulp
    apart). Rounding at each step of a formula differs in many (a third, typically)."""
    u, v = xa.astype(np.float64), xb.astype(np.float64)
    equal = (u == v) | (np.isnan(u) & np.isnan(v))
    with np.errstate(invalid="ignore"):  # inf - inf
        near = np.abs(u - v) <= ulp * np.abs(v) + 1e-30
    if equal.all() or (near.all() and (~equal).sum() <= max(1, equal.size // 50)):
        return None
    bad = int((~equal).sum())
    return f"{bad} of {equal.size} values differ (first: {xa[~equal][:3]} vs {xb[~equal][:3]})"


def same(a: Any, b: Any) -> str | None:
    """``None`` when ``a`` (ours) and ``b`` (torch's) agree, else what differs."""
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            return f"a tensor where torch gives {b!r}"
        (_, da, xa), (_, db, xb) = a, b
        if da != db:
            return f"dtype {da}, torch {db}"
        if xa.shape != xb.shape:
            return f"shape {xa.shape}, torch {xb.shape}"
        if da in HALF_ULP:
            return _half_differs(xa, xb, HALF_ULP[da])
        if xa.dtype.kind in "f":
            u, v = xa.astype(np.float64), xb.astype(np.float64)
            ok = np.isclose(u, v, rtol=1e-5, atol=1e-6, equal_nan=True)
            if not ok.all():
                bad = int(np.size(ok) - ok.sum())
                return f"{bad} of {ok.size} values differ (first: {xa[~ok][:3]} vs {xb[~ok][:3]})"
            return None
        return None if np.array_equal(xa, xb) else f"values {xa.tolist()} vs {xb.tolist()}"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{len(a)} items, torch {len(b)}"
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            why = same(u, v)
            if why:
                return f"[{i}]: {why}"
        return None
    if isinstance(a, float) and isinstance(b, float):
        return (
            None
            if (a == b or (a != a and b != b) or abs(a - b) <= 1e-9 * abs(b))
            else f"{a} vs {b}"
        )
    return None if a == b else f"{a!r} vs {b!r}"


def run(call: Any, L: Any) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", plain(call(L))
        except Exception as e:  # noqa: BLE001 - we classify every error
            return "raised", e


def names(e: BaseException, op: str) -> bool:
    """Does the message name the op (``add_``'s may say ``add``)?"""
    return op.lower().rstrip("_") in str(e).lower()


def is_raw(e: BaseException, op: str) -> bool:
    """Raised outside minitorch (numpy, builtins), or a type no check of ours raises
    (an IndexError counts only from outside: PyTorch raises it for a dim out of range)."""
    if isinstance(e, RAW):
        return True
    if any(raw in str(e) for raw in RAW_MESSAGES) and not names(e, op):
        return True
    frames = traceback.extract_tb(e.__traceback__)
    return (
        bool(frames)
        and not frames[-1].filename.startswith(PACKAGE)
        and frames[-1].name != "reference"
    )


def classify(case: tuple, torch: Any) -> tuple[str, str]:
    op, name, call = case[:3]
    kind, ours = run(call, minitorch)
    if len(case) == 4:
        ref_kind, theirs = run(lambda _: case[3](), None)
    else:
        ref_kind, theirs = run(call, torch)
    if kind == "raised":
        if is_raw(ours, op):
            return "crash", f"{type(ours).__name__}: {ours}"
        if ref_kind == "ok":
            return "refused", f"{type(ours).__name__}: {ours}"
        if not names(ours, op) or any(raw in str(ours) for raw in RAW_MESSAGES):
            return "vague", f"{type(ours).__name__}: {ours}"
        return "agree", ""
    if ref_kind == "raised":
        return "wrong", f"no error; torch: {type(theirs).__name__}: {str(theirs)[:120]}"
    why = same(ours, theirs)
    return ("wrong", why) if why else ("agree", "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="print what does not agree")
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    args = parser.parse_args(argv)
    import torch

    counts = dict.fromkeys(("agree", "wrong", "refused", "vague", "crash"), 0)
    for case in surface_cases.all_cases():
        if args.k.lower() not in case[1].lower():
            continue
        verdict, why = classify(case, torch)
        counts[verdict] += 1
        if args.verbose and verdict != "agree":
            print(f"{verdict:8} {case[1]}: {why[:300]}")
    print(f"{sum(counts.values())} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["wrong"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
