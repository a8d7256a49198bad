"""repr() of large tensors, side by side in one process: minitorch vs PyTorch (CPU).

Above 1,000 elements both print only the first and last 3 items of each dimension, so a
repr should cost what it prints, whatever the tensor's size. Measured for float32 tensors
of 10^3 (printed in full), 10^6 and 10^7 elements (summarised), all standard normal.

Run:  python benchmarks/bench_printing.py [--repeat N]
PyTorch is optional; without it the PyTorch columns are skipped. Target: within 3x of
PyTorch at every size.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import best_times

import minitorch as mt

SHAPES = {"10^3": (1000,), "10^6": (1000, 1000), "10^7": (10_000, 1000)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per measurement")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: its columns are skipped (pip install torch)\n")

    rng = np.random.default_rng(0)
    print("repr() of a float32 tensor (standard normal)")
    for label, shape in SHAPES.items():
        values = rng.standard_normal(shape, dtype=np.float32)
        contenders = {"minitorch": mt.from_numpy(values)}
        if torch is not None:
            contenders["torch"] = torch.from_numpy(values)
            # Same text first: a fast wrong answer is no answer.
            ours, theirs = repr(contenders["minitorch"]), repr(contenders["torch"])
            assert ours == theirs, f"{label}: minitorch and PyTorch print differently"
        fns = {name: (lambda t=t: repr(t)) for name, t in contenders.items()}
        t = best_times(fns, args.repeat, rounds=min(4, args.repeat))
        line = f"  {label} {str(shape):<14} minitorch {t['minitorch'] * 1e3:8.3f} ms"
        if torch is not None:
            ratio = t["minitorch"] / t["torch"]
            line += f"   PyTorch {t['torch'] * 1e3:8.3f} ms   ratio {ratio:5.2f}x"
        print(line)
    print("target: minitorch / PyTorch <= 3x at every size")


if __name__ == "__main__":
    main()
