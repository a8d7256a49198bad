"""DataLoader worker processes (``num_workers > 0``), as PyTorch runs them.

The main process draws the batches' indices (its sampler) and hands them out round-robin
to ``num_workers`` processes, keeping ``prefetch_factor`` batches in flight per worker;
each worker loads the samples, collates them and sends the batch back, and the main
process yields the batches in sampler order. A worker starts by seeding itself as
PyTorch's do: a ``base_seed`` drawn from the loader's generator (the default one if none
was given) once per epoch, and ``seed = base_seed + worker_id`` for minitorch's generator
and Python's ``random`` (numpy's from the two as well); then ``worker_init_fn(worker_id)``
runs, and ``get_worker_info()`` tells the worker's code who it is (None in the main
process). An exception in a worker is raised in the main process with the worker's
traceback; a worker that dies is reported by its exit code.

Workers are forked (Linux, macOS) so the dataset needs no pickling; batches come back
through a queue, pickled (``Tensor.__reduce_ex__``).
"""

from __future__ import annotations

import multiprocessing
import queue
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..random import manual_seed, rng_of

#: How long (seconds) the main process waits on the result queue before it checks that
#: its workers are still alive.
_POLL = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` (its id, the number of workers, its seed, its copy
    of the dataset); None in the main process."""
    return _info


class _Failure:
    """An exception raised in a worker, carried to the main process as text."""

    def __init__(self, kind: type, worker_id: int, where: str) -> None:
        self.kind = kind
        self.message = (
            f"Caught {kind.__name__} in DataLoader worker process {worker_id}{where}.\n"
            f"Original {traceback.format_exc()}"
        )

    def reraise(self) -> None:
        try:
            error = self.kind(self.message)
        except Exception:  # an exception class that wants other arguments
            error = RuntimeError(self.message)
        raise error


def _numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """numpy's seed for a worker, from the base seed and the worker id."""
    return [worker_id, base_seed & 0xFFFFFFFF, (base_seed >> 32) & 0xFFFFFFFF]


def _worker_loop(
    dataset: Any,
    tasks: Any,
    results: Any,
    collate_fn: Callable,
    batched: bool,
    base_seed: int,
    worker_id: int,
    num_workers: int,
    worker_init_fn: Callable | None,
) -> None:
    """A worker: seed, run ``worker_init_fn``, then load each batch it is sent."""
    global _info
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed % 2**64)
    np.random.seed(_numpy_seed(base_seed, worker_id))
    _info = WorkerInfo(worker_id, num_workers, seed, dataset)
    failed = None
    if worker_init_fn is not None:
        try:
            worker_init_fn(worker_id)
        except Exception as err:
            failed = _Failure(type(err), worker_id, " (in worker_init_fn)")
    while True:
        try:
            task = tasks.get()
        except (EOFError, KeyboardInterrupt):
            return
        if task is None:
            return
        number, index = task
        if failed is not None:
            results.put((number, failed))
            continue
        try:
            if batched:
                batch = collate_fn([dataset[i] for i in index])
            else:
                batch = collate_fn(dataset[index])
            results.put((number, batch))
        except Exception as err:
            results.put((number, _Failure(type(err), worker_id, "")))


class MultiProcessIter:
    """One epoch of a DataLoader with worker processes (or every epoch, with
    ``persistent_workers``): yields the batches in the order of the loader's sampler."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.num_workers = loader.num_workers
        ctx = _context(loader.multiprocessing_context)
        self.results = ctx.Queue()
        self.task_queues = []
        self.workers = []
        self.base_seed = _draw_base_seed(loader.generator)
        batched = loader.batch_sampler is not None
        for worker_id in range(self.num_workers):
            tasks = ctx.Queue()
            worker = ctx.Process(
                target=_worker_loop,
                args=(
                    loader.dataset,
                    tasks,
                    self.results,
                    loader.collate_fn,
                    batched,
                    self.base_seed,
                    worker_id,
                    self.num_workers,
                    loader.worker_init_fn,
                ),
                daemon=True,
            )
            worker.start()
            self.task_queues.append(tasks)
            self.workers.append(worker)
        self._start_epoch()

    def _start_epoch(self) -> None:
        loader = self.loader
        self.indices = iter(loader.batch_sampler if loader.batch_sampler else loader.sampler)
        # batches are numbered across epochs: a batch of an epoch left unfinished (a
        # ``break`` with persistent workers) that arrives later is recognised and dropped
        self.first = self.sent = self.received = getattr(self, "sent", 0)
        self.buffer: dict[int, Any] = {}
        self.exhausted = False
        for _ in range(loader.prefetch_factor * self.num_workers):
            self._send()

    def reset(self) -> MultiProcessIter:
        """The next epoch, on the same workers (``persistent_workers=True``)."""
        self._start_epoch()
        return self

    def _send(self) -> None:
        if self.exhausted:
            return
        try:
            index = next(self.indices)
        except StopIteration:
            self.exhausted = True
            return
        self.task_queues[self.sent % self.num_workers].put((self.sent, index))
        self.sent += 1

    def __iter__(self) -> MultiProcessIter:
        return self

    def __next__(self) -> Any:
        if self.received == self.sent:
            if not self.loader.persistent_workers:
                self.shutdown()
            raise StopIteration
        while self.received not in self.buffer:
            number, batch = self._get()
            if number >= self.first:
                self.buffer[number] = batch
        batch = self.buffer.pop(self.received)
        self.received += 1
        self._send()
        if isinstance(batch, _Failure):
            self.shutdown()
            batch.reraise()
        return batch

    def _get(self) -> tuple[int, Any]:
        timeout = self.loader.timeout
        waited = 0.0
        while True:
            try:
                return self.results.get(timeout=_POLL)
            except queue.Empty:
                waited += _POLL
                dead = [w for w in self.workers if not w.is_alive()]
                if dead:
                    self.shutdown()
                    codes = ", ".join(f"pid {w.pid}: exit code {w.exitcode}" for w in dead)
                    raise RuntimeError(
                        f"DataLoader worker ({codes}) exited unexpectedly; run with "
                        "num_workers=0 to see the error in the main process"
                    ) from None
                if timeout and waited >= timeout:
                    self.shutdown()
                    raise RuntimeError(
                        f"DataLoader timed out after {timeout} seconds waiting for a batch"
                    ) from None

    def shutdown(self) -> None:
        """Stop the workers (each gets None, then is joined; a stuck one is killed)."""
        for tasks in self.task_queues:
            try:
                tasks.put(None)
            except (OSError, ValueError):
                pass
        for worker in self.workers:
            worker.join(timeout=5.0)
            if worker.is_alive():
                worker.terminate()
        self.task_queues, self.workers = [], []

    def __del__(self) -> None:
        """Collected with workers left (an epoch left early, persistent workers): stop
        them at once; the queues may be going away too, so no goodbye is sent."""
        for worker in self.workers:
            if worker.is_alive():
                worker.terminate()
        for worker in self.workers:
            worker.join(timeout=1.0)
        self.workers = []


def _context(name: Any) -> Any:
    """Fork where the OS can (the dataset is inherited, not pickled), else spawn."""
    if name is not None:
        return multiprocessing.get_context(name) if isinstance(name, str) else name
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _draw_base_seed(generator: Any) -> int:
    """The epoch's base seed, drawn from ``generator`` (the default one when None) as
    PyTorch draws it: a 63-bit integer."""
    return int(rng_of(generator).integers(0, 2**63 - 1))
