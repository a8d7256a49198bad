"""Install PyTorch, the reference the differential tests compare against: a CPU build.

``make test`` runs this after installing the rest. PyPI's Linux wheel of torch is a CUDA
build that pulls in about 4 GB of CUDA 13 libraries; a CPU reference needs none of them.
So, by ``--source`` (``make test REFERENCE=...``):

- ``cpu`` (the default): a torch wheel pip already finds without an index (a local wheel
  folder, ``PIP_FIND_LINKS``), else PyTorch's CPU index (about 200 MB). Where neither can be
  reached, nothing is installed: the differential tests skip, and this says so and how to
  get them (``REFERENCE=pypi``).
- ``pypi``: PyPI's build, whatever it brings (on Linux, CUDA 13's libraries).
- ``none``: no PyTorch; the differential tests skip.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.error
import urllib.request

VERSION = "2.13.0"  # the reference extra in pyproject.toml pins the same
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def installed() -> str | None:
    """The installed torch's version, without importing it."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def pip(*args: str, quiet: bool = False) -> bool:
    """``pip install --quiet ARGS`` in this interpreter; ``quiet`` also hides its errors."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", *args]
    out = subprocess.DEVNULL if quiet else None
    return subprocess.call(command, stdout=out, stderr=out) == 0


def reachable(url: str, timeout: float = 10.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/torch/", timeout=timeout):
            return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", choices=("cpu", "pypi", "none"), default="cpu")
    parser.add_argument("--index", default=CPU_INDEX, help="PyTorch's CPU wheel index")
    options = parser.parse_args(argv)
    pin = f"torch=={VERSION}"
    have = installed()
    if options.source == "none":
        print("reference PyTorch: not installed (REFERENCE=none); differential tests skip")
        return 0
    if have is not None and have.split("+")[0] == VERSION:
        return 0
    if options.source == "pypi":
        return 0 if pip(pin) else 1
    # A wheel pip finds without any index (find-links): the torch file alone, then its
    # pure-Python dependencies from wherever pip looks (the installed torch satisfies the pin).
    if pip("--no-index", "--no-deps", pin, quiet=True):
        return 0 if pip(pin) else 1
    if reachable(options.index):
        # The CPU index's 2.13.0+cpu sorts above PyPI's 2.13.0, so pip takes it.
        return 0 if pip(pin, "--extra-index-url", options.index) else 1
    print(
        f"reference PyTorch: not installed. No torch wheel is found locally and PyTorch's CPU "
        f"index ({options.index}) cannot be reached, and PyPI's Linux build brings about 4 GB "
        "of CUDA libraries. The differential tests against PyTorch will skip. To run them with "
        "PyPI's build:  make test REFERENCE=pypi",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
