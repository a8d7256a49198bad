"""The sandboxed process that runs a learner's notebook, and the grader's handle on it.

The grader starts a *keeper* (``python -I``, its own session), which confines itself as
far as the platform allows (:mod:`minitorch.course.grading.confine`) and forks the *worker*:
the process that runs the learner's cells and the probes the grader asks for
(:mod:`minitorch.course.grading.worker`). The worker talks to the grader over one socket, in
length-prefixed JSON frames; its stdout goes nowhere and its stderr to a file whose size
the resource limits cap. When the grader stops a sandbox, the keeper kills the worker
and every process it left behind (the PID namespace, or as their subreaper), reports how
the worker ended on a pipe of its own, and exits; the grader then removes its folder.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import minitorch
from minitorch.course.grading import confine, frames, keeper, plain
from minitorch.course.grading.cgroups import SandboxCgroup

#: The biggest frame the grader accepts from the worker (honest probes send < 1 MB).
MAX_FRAME = 16 * 2**20
#: Seconds the keeper gets to clean up after being asked to stop.
STOP_GRACE = 3.0
_HEADER = struct.Struct(">I")
#: Where the user ids of sandboxes are drawn from (as root): above any a system assigns
#: to its users, services or containers' subordinate ranges.
_SANDBOX_UIDS = (0x7E000000, 0x7EFFFFFF)


def _sandbox_user() -> int:
    """An unprivileged user id of the sandbox's own, not in the user database. Its own,
    not ``nobody``'s: the process limit (RLIMIT_NPROC) counts a user's processes, so a
    fork bomb as ``nobody`` kept every other sandbox graded at the same time (and any
    service running as ``nobody``) from starting a process."""
    import pwd

    while True:
        uid = _SANDBOX_UIDS[0] + int.from_bytes(os.urandom(3), "big")
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


# The keeper (keeper.py, standard library only) is loaded by its path: importing minitorch
# would import numpy, whose threads would keep it from entering new namespaces.
_BOOT = (
    "import importlib.util, json, sys\n"
    "spec = importlib.util.spec_from_file_location('_minitorch_keeper', sys.argv[3])\n"
    "keeper = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(keeper)\n"
    "keeper.main(sys.argv[1], json.loads(sys.argv[2]))\n"
)


@dataclass
class Limits:
    """Resource limits of the learner's process."""

    memory: int | None = 4 * 2**30
    file_size: int = 64 * 2**20
    open_files: int = 256
    cpu_seconds: int | None = None
    processes: int = 512

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory,
            "file_size": self.file_size,
            "open_files": self.open_files,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
        }


class SandboxLost(BaseException):
    """The sandbox stopped answering: it died, hung, or broke the protocol.

    A ``BaseException``: a judge's ``except Exception`` must not swallow it. ``kind`` is
    "died", "timeout" or "protocol"; ``detail`` says how ("exit code 3", ...).
    """

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail


def _exit_description(status: str) -> str:
    kind, _, value = status.partition(" ")
    if kind == "signal":
        try:
            return f"killed by {signal.Signals(int(value)).name}"
        except ValueError:
            return f"killed by signal {value}"
    if kind == "exit":
        return f"exit code {value}"
    return "it ended"


def _worker_env(private: Path) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(private),
        "TMPDIR": str(private),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(private / ".matplotlib"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "LANG": "C.UTF-8",
    }
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _remove_tree(path: Path) -> None:
    """Remove the worker's folder, whatever modes it left; never through a symbolic link
    (chmod follows links: it would change the mode of what a link points to)."""

    def retry(func: Any, target: str, _: Any) -> None:
        try:
            for place in (os.path.dirname(target), target):
                if not os.path.islink(place):
                    os.chmod(place, 0o700)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


class Sandbox:
    """One sandboxed worker: start it, talk to it, stop it (always, in ``finally``).

    ``pid_namespace = False`` (for tests) confines it as on a system without PID
    namespaces: the keeper then stops what the worker left behind as their subreaper;
    ``landlock = False`` as on a system without Landlock.
    """

    pid_namespace = True
    #: ``False`` (for tests) confines it as on a system without Landlock.
    landlock = True

    def __init__(self, folder: Path, number: int, hide: list[str], limits: Limits) -> None:
        self.folder = folder
        self.number = number
        self.hide = hide
        self.limits = limits
        self.private = folder / f"sandbox-{number}"
        self.stderr_path = folder / f"stderr-{number}.txt"
        self.process: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.status_read: int | None = None
        self.buffer = bytearray()
        self.frames: frames.Verifier | None = None
        #: whether a frame failed its tag (the notebook wrote to the result channel)
        self.forged = False
        self.status = ""
        name = f"minitorch-sandbox-{os.getpid()}-{number}-{os.urandom(4).hex()}"
        self.cgroup = SandboxCgroup(name, limits.memory, limits.processes)

    # -- starting ------------------------------------------------------------------------

    def start(self) -> None:
        as_root = confine.linux() and os.geteuid() == 0
        self.private.mkdir(mode=0o700)
        user = _sandbox_user() if as_root else None
        if user is not None:
            os.chown(self.private, user, user)
        parent, child = socket.socketpair()
        status_read, status_write = os.pipe()
        package_dir = str(Path(minitorch.__file__).resolve().parent)
        config = {
            "channel": child.fileno(),
            "status": status_write,
            "private": str(self.private),
            "package_dir": package_dir,
            "user": [user, user] if user is not None else None,
            "hide": self.hide,
            "limits": self.limits.to_dict(),
            "pid_namespace": self.pid_namespace,
            "landlock": self.landlock,
            "cgroups": self.cgroup.create(),
        }
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    _BOOT,
                    str(Path(package_dir).parent),
                    json.dumps(config),
                    str(Path(keeper.__file__).resolve()),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=_worker_env(self.private),
                cwd=str(self.private),
                pass_fds=(child.fileno(), status_write),
                start_new_session=True,
            )
        child.close()
        os.close(status_write)
        parent.setblocking(False)
        self.sock, self.status_read = parent, status_read

    # -- talking -------------------------------------------------------------------------

    def send(self, message: Any) -> None:
        assert self.sock is not None
        data = json.dumps(message).encode("utf-8")
        payload = _HEADER.pack(len(data)) + data
        self.sock.setblocking(True)
        self.sock.settimeout(10.0)
        try:
            self.sock.sendall(payload)
        except OSError as exc:
            raise SandboxLost("died", self._ended() or f"the channel closed ({exc})") from None
        finally:
            self.sock.setblocking(False)

    def authenticate(self) -> str:
        """Require every frame from now on to carry the worker's tag (see
        :mod:`minitorch.course.grading.frames`); the key to send it, as hex."""
        self.frames = frames.Verifier()
        return self.frames.key.hex()

    def receive(self, deadline: float) -> Any:
        """The next frame, parsed as JSON; SandboxLost when none comes by ``deadline``.

        The deadline holds even while frames keep arriving: it is checked before each
        frame is parsed, not only while waiting for one. Once :meth:`authenticate` was
        called, a frame without the right tag (written by the notebook's code to the
        channel) is a loss of kind "forged", and :attr:`forged` is set.
        """
        assert self.sock is not None
        while True:
            if time.monotonic() >= deadline:
                raise SandboxLost("timeout")
            frame = self._frame()
            if frame is not None and self.frames is not None:
                frame = self.frames.open(frame)
                if frame is None:
                    self.forged = True
                    raise SandboxLost("forged", "a message the grading worker did not send")
            if frame is not None:
                try:
                    return plain.loads(frame)
                except plain.PlainDataError as exc:
                    raise SandboxLost("protocol", str(exc)) from None
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.sock], [], [], min(max(left, 0), 0.25))
            if ready:
                try:
                    chunk = self.sock.recv(1 << 20)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    raise SandboxLost("died", self._ended())
                self.buffer += chunk
            elif self.process is not None and self.process.poll() is not None:
                raise SandboxLost("died", self._ended())

    def _frame(self) -> bytes | None:
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size > MAX_FRAME:
            raise SandboxLost("protocol", f"a message of {size} bytes")
        if len(self.buffer) < _HEADER.size + size:
            return None
        frame = bytes(self.buffer[_HEADER.size : _HEADER.size + size])
        del self.buffer[: _HEADER.size + size]
        return frame

    def _ended(self, wait: float = 2.0) -> str:
        """How the worker ended, from the keeper (waiting up to ``wait`` seconds)."""
        if self.status:
            return _exit_description(self.status)
        if self.status_read is None:
            return "it ended"
        ready, _, _ = select.select([self.status_read], [], [], wait)
        if ready:
            try:
                self.status = os.read(self.status_read, 64).decode("ascii", "replace").strip()
            except OSError:
                self.status = ""
        return _exit_description(self.status)

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(max(os.path.getsize(self.stderr_path) - limit, 0))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line for line in plain.clean_text(text, limit).splitlines() if line.strip()]
        return lines[-1] if lines else ""

    # -- stopping ------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the worker and everything it started; remove its files."""
        process = self.process
        if process is not None:
            if process.poll() is None:
                try:
                    os.kill(process.pid, signal.SIGTERM)  # the keeper cleans up and exits
                    process.wait(timeout=STOP_GRACE)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if process.poll() is None:
                process.kill()
            process.wait()
        self.cgroup.remove()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.status_read is not None:
            os.close(self.status_read)
            self.status_read = None
        _remove_tree(self.private)
        try:
            self.stderr_path.unlink()
        except OSError:
            pass


# -- the sandbox's first process ------------------------------------------------------------------


def first_main(config: dict[str, Any], namespaces: str) -> None:
    """The sandbox's first process (PID 1 of its namespace where possible): confine
    itself, fork the worker, reap processes until the worker ends, report how it ended
    on the status pipe. Its exit ends every process left in the namespace; without
    namespaces the keeper, their subreaper, kills what is left."""
    status_fd = config["status"]
    channel = config["channel"]
    os.setsid()
    _confine_worker(config, namespaces)
    worker = os.fork()
    if worker == 0:
        code = 70
        os.close(status_fd)
        try:
            from minitorch.course.grading.worker import serve

            serve(channel)
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        os._exit(code)
    os.close(channel)
    status = keeper.status_text(keeper.wait_for(worker))
    os.write(status_fd, status.encode("ascii"))


def _confine_worker(config: dict[str, Any], namespaces: str) -> None:
    private = config["private"]
    user = config.get("user")
    needed = confine.python_paths(config["package_dir"])
    fixed = [*needed, str(Path(config["package_dir"]).parent)]
    if namespaces:
        owner = (user[0], user[1]) if user else None
        proc = config.get("pid_namespace", True)
        stash = private + "-expose"
        hide = config.get("hide", [])
        confine.private_mounts(hide, private, owner, needed, stash, proc, fixed)
    elif user and confine.unreachable(needed):
        raise OSError(
            f"Python is installed where an unprivileged user cannot read it "
            f"({confine.unreachable(needed)[0]}) and this system has no mount namespaces to "
            "open it up: install Python where other users can read it, or grade as an "
            "ordinary user"
        )
    os.chdir(private)
    own_count = bool(user) or (namespaces == "user" and confine.nproc_per_user_namespace())
    confine.set_limits(config["limits"], count_processes=own_count)
    confine.no_new_privileges()
    if user:
        confine.drop_privileges(user[0], user[1])
    confine.die_with_parent()
    confine.not_dumpable()
    # Everything the worker needs from disk is imported now, before Landlock.
    import minitorch.course.grading.worker  # noqa: F401

    readable = confine.readable_paths(config["package_dir"])
    walled = 0
    if config.get("landlock", True):
        walled = confine.landlock(readable, [private, "/dev/null"])
    if not walled and namespaces:
        # no Landlock: the read-only mounts are the only wall; never run without it
        open_paths = confine.still_writable(fixed)
        if open_paths:
            raise OSError(
                f"could not make {open_paths[0]} read-only for the learner's code (no "
                "Landlock, and the mount was not made read-only): refusing to grade"
            )
    confine.drop_capabilities()
