"""Autotuning, in the spirit of ``torch.backends.cudnn.benchmark``: the first time a shape
is seen, try each candidate kernel configuration on it, keep the best, and reuse that
choice for every later call with the same shape.

On a GPU "best" means fastest (timed with CUDA events). The simulator cannot time a GPU,
so there "best" means the least simulated global-memory traffic (elements read and
written): the cost a tiling choice changes most.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import simulator

#: (kind, shapes, dtype, device kind) -> the chosen candidate.
_cache: dict[tuple, tuple] = {}


def _key(kind: str, arrays: Sequence[Any]) -> tuple:
    device = "cpu" if isinstance(arrays[0], np.ndarray) else "cuda"
    return (kind, tuple(tuple(a.shape) for a in arrays), str(arrays[0].dtype), device)


def clear() -> None:
    """Forget every choice (the next call of each shape tunes again)."""
    _cache.clear()


def cached() -> dict[tuple, tuple]:
    """The choices made so far: key -> (name, function, keyword arguments)."""
    return dict(_cache)


def simulated_cost(func: Any, *args: Any, **kwargs: Any) -> float:
    """Global-memory elements read and written by ``func(*args)`` in the simulator."""
    with simulator.recording() as launches:
        func(*args, **kwargs)
    return float(sum(s.global_reads + s.global_writes for s in launches))


def gpu_time(func: Any, *args: Any, repeat: int = 3, **kwargs: Any) -> float:
    """Best of ``repeat`` GPU times of ``func(*args)`` in ms (after one warm-up call)."""
    import cupy

    func(*args, **kwargs)
    best = float("inf")
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        func(*args, **kwargs)
        stop.record()
        stop.synchronize()
        best = min(best, cupy.cuda.get_elapsed_time(start, stop))
    return best


def tune(kind: str, *arrays: Any, candidates: Sequence[tuple]) -> tuple:
    """The best of ``candidates`` (``(name, func, kwargs)``) for these arrays' shapes."""
    key = _key(kind, arrays)
    if key not in _cache:
        measure = simulated_cost if key[-1] == "cpu" else gpu_time
        costs = []
        for candidate in candidates:
            _, func, kwargs = candidate
            try:
                costs.append((measure(func, *arrays, **kwargs), candidate))
            except Exception:  # a configuration this device refuses (e.g. shared memory)
                continue
        if not costs:
            raise RuntimeError(f"autotune: no candidate {kind} kernel runs on shapes {key[1]}")
        _cache[key] = min(costs, key=lambda c: c[0])[1]
    return _cache[key]
