"""The launcher: rank-prefixed output; a dead rank stops the job within seconds, named,
with no process left behind; --max-restarts resumes from the checkpoint and ends where an
uninterrupted run ends."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch.distributed import examples

TRAIN = str(Path(examples.__file__).with_name("train_digits.py"))
ROOT = Path(__file__).resolve().parents[2]


def _launch(*args, timeout=60, **kwargs):
    cmd = [sys.executable, "-m", "minitorch.distributed.run", *map(str, args)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, **kwargs)


def _pids(stderr):
    return [int(p) for m in re.finditer(r"\(pids ([\d, ]+)\)", stderr) for p in m[1].split(", ")]


def _assert_all_gone(pids):
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_output_is_prefixed_with_the_rank(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import os, sys\n"
        "print('hello', os.environ['RANK'], os.environ['WORLD_SIZE'], sys.argv[1:])\n"
        "print('to stderr', file=sys.stderr)\n"
    )
    run = _launch("--nproc", 2, script, "--flag", "x")
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.splitlines()) == [
        "[rank0]: hello 0 2 ['--flag', 'x']",
        "[rank1]: hello 1 2 ['--flag', 'x']",
    ]
    assert "[rank1]: to stderr" in run.stderr


def test_a_killed_rank_stops_the_job_within_10_s(tmp_path):
    t0 = time.monotonic()
    run = _launch("--nproc", 2, TRAIN, "--die-at-step", 3, "--die-rank", 1)
    elapsed = time.monotonic() - t0
    assert run.returncode != 0
    assert elapsed < 10, f"took {elapsed:.1f} s"
    assert "rank 1 (pid" in run.stderr and "was killed by SIGKILL" in run.stderr
    # rank 0 saw its peer go, named it, and did not hang
    assert "all_reduce on rank 0: rank 1 is gone" in run.stderr
    _assert_all_gone(_pids(run.stderr))


def test_a_raising_rank_is_named_with_its_error(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(
        "import os, time\n"
        "if os.environ['RANK'] == '2':\n"
        "    raise ValueError('bad batch shape on purpose')\n"
        "time.sleep(60)\n"
    )
    t0 = time.monotonic()
    run = _launch("--nproc", 3, script)
    assert run.returncode == 1
    assert time.monotonic() - t0 < 10
    assert re.search(
        r"rank 2 \(pid \d+\) failed: exited with code 1: ValueError: bad batch shape", run.stderr
    )
    assert "stopped the other workers: rank(s) 0, 1" in run.stderr
    _assert_all_gone(_pids(run.stderr))


def test_stopping_the_launcher_stops_its_workers(tmp_path):
    script = tmp_path / "sleeps.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    cmd = [sys.executable, "-m", "minitorch.distributed.run", "--nproc", "2", str(script)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout.readline().endswith("up\n")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode != 0
    _assert_all_gone(_pids(err))


def test_max_restarts_resumes_from_the_checkpoint(tmp_path):
    common = ["--nproc", 2]
    args = ["--epochs", 2, "--batch-size", 96]
    plain = _launch(*common, TRAIN, *args, "--out", tmp_path / "plain.mt")
    assert plain.returncode == 0, plain.stderr
    crashy = _launch(
        *common, "--max-restarts", 1, TRAIN, *args, "--checkpoint", tmp_path / "ckpt.mt",
        "--out", tmp_path / "resumed.mt", "--die-at-step", 20, "--die-rank", 1,
    )  # fmt: skip
    assert crashy.returncode == 0, crashy.stderr
    assert "restarting all 2 workers (restart 1 of 1)" in crashy.stderr
    assert "[rank0]: resumed from ckpt.mt at epoch 1" in crashy.stdout
    a, b = minitorch.load(tmp_path / "plain.mt"), minitorch.load(tmp_path / "resumed.mt")
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-6, atol=1e-7, err_msg=k)
    _assert_all_gone(_pids(crashy.stderr))


def test_bad_arguments():
    run = _launch("--nproc", 0, "x.py")
    assert run.returncode == 2 and "--nproc must be at least 1" in run.stderr


def test_a_script_that_cannot_run_is_one_line_before_any_worker_starts(tmp_path):
    # catches: a syntax error printed by every worker inside its [rankR]: prefix
    script = tmp_path / "broken.py"
    script.write_text("x = 1\ndef f(:\n    pass\n")
    run = _launch("--nproc", 2, script)
    assert run.returncode == 2 and "[rank" not in run.stderr + run.stdout
    assert f"SyntaxError in {script}, line 2" in run.stderr
    assert "started" not in run.stderr  # no worker was started
    missing = _launch("--nproc", 2, tmp_path / "missing.py")
    assert missing.returncode == 2 and "can't open script" in missing.stderr
