"""One memory and one process limit for all of a sandbox's processes together (Linux).

Resource limits (``setrlimit``) hold per process: a notebook that forks could hold the
memory limit many times over, and memory that is not mapped (a ``memfd``, files in its
tmpfs) is not counted at all. A control group counts them all. Where the grader may
create one (as root, or in a cgroup delegated to its user), each sandbox gets its own,
below the grader's: cgroup v2 where its controllers are enabled, else v1's ``memory``
and ``pids`` hierarchies. Where it may not, nothing changes (the rlimits still hold).
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

#: Seconds to wait for a cgroup's last processes to leave before giving up removing it.
REMOVE_WAIT = 10.0


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(type, mount point, options) of every cgroup file system."""
    found = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
            found.append((fields[2], fields[1], set(fields[3].split(","))))
    return found


def _own() -> dict[str, str]:
    """This process's cgroup per v1 controller, and "" for the v2 hierarchy."""
    own = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            own[controller] = parts[2]
    return own


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class SandboxCgroup:
    """The cgroup(s) of one sandbox: :meth:`create`, then the keeper joins
    :attr:`procs`, and :meth:`remove` once it has ended."""

    def __init__(self, name: str, memory: int | None, processes: int | None) -> None:
        self.name = name
        self.memory = memory
        self.processes = processes
        self.folders: list[Path] = []
        self.procs: list[str] = []

    def create(self) -> list[str]:
        """Create the cgroup(s) and set their limits; the cgroup.procs files to join."""
        if not os.path.exists("/proc/self/cgroup"):
            return []
        mounts, own = _mounts(), _own()
        v2 = next((point for kind, point, _ in mounts if kind == "cgroup2"), None)
        limited: set[str] = set()
        if v2 is not None and "" in own:
            limited = self._v2(Path(v2 + own[""]) / self.name)
        for controller, limit_file, value in (
            ("memory", "memory.limit_in_bytes", self.memory),
            ("pids", "pids.max", self.processes),
        ):
            if controller in limited or value is None or controller not in own:
                continue
            point = next((p for k, p, o in mounts if k == "cgroup" and controller in o), None)
            if point is not None:
                self._v1(Path(point + own[controller]) / self.name, limit_file, value)
        return self.procs

    def _v2(self, folder: Path) -> set[str]:
        try:
            folder.mkdir()
        except OSError:
            return set()
        self.folders.append(folder)
        try:
            available = set((folder / "cgroup.controllers").read_text().split())
        except OSError:
            available = set()
        limited = set()
        limits = [("memory", "memory.max", self.memory), ("memory", "memory.swap.max", 0)]
        limits.append(("pids", "pids.max", self.processes))
        for controller, limit_file, value in limits:
            if controller in available and value is not None:
                try:
                    _write(folder / limit_file, str(value))
                    limited.add(controller)
                except OSError:
                    pass
        if limited:
            self.procs.append(str(folder / "cgroup.procs"))
        return limited

    def _v1(self, folder: Path, limit_file: str, value: int) -> None:
        try:
            folder.mkdir()
        except OSError:
            return
        self.folders.append(folder)
        try:
            _write(folder / limit_file, str(value))
        except OSError:
            return
        self.procs.append(str(folder / "cgroup.procs"))

    def remove(self) -> None:
        """Remove the cgroup(s), killing and waiting for processes still in them (a sandbox
        process the memory limit stopped can take a while to leave on a loaded machine)."""
        deadline = time.monotonic() + REMOVE_WAIT
        for folder in reversed(self.folders):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as err:
                    if err.errno != errno.EBUSY or time.monotonic() >= deadline:
                        break  # (only a cgroup with processes left is worth waiting for)
                    _kill_members(folder)
                    time.sleep(0.02)
        self.folders, self.procs = [], []


def _kill_members(folder: Path) -> None:
    """SIGKILL every process still listed in the cgroup (they are the sandbox's)."""
    try:
        pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def join(procs: list[str]) -> None:
    """Move this process into the cgroups (its children follow); silently where it may not."""
    for path in procs:
        try:
            _write(Path(path), str(os.getpid()))
        except OSError:
            pass
