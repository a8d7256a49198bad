"""The suite's install as a user's machine runs it: a copy of the checkout, no venv, a fresh
HOME, none of this machine's pip settings (no PIP_FIND_LINKS, no local wheel folder), only
PyPI. Then the CUDA 13 NVRTC that PyPI's torch brings on Linux is installed beside, and every
kernel must still compile for sm_90 with CUDA 12's parts.

Not part of ``make test`` (it downloads the whole course, a few minutes): ``make test-install``
runs it, and ``.ci/run`` runs that after ``make test``. The file name keeps pytest's default
collection away from it; given by name, pytest runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What PyPI's torch 2.13.0 Linux wheel brings of CUDA 13's compiler: NVRTC and the headers.
TORCH_CUDA_PARTS = ("nvidia-cuda-nvrtc==13.0.*", "nvidia-cuda-runtime==13.0.*")
# The only NVIDIA wheels the suite itself should install: CUDA 12's compile toolchain.
TOOLCHAIN = {"nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-runtime-cu12"}


def _user_environment(home: Path) -> dict[str, str]:
    """``env -i PATH="$PATH" HOME=<fresh> LANG=C.UTF-8``: what a new user's shell has."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}


def _copy_checkout(to: Path) -> None:
    """The files git tracks (and untracked ones it does not ignore), as a fresh clone has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():
            (to / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name.decode())


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    said = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{said[-4000:]}"
    return said


def _size_mb(folder: Path) -> int:
    return int(
        subprocess.run(["du", "-sm", str(folder)], capture_output=True, text=True).stdout.split()[0]
    )


def _installed(python: Path, env: dict[str, str]) -> set[str]:
    code = (
        "from importlib import metadata\n"
        "for d in metadata.distributions(): print(d.metadata['Name'].lower())"
    )
    return set(_run([str(python), "-c", code], python.parent, env).split())


@pytest.mark.skipif(sys.platform != "linux", reason="PyPI's CUDA-13 torch is a Linux matter")
def test_the_suites_install_on_a_fresh_machine(tmp_path):
    checkout, home = tmp_path / "minitorch", tmp_path / "home"
    checkout.mkdir()
    home.mkdir()
    _copy_checkout(checkout)
    env = _user_environment(home)
    python = checkout / ".venv" / "bin" / "python"

    started = time.monotonic()
    _run(["make", "setup"], checkout, env)  # what `make lab` installs
    course = _installed(python, env)
    assert "torch" not in course, "make lab must not install PyTorch"
    course_mb = _size_mb(checkout / ".venv")

    said = _run(["make", "setup-tests"], checkout, env)  # what `make test` installs
    suite = _installed(python, env)
    minutes = (time.monotonic() - started) / 60
    nvidia = {name for name in suite if name.startswith("nvidia-")}
    assert nvidia == TOOLCHAIN, (
        f"the suite installed NVIDIA wheels beyond the toolchain: {nvidia - TOOLCHAIN}"
    )
    if "torch" in suite:  # found a CPU wheel (a reachable CPU index)
        version = _run(
            [str(python), "-c", "import torch; print(torch.version.cuda)"], checkout, env
        )
        assert version.strip() == "None", "the reference PyTorch must be a CPU build"
    else:
        assert "make test REFERENCE=pypi" in said, "a skipped reference must say how to get it"
    suite_mb = _size_mb(checkout / ".venv")

    # PyPI's torch beside: its CUDA 13 NVRTC must change nothing.
    _run([str(python), "-m", "pip", "install", "--quiet", *TORCH_CUDA_PARTS], checkout, env)
    chosen = _run(
        [
            str(python),
            "-c",
            "from minitorch.cuda import toolchain; print(toolchain.release().describe())",
        ],
        checkout,
        env,
    )
    assert chosen.strip().startswith("pip wheels: NVRTC 12."), chosen
    compiled = _run([str(python), "-m", "minitorch.cuda.cross_compile"], checkout, env)
    assert "compiles for sm_90" in compiled.splitlines()[-1], compiled[-2000:]

    print(
        f"\nfresh install: {minutes:.1f} min; venv {course_mb} MB after `make setup` (make lab), "
        f"{suite_mb} MB after `make setup-tests` (make test); torch "
        f"{'installed (CPU build)' if 'torch' in suite else 'not reachable, skipped'}; "
        f"with CUDA 13's NVRTC beside: {chosen.strip()}; {compiled.splitlines()[-1]}"
    )
