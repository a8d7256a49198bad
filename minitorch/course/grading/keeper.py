"""The keeper: the sandbox's outermost process (standard library only).

It enters new namespaces *before* anything starts a thread (numpy's OpenBLAS does, on
import; a process with threads cannot enter a new user namespace, and one that has
entered a new PID namespace cannot start threads), forks the sandbox's first process,
which imports minitorch and runs the worker (:func:`minitorch.course.grading.sandbox.first_main`),
and when that ends, or the grader asks it to stop (SIGTERM), kills whatever is left,
reports how the worker ended on the status pipe and exits.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any


def children(pid: int) -> list[int]:
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


def sweep(worker: int) -> None:
    """Kill the worker's process group and every orphan that was handed to us."""
    me = os.getpid()
    for _ in range(500):
        try:
            os.killpg(worker, signal.SIGKILL)
        except OSError:
            pass
        victims = children(me)
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


def status_text(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"signal {os.WTERMSIG(wait_status)}"
    return f"exit {os.WEXITSTATUS(wait_status)}"


def wait_for(pid: int) -> int:
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


def _confine_module() -> Any:
    """confine.py, loaded from beside this file without importing minitorch."""
    path = Path(__file__).with_name("confine.py")
    spec = importlib.util.spec_from_file_location("_minitorch_keeper_confine", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(root: str, config: dict[str, Any]) -> None:
    """Enter the namespaces, fork the first process, wait for it, clean up, exit."""
    status_fd = config["status"]
    for procs in config.get("cgroups", []):  # the sandbox's cgroups: its children follow
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass
    confine = _confine_module()
    confine.set_subreaper()
    namespaces = confine.unshare_namespaces(pid=config.get("pid_namespace", True))
    first = os.fork()
    if first == 0:
        code = 70
        try:
            sys.path.insert(0, root)
            from minitorch.course.grading.sandbox import first_main

            first_main(config, namespaces)
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        os._exit(code)
    os.close(config["channel"])
    try:  # when the cgroup runs out of memory, the kernel kills the learner's code, not us
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-1000")
    except OSError:
        pass

    def on_term(signum: int, frame: object) -> None:
        try:
            os.kill(first, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    wait_status = wait_for(first)
    sweep(first)
    if not (os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 0):
        try:  # the first process did not report: say how it ended
            os.write(status_fd, status_text(wait_status).encode("ascii"))
        except OSError:
            pass
    os._exit(0)
