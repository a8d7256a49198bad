"""``minitorch.multiprocessing``, as ``torch.multiprocessing``: Python's ``multiprocessing``
(``Process``, ``Queue``, ``get_context``, ...) plus ``spawn`` with PyTorch's signature.

``spawn(fn, args=(), nprocs=1, join=True)`` runs ``fn(i, *args)`` in ``nprocs`` processes
and waits for them: the DDP tutorial's ``mp.spawn(train, args=(world_size,),
nprocs=world_size, join=True)``. As in PyTorch the workers print straight to the
terminal and ``spawn`` returns None; when one fails the others are stopped and the error
names its rank. It is chapter 06's ``minitorch.distributed.spawn`` underneath, which
forks where the OS can (so ``start_method`` changes nothing there).
"""

from __future__ import annotations

import multiprocessing as _multiprocessing
from collections.abc import Callable
from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports them too
from typing import Any

__all__ = [*_multiprocessing.__all__, "spawn"]


def spawn(
    fn: Callable[..., Any],
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> None:
    """Run ``fn(i, *args)`` for ``i`` in ``0 .. nprocs-1``, each in its own process, and
    wait for all of them (``join``); a worker's exception is raised here, naming it."""
    from .distributed.spawn import spawn as _spawn

    if not callable(fn):
        raise TypeError(f"spawn: fn must be callable, but got {type(fn).__name__} {fn!r:.40}")
    if not isinstance(args, tuple):
        raise TypeError(f"spawn: args must be a tuple, but got {type(args).__name__}")
    if start_method not in ("spawn", "fork", "forkserver"):
        raise ValueError(
            f"spawn: start_method must be 'spawn', 'fork' or 'forkserver', got {start_method!r}"
        )
    if not join:
        raise NotImplementedError(
            "spawn(join=False): minitorch's spawn waits for its workers; call it with "
            "join=True (the default)"
        )
    _spawn(fn, nprocs, args, timeout=float("inf"), capture_output=False)


def __getattr__(name: str) -> Any:
    if name == "ProcessRaisedException":  # what a failed worker raises: it names the rank
        from .distributed.spawn import WorkerFailed

        return WorkerFailed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
