"""``make lab`` end to end: JupyterLab starts headless and serves the course notebooks."""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from minitorch.manifest import CHAPTERS, ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def test_makefile_lab_target_runs_jupyter_lab():
    makefile = (ROOT / "Makefile").read_text()
    assert "jupyter lab" in makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]


@pytest.fixture
def lab_server(tmp_path):
    port, token = _free_port(), secrets.token_hex(16)
    jupyter = Path(sys.executable).with_name("jupyter")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(f"{base}/api/status", token)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "JupyterLab did not start: " + proc.stderr.read().decode()[-2000:]
                    ) from None
                time.sleep(0.3)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_lab_serves_the_course(lab_server):
    base, token = lab_server
    listing = _get(f"{base}/api/contents/chapters", token)
    names = {item["name"] for item in listing["content"]}
    for chapter in CHAPTERS:
        assert chapter.lesson.name in names, f"{chapter.lesson.name} not served; got {names}"
    exercises = {i["name"] for i in _get(f"{base}/api/contents/exercises", token)["content"]}
    assert {c.exercise_notebook.name for c in CHAPTERS} <= exercises
    lab_page = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=5).read().decode()
    assert "JupyterLab" in lab_page
