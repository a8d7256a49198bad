"""The sandboxed process that runs a learner's notebook, and the grader's handle on it.

The grader starts a *keeper* (``python -I``, its own session), which confines itself as
far as the platform allows (:mod:`minitorch.grading.confine`) and forks the *worker*:
the process that runs the learner's cells and the probes the grader asks for
(:mod:`minitorch.grading.worker`). The worker talks to the grader over one socket, in
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
from minitorch.grading import confine, plain

#: The biggest frame the grader accepts from the worker.
MAX_FRAME = 64 * 2**20
#: Seconds the keeper gets to clean up after being asked to stop.
STOP_GRACE = 3.0
_HEADER = struct.Struct(">I")
_NOBODY = 65534

_BOOT = (
    "import json, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from minitorch.grading.sandbox import keeper_main\n"
    "keeper_main(json.loads(sys.argv[2]))\n"
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
    def retry(func: Any, target: str, _: Any) -> None:
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


class Sandbox:
    """One sandboxed worker: start it, talk to it, stop it (always, in ``finally``).

    ``pid_namespace = False`` (for tests) confines it as on a system without PID
    namespaces: the keeper then stops what the worker left behind as their subreaper.
    """

    pid_namespace = True

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
        self.buffer = b""
        self.status = ""

    # -- starting ------------------------------------------------------------------------

    def start(self) -> None:
        as_root = confine.linux() and os.geteuid() == 0
        self.private.mkdir(mode=0o700)
        if as_root:
            os.chown(self.private, _NOBODY, _NOBODY)
        parent, child = socket.socketpair()
        status_read, status_write = os.pipe()
        package_dir = str(Path(minitorch.__file__).resolve().parent)
        config = {
            "channel": child.fileno(),
            "status": status_write,
            "private": str(self.private),
            "package_dir": package_dir,
            "user": [_NOBODY, _NOBODY] if as_root else None,
            "hide": self.hide,
            "limits": self.limits.to_dict(),
            "pid_namespace": self.pid_namespace,
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

    def receive(self, deadline: float) -> Any:
        """The next frame, parsed as JSON; SandboxLost when none comes by ``deadline``."""
        assert self.sock is not None
        while True:
            frame = self._frame()
            if frame is not None:
                try:
                    return plain.loads(frame)
                except plain.PlainDataError as exc:
                    raise SandboxLost("protocol", str(exc)) from None
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxLost("timeout")
            ready, _, _ = select.select([self.sock], [], [], min(left, 0.25))
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
        frame = self.buffer[_HEADER.size : _HEADER.size + size]
        self.buffer = self.buffer[_HEADER.size + size :]
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


# -- the keeper: runs in the sandbox's first process ---------------------------------------------


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: from /proc)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _sweep(worker: int) -> None:
    """Kill the worker's process group and every orphan that was handed to us."""
    me = os.getpid()
    for _ in range(500):
        for target in (worker,):
            try:
                os.killpg(target, signal.SIGKILL)
            except OSError:
                pass
        victims = _children(me)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reaped = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
            reaped = True
        if not victims and not reaped:
            return
        time.sleep(0.002)


def _status(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"signal {os.WTERMSIG(wait_status)}"
    return f"exit {os.WEXITSTATUS(wait_status)}"


def _wait_for(pid: int) -> int:
    """Wait for ``pid`` (reaping any other child on the way); its wait status."""
    while True:
        try:
            done, wait_status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        if done == pid:
            return wait_status


def keeper_main(config: dict[str, Any]) -> None:
    """The keeper: fork the sandbox's first process, wait for it, clean up, exit.

    The first process confines itself (as PID 1 of its own namespace where possible),
    then forks the worker and reaps processes until the worker ends; it reports how the
    worker ended on the status pipe and exits, which ends every process left in the
    namespace. Without namespaces the keeper, their subreaper, kills what is left.
    """
    status_fd = config["status"]
    channel = config["channel"]
    confine.set_subreaper()
    namespaces = confine.unshare_namespaces(pid=config.get("pid_namespace", True))
    first = os.fork()
    if first == 0:
        code = 70
        try:
            os.setsid()
            _confine_worker(config, namespaces)
            worker = os.fork()
            if worker == 0:
                os.close(status_fd)
                try:
                    from minitorch.grading.worker import serve

                    serve(channel)
                    code = 0
                except BaseException:
                    import traceback

                    traceback.print_exc()
                os._exit(code)
            os.close(channel)
            status = _status(_wait_for(worker))
            os.write(status_fd, status.encode("ascii"))
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        os._exit(code)
    os.close(channel)

    def on_term(signum: int, frame: object) -> None:
        try:
            os.kill(first, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    wait_status = _wait_for(first)
    _sweep(first)
    if not (os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 0):
        try:  # the first process did not report: say how it ended
            os.write(status_fd, _status(wait_status).encode("ascii"))
        except OSError:
            pass
    os._exit(0)


def _confine_worker(config: dict[str, Any], namespaces: str) -> None:
    private = config["private"]
    user = config.get("user")
    needed = confine.python_paths(config["package_dir"])
    if namespaces:
        owner = (user[0], user[1]) if user else None
        proc = config.get("pid_namespace", True)
        stash = private + "-expose"
        confine.private_mounts(config.get("hide", []), private, owner, needed, stash, proc)
    elif user and confine.unreachable(needed):
        raise OSError(
            f"Python is installed where an unprivileged user cannot read it "
            f"({confine.unreachable(needed)[0]}) and this system has no mount namespaces to "
            "open it up: install Python where other users can read it, or grade as an "
            "ordinary user"
        )
    os.chdir(private)
    confine.set_limits(config["limits"], other_user=bool(user))
    confine.no_new_privileges()
    if user:
        confine.drop_privileges(user[0], user[1])
    confine.die_with_parent()
    # Everything the worker needs from disk is imported now, before Landlock.
    import minitorch.grading.worker  # noqa: F401

    readable = confine.readable_paths(config["package_dir"])
    confine.landlock(readable, [private, "/dev/null"])
