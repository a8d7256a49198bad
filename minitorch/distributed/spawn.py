"""``spawn(fn, nprocs)``: run ``fn(rank, *args)`` in N worker processes, from a notebook.

Like ``torch.multiprocessing.spawn``: each worker gets ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``, so ``init_process_group()`` works with
no arguments. Workers are forked where the OS can (Linux, macOS), so ``fn`` may be defined
in the notebook itself; on Windows ``fn`` must live in an importable ``.py`` file.

What a worker prints is captured and shown by the caller after the workers finish, each
line prefixed with its rank, in rank order (so a notebook's output does not depend on
which process was faster). ``spawn`` returns the workers' return values, by rank. When a
worker raises or dies, the others are stopped and :class:`WorkerFailed` names the rank
and shows its traceback.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import Any


class WorkerFailed(RuntimeError):
    """A worker raised or died; ``rank`` is the first one that did."""

    def __init__(self, message: str, rank: int) -> None:
        super().__init__(message)
        self.rank = rank


#: The variables that size the BLAS/OpenMP thread pools of numpy (and torch).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def threads_per_worker(nprocs: int) -> int:
    """CPU cores per worker: N workers each running a BLAS pool as wide as the machine
    oversubscribe it, and the spinning pools starve the communication threads (torchrun
    sets ``OMP_NUM_THREADS=1`` for the same reason)."""
    return max(1, (os.cpu_count() or 1) // nprocs)


def thread_limits(nprocs: int) -> dict[str, str]:
    """Environment variables capping each worker's thread pools (those not set already)."""
    n = str(threads_per_worker(nprocs))
    return {name: n for name in THREAD_VARIABLES if name not in os.environ}


def _limit_threads(nprocs: int) -> None:
    """In a forked worker the BLAS pool already exists: resize it (needs threadpoolctl,
    which scikit-learn brings along)."""
    if all(name in os.environ for name in THREAD_VARIABLES):
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(threads_per_worker(nprocs))


def free_port(addr: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((addr, 0))
        return sock.getsockname()[1]


def spawn(
    fn: Callable[..., Any],
    nprocs: int,
    args: tuple = (),
    *,
    timeout: float = 120.0,
    capture_output: bool = True,
    env: dict | None = None,
) -> list:
    """Run ``fn(rank, *args)`` for rank 0..nprocs-1 in worker processes; their results."""
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive int, got {nprocs!r}")
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods:
        ctx = multiprocessing.get_context("fork")
    elif getattr(fn, "__module__", "") == "__main__":
        raise RuntimeError(
            "spawn: this OS cannot fork, so the worker function must be importable: put "
            f"{getattr(fn, '__name__', fn)!r} in a .py file and import it"
        )
    else:
        ctx = multiprocessing.get_context("spawn")
    base = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(nprocs),
        "LOCAL_WORLD_SIZE": str(nprocs),
        **(env or {}),
    }
    workers = []
    for rank in range(nprocs):
        parent, child = ctx.Pipe(duplex=False)
        worker_env = {**base, "RANK": str(rank), "LOCAL_RANK": str(rank)}
        proc = ctx.Process(
            target=_worker, args=(fn, rank, args, worker_env, child, capture_output), daemon=True
        )
        proc.start()
        child.close()
        workers.append((proc, parent))
    try:
        replies = _collect(workers, time.monotonic() + timeout, timeout)
    finally:
        _stop(workers)
    if capture_output:
        for rank, reply in enumerate(replies):
            _show(rank, reply.get("stdout", ""), sys.stdout)
            _show(rank, reply.get("stderr", ""), sys.stderr)
    return [reply["result"] for reply in replies]


def _worker(
    fn: Callable[..., Any], rank: int, args: tuple, env: dict, conn: Any, capture: bool
) -> None:
    _limit_threads(int(env["WORLD_SIZE"]))
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    reply: dict = {}
    try:
        if capture:
            with redirect_stdout(out), redirect_stderr(err):
                reply["result"] = fn(rank, *args)
        else:
            reply["result"] = fn(rank, *args)
        reply["ok"] = True
    except BaseException as exc:  # the parent reports it, naming this rank
        reply = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
        }
    reply["stdout"], reply["stderr"] = out.getvalue(), err.getvalue()
    try:
        conn.send(reply)
    except Exception as exc:  # an unpicklable result
        conn.send(
            {
                "ok": False,
                "error": f"the result could not be sent back: {exc}",
                "traceback": "",
                "stdout": reply["stdout"],
                "stderr": reply["stderr"],
            }
        )
    conn.close()
    _close_group()


def _close_group() -> None:
    from .group import destroy_process_group, is_initialized

    if is_initialized():
        destroy_process_group()


def _collect(workers: list, deadline: float, timeout: float) -> list:
    replies: list = [None] * len(workers)
    while any(r is None for r in replies):
        for rank, (proc, conn) in enumerate(workers):
            if replies[rank] is not None:
                continue
            if conn.poll():
                try:
                    replies[rank] = conn.recv()
                except EOFError:
                    replies[rank] = _died(proc)
            elif not proc.is_alive() and not conn.poll():
                replies[rank] = _died(proc)
            if replies[rank] is not None and not replies[rank]["ok"]:
                raise _failure(rank, replies[rank])
        if time.monotonic() > deadline:
            waiting = [r for r, reply in enumerate(replies) if reply is None]
            raise WorkerFailed(
                f"spawn: rank(s) {waiting} did not finish within {timeout:g} s", waiting[0]
            )
        time.sleep(0.005)
    return replies


def _died(proc: Any) -> dict:
    proc.join(1.0)
    code = proc.exitcode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited ({code})"
    return {"ok": False, "error": f"the worker {how} without reporting", "traceback": ""}


def _failure(rank: int, reply: dict) -> WorkerFailed:
    text = f"rank {rank} failed: {reply['error']}"
    if reply.get("traceback"):
        text += f"\n\n--- traceback of rank {rank} ---\n{reply['traceback']}"
    if reply.get("stdout"):
        text += f"\n--- output of rank {rank} ---\n{reply['stdout']}"
    return WorkerFailed(text, rank)


def _stop(workers: list) -> None:
    for proc, _ in workers:
        if proc.is_alive():
            proc.terminate()
    for proc, conn in workers:
        proc.join(3.0)
        if proc.is_alive():
            proc.kill()
            proc.join()
        conn.close()


def _show(rank: int, text: str, stream: Any) -> None:
    for line in text.splitlines():
        print(f"[rank{rank}]: {line}", file=stream)
