"""Fair wall-clock timing for side-by-side benchmarks on a shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_times(fns: dict[str, Callable[[], object]], repeat: int, rounds: int = 4) -> dict:
    """Best wall time (seconds) of each function, over ``rounds`` turns of ``repeat`` runs.

    Taking turns means every contender sees the same background load, and the fastest run
    is the one least disturbed by other processes. Each turn starts with an untimed run,
    because the previous contender's thread pool (OpenMP, OpenBLAS) may still be spinning.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            for _ in range(max(1, repeat // rounds)):
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
    return best
