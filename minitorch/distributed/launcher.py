"""Start N workers, relay their output with rank prefixes, stop them all when one fails.

The supervision loop behind ``python -m minitorch.distributed.run``:

1. start each worker in its own session (so it and anything it starts can be stopped
   as one process group) with torchrun's environment variables;
2. copy every line it prints to our stdout/stderr as ``[rankR]: line``;
3. poll: when every worker has exited with 0 the job succeeded; when one fails, wait a
   moment for the others' failures to show, pick the root cause (a worker that died or
   raised its own error, before one that only lost its peer), stop the rest (SIGTERM,
   then SIGKILL) and say which rank failed and why;
4. with restarts left, start the whole group again (the script resumes from its
   checkpoint; ``MINITORCH_RESTART_COUNT`` tells it which attempt this is).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO

from .spawn import free_port, thread_limits

POLL = 0.05  # seconds between checks of the workers
GRACE = 0.5  # seconds to let other failures show before choosing the root cause
STOP_WAIT = 3.0  # seconds a worker gets after SIGTERM before SIGKILL
_SECONDARY = re.compile(r"Dist(Backend|Timeout)Error|is gone|timed out after")
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed)\b")


@dataclass
class Worker:
    rank: int
    proc: subprocess.Popen
    pumps: list = field(default_factory=list)
    tail: deque = field(default_factory=lambda: deque(maxlen=40))
    exited_at: float | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def error_line(self) -> str:
        """The last line of its stderr that names an exception (or the last line)."""
        lines = [line for line in self.tail if line.strip()]
        for line in reversed(lines):
            if _ERROR_LINE.match(line.strip()):
                return line.strip()
        return lines[-1].strip() if lines else ""

    def describe(self) -> str:
        code = self.proc.returncode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name} (signal {-code})"
        error = self.error_line()
        return f"exited with code {code}" + (f": {error}" if error else "")

    def is_secondary(self) -> bool:
        """Did it fail only because a peer failed (its error is about a gone/late peer)?"""
        code = self.proc.returncode
        return code is not None and code > 0 and bool(_SECONDARY.search(self.error_line()))


class WorkerGroup:
    """One attempt: N workers of ``command`` and the threads relaying their output."""

    def __init__(self, command: list[str], nproc: int, env: dict, prefix: bool) -> None:
        self.lock = threading.Lock()
        self.workers: list[Worker] = []
        for rank in range(nproc):
            worker_env = {**env, "RANK": str(rank), "LOCAL_RANK": str(rank)}
            proc = subprocess.Popen(
                command,
                env=worker_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            worker = Worker(rank, proc)
            self.workers.append(worker)
            for stream, out, keep in (
                (proc.stdout, sys.stdout, False),
                (proc.stderr, sys.stderr, True),
            ):
                pump = threading.Thread(
                    target=self._pump, args=(worker, stream, out, keep, prefix), daemon=True
                )
                pump.start()
                worker.pumps.append(pump)

    def _pump(
        self, worker: Worker, stream: IO[bytes], out: IO[str], keep: bool, prefix: bool
    ) -> None:
        head = f"[rank{worker.rank}]: " if prefix else ""
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if keep:
                worker.tail.append(line)
            with self.lock:
                out.write(f"{head}{line}\n")
                out.flush()
        stream.close()

    def wait(self) -> Worker | None:
        """Block until all succeed (None) or one fails (the root-cause worker)."""
        failed_since = None
        while True:
            now = time.monotonic()
            for w in self.workers:
                if w.exited_at is None and w.proc.poll() is not None:
                    w.exited_at = now
            failed = [w for w in self.workers if w.exited_at is not None and w.proc.returncode]
            if failed:
                failed_since = failed_since or now
                if now - failed_since >= GRACE or all(w.exited_at for w in self.workers):
                    for w in failed:
                        self._drain(w)
                    return min(failed, key=lambda w: (w.is_secondary(), w.exited_at, w.rank))
            elif all(w.exited_at is not None for w in self.workers):
                return None
            time.sleep(POLL)

    def _drain(self, worker: Worker) -> None:
        for pump in worker.pumps:
            pump.join(1.0)

    def stop(self) -> list[int]:
        """SIGTERM every live worker's process group, SIGKILL what is left; their ranks."""
        stopped = [w for w in self.workers if w.proc.poll() is None]
        for w in stopped:
            _signal_group(w.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT
        for w in stopped:
            try:
                w.proc.wait(max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                pass
        for w in self.workers:  # the workers' own children too, whatever state they are in
            _signal_group(w.pid, signal.SIGKILL)
            w.proc.wait()
            self._drain(w)
        return [w.rank for w in stopped]


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def launch(
    command: list[str],
    nproc: int,
    max_restarts: int = 0,
    master_addr: str = "127.0.0.1",
    master_port: int | None = None,
    prefix: bool = True,
) -> int:
    """Run ``command`` as ``nproc`` workers; restart the group up to ``max_restarts``
    times after a failure. Returns the exit code for the launcher (0, or 1)."""
    say = _say
    attempt = 0
    while True:
        port = master_port or free_port(master_addr)
        env = {
            **os.environ,
            "WORLD_SIZE": str(nproc),
            "LOCAL_WORLD_SIZE": str(nproc),
            "MASTER_ADDR": master_addr,
            "MASTER_PORT": str(port),
            "MINITORCH_RESTART_COUNT": str(attempt),
            "TORCHELASTIC_RESTART_COUNT": str(attempt),
            "PYTHONUNBUFFERED": "1",
            **thread_limits(nproc),  # (unless set) cores / nproc threads for BLAS and OpenMP
        }
        group = WorkerGroup(command, nproc, env, prefix)
        pids = ", ".join(str(w.pid) for w in group.workers)
        say(f"started {nproc} worker(s), attempt {attempt + 1} (pids {pids})")
        try:
            failed = group.wait()
        except BaseException:
            group.stop()
            raise
        stopped = group.stop()
        if failed is None:
            return 0
        say(f"rank {failed.rank} (pid {failed.pid}) failed: {failed.describe()}")
        if stopped:
            say(f"stopped the other workers: rank(s) {', '.join(map(str, stopped))}")
        if attempt >= max_restarts:
            if max_restarts:
                say(f"giving up after {max_restarts} restart(s)")
            return 1
        attempt += 1
        say(f"restarting all {nproc} workers (restart {attempt} of {max_restarts})")


def _say(text: str) -> None:
    print(f"minitorch.distributed.run: {text}", file=sys.stderr, flush=True)
