"""N ranks as N threads in one process: try (and grade) collective code without processes.

``run_ring(fn, world_size, args)`` runs ``fn(*args[r], rank, world_size, send, recv)`` on
one thread per rank, linked in a ring: ``send(array)`` goes to rank + 1, ``recv()`` takes
what rank - 1 sent. It returns every rank's result and what each rank sent, so a test can
check the traffic as well as the answer. ``run_group(fn, world_size)`` gives each thread
an ``all_reduce(tensor)`` (a sum, in place) instead. A rank that waits for a message that
never comes fails after ``timeout`` seconds with an error saying so, instead of hanging.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..creation import from_numpy


class SimulationError(RuntimeError):
    """A simulated rank failed, waited in vain, or left messages unreceived."""


@dataclass
class RingTraffic:
    """What each rank sent (element counts per message, and the messages) and left
    unreceived."""

    sent: list[list[int]] = field(default_factory=list)
    unreceived: list[int] = field(default_factory=list)
    messages: list[list[np.ndarray]] = field(default_factory=list)


def run_ring(
    fn: Callable[..., Any],
    world_size: int,
    args: Sequence[tuple],
    timeout: float = 2.0,
) -> tuple[list, RingTraffic]:
    """Run ``fn(*args[rank], rank, world_size, send, recv)`` for every rank on a thread ring."""
    inboxes = [queue.Queue() for _ in range(world_size)]
    traffic = RingTraffic(
        [[] for _ in range(world_size)], [0] * world_size, [[] for _ in range(world_size)]
    )

    def links(rank: int) -> tuple:
        right, left = (rank + 1) % world_size, (rank - 1) % world_size

        def send(array: Any) -> None:
            array = np.array(array, copy=True)
            traffic.sent[rank].append(int(array.size))
            traffic.messages[rank].append(array.copy())
            inboxes[right].put(array)

        def recv() -> Any:
            try:
                return inboxes[rank].get(timeout=timeout)
            except queue.Empty:
                raise SimulationError(
                    f"rank {rank} waited {timeout:g} s for a message from rank {left} that "
                    "never came: does every rank send before it receives, the same number "
                    "of times?"
                ) from None

        return send, recv

    results = _run_threads(world_size, lambda r: fn(*args[r], r, world_size, *links(r)))
    traffic.unreceived = [q.qsize() for q in inboxes]
    return results, traffic


class _SumGroup:
    """``all_reduce(tensor)`` for threads: every rank's tensor becomes the sum, in place."""

    def __init__(self, world_size: int, timeout: float) -> None:
        self.world_size = world_size
        self.timeout = timeout
        self.barrier = threading.Barrier(world_size, timeout=timeout)
        self.slots: list = [None] * world_size
        self.calls = [[] for _ in range(world_size)]

    def for_rank(self, rank: int) -> Callable[[Any], None]:
        def all_reduce(tensor: Any) -> None:
            self.calls[rank].append(tuple(tensor.shape))
            self.slots[rank] = tensor.detach().numpy().copy()
            self._wait(rank)
            shapes = {s.shape for s in self.slots}
            if len(shapes) != 1:
                raise SimulationError(
                    f"all_reduce: the ranks passed tensors of different shapes {sorted(shapes)}:"
                    " every rank must all-reduce the same tensors in the same order"
                )
            total = np.sum(self.slots, axis=0).astype(self.slots[rank].dtype)
            self._wait(rank)
            with no_grad():
                tensor.copy_(from_numpy(total))

        return all_reduce

    def _wait(self, rank: int) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise SimulationError(
                f"all_reduce on rank {rank}: the other ranks did not join within "
                f"{self.timeout:g} s: every rank must call all_reduce the same number of times"
            ) from None


def run_group(
    fn: Callable[..., Any], world_size: int, args: Sequence[tuple], timeout: float = 2.0
) -> tuple[list, list[list[tuple]]]:
    """Run ``fn(*args[rank], rank, world_size, all_reduce)`` per rank on threads; the
    results and the shapes each rank all-reduced."""
    group = _SumGroup(world_size, timeout)

    def body(rank: int) -> Any:
        try:
            return fn(*args[rank], rank, world_size, group.for_rank(rank))
        except BaseException:
            group.barrier.abort()  # the others stop waiting for this rank
            raise

    return _run_threads(world_size, body), group.calls


def _run_threads(world_size: int, body: Callable[[int], Any]) -> list:
    results: list = [None] * world_size
    errors: list = [None] * world_size

    def run(rank: int) -> None:
        try:
            results[rank] = body(rank)
        except BaseException as exc:  # reported below, naming the rank
            errors[rank] = exc

    threads = [
        threading.Thread(target=run, args=(r,), name=f"rank{r}", daemon=True)
        for r in range(world_size)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [(r, e) for r, e in enumerate(errors) if e is not None]
    if failed:
        # the root cause first: a rank's own error before another's wait for it
        failed.sort(key=lambda item: isinstance(item[1], SimulationError))
        rank, exc = failed[0]
        if isinstance(exc, SimulationError):
            raise exc
        exc.add_note(f"(raised on simulated rank {rank})")
        raise exc
    return results
