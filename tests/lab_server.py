"""Start a headless JupyterLab for a test and stop it afterwards (test_lab.py, test_browser.py)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from minitorch.course.manifest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    base: str  # http://127.0.0.1:PORT
    token: str
    log: Path  # what the server printed

    def get_json(self, path: str) -> dict:
        request = urllib.request.Request(
            self.base + path, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())


@contextlib.contextmanager
def running_lab(command: str, tmp: Path, cwd: Path = ROOT, timeout: float = 90) -> Iterator[Lab]:
    """Run the shell ``command`` (a ``jupyter lab`` command line) on a free port with a token.

    Jupyter's runtime, config and data folders are under ``tmp``, so a developer's own
    settings, signatures and workspaces are neither used nor touched.
    """
    port, token = free_port(), secrets.token_hex(16)
    flags = f" --no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}"
    env = {**os.environ}
    for name in ("RUNTIME", "CONFIG", "DATA"):
        env[f"JUPYTER_{name}_DIR"] = str(tmp / f"jupyter-{name.lower()}")
    log = tmp / "lab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {command}{flags}"], cwd=cwd, env=env,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    lab = Lab(f"http://127.0.0.1:{port}", token, log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                lab.get_json("/api/status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not start ({command}):\n" + log.read_text()[-3000:]
                    ) from None
                time.sleep(0.3)
        yield lab
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
