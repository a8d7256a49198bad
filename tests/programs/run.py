"""Run the corpus of real PyTorch programs with torch and with minitorch, and compare.

Each ``*.py`` file here is a PyTorch program written as PyTorch users write it (the two
reference articles' snippets, "Learning PyTorch with Examples", the 60-minute Blitz, the
AMP recipe, the TorchScript introduction and the DDP tutorial). It runs twice: with real
torch, and with minitorch standing in for torch (``minitorch.as_torch``); the printed
output must agree.

Each program says in a header comment how to compare it:

- ``# compare: exact``: the output does not depend on the random number generator, so
  numbers must agree within float tolerance (and the text between them exactly);
- ``# compare: masked``: the program prints values drawn from the generator (minitorch's
  differs from torch's), so floating point numbers are masked and everything else
  (shapes, counts, names, booleans, the layout of the output) must agree;
- ``# order: unordered`` (with either): several processes print, in any order, so lines
  are compared as a sorted list.

Object addresses (``at 0x7f...``) are masked everywhere; a number with a unit of seconds
(``0.19s``, ``12ms``) counts as a number. stderr is not compared.

torch's outputs are recorded in ``torch_outputs.json`` (``--record`` runs torch and
rewrites it), keyed by each program's source: the test compares minitorch against the
recording when it is up to date, and runs torch only for programs changed since.

A mode's programs run in forks of one process that has imported the framework already
(``--serve``), so the corpus pays for ``import torch`` once, not once per program. Each
program runs in a fresh temporary directory (files it saves land there; ``TMPDIR``
points there too) with its own ``MASTER_PORT``.

Usage: ``python tests/programs/run.py [-j JOBS] [--record] [names...]`` prints a table of
same / different / fail and the reason for each program that is not the same (both sides
run live; ``--record`` also writes torch's outputs to ``torch_outputs.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODES = ("torch", "minitorch")
RECORDING = HERE / "torch_outputs.json"


@dataclass
class Program:
    name: str
    path: Path
    compare: str  # "exact" or "masked"
    unordered: bool

    @property
    def source(self) -> str:
        return self.path.read_text()

    @property
    def key(self) -> str:
        """What a recording of this program's torch output is valid for: its source and the
        sources of the corpus's own modules (``_*.py``) it imports, theirs included."""
        digest = hashlib.sha256(self.source.encode())
        for helper in _helpers(self.source):
            digest.update(helper.read_bytes())
        return digest.hexdigest()[:16]


_IMPORTS_HELPER = re.compile(r"^\s*(?:import|from)\s+(_\w+)", re.M)


def _helpers(source: str, seen: tuple[Path, ...] = ()) -> list[Path]:
    """The corpus modules (``_name.py`` beside the programs) that ``source`` imports."""
    found = list(seen)
    for name in _IMPORTS_HELPER.findall(source):
        path = HERE / f"{name}.py"
        if path.exists() and path not in found:
            found = _helpers(path.read_text(), (*found, path))
    return found


def recorded(programs: list[Program]) -> dict[str, dict]:
    """torch's recorded results for the programs whose source has not changed since."""
    if not RECORDING.exists():
        return {}
    saved = json.loads(RECORDING.read_text())["programs"]
    return {
        p.name: saved[p.name]["result"]
        for p in programs
        if p.name in saved and saved[p.name]["key"] == p.key
    }


def record(programs: list[Program], results: dict[str, dict]) -> None:
    """Write torch's results (merged into the recording of the other programs)."""
    import torch

    saved = json.loads(RECORDING.read_text())["programs"] if RECORDING.exists() else {}
    for p in programs:
        result = {k: results[p.name][k] for k in ("rc", "stdout")}
        saved[p.name] = {"key": p.key, "result": {**result, "stderr": "", "timed_out": False}}
    names = {p.name for p in discover()}
    saved = {name: saved[name] for name in sorted(saved) if name in names}
    text = json.dumps({"torch": torch.__version__, "programs": saved}, indent=1, sort_keys=True)
    RECORDING.write_text(text + "\n")


def discover(names: list[str] | None = None) -> list[Program]:
    """The corpus (or the named programs of it), in name order."""
    programs = []
    for path in sorted(HERE.glob("*.py")):
        if path.name == "run.py" or path.name.startswith("_"):
            continue
        if names and path.stem not in names:
            continue
        text = path.read_text()
        found = re.search(r"^# compare: (exact|masked)$", text, re.M)
        if found is None:
            raise ValueError(f"{path.name}: no '# compare: exact|masked' header")
        unordered = re.search(r"^# order: unordered$", text, re.M) is not None
        programs.append(Program(path.stem, path, found.group(1), unordered))
    if names and len(programs) != len(set(names)):
        missing = sorted(set(names) - {p.name for p in programs})
        raise ValueError(f"no such programs: {missing}")
    return programs


# --- running: a process that imported the framework forks one child per program --------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(path: Path, workdir: str, out: int, err: int) -> None:
    """In the forked child: become the program (never returns)."""
    import runpy

    os.setpgid(0, 0)  # its own process group: a timeout kills its workers too
    os.chdir(workdir)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.environ["TMPDIR"] = workdir
    os.environ["MASTER_PORT"] = str(_free_port())
    tempfile.tempdir = None  # (tempfile caches the directory)
    sys.argv = [str(path)]
    sys.path.insert(0, str(path.parent))
    code = 0
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - the program's failure is the result
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(mode: str, paths: list[Path], jobs: int, timeout: float) -> dict:
    """Import the framework once, then run each program in a fork of this process."""
    if mode == "minitorch":
        from minitorch import as_torch

        as_torch.install()
    import torch  # noqa: F401 - imported once, before the forks

    pending = list(paths)
    running: dict[int, tuple] = {}
    results: dict[str, dict] = {}
    while pending or running:
        while pending and len(running) < jobs:
            path = pending.pop(0)
            workdir = tempfile.mkdtemp(prefix=f"{mode}-{path.stem}-")
            out = os.open(os.path.join(workdir, ".stdout"), os.O_WRONLY | os.O_CREAT, 0o600)
            err = os.open(os.path.join(workdir, ".stderr"), os.O_WRONLY | os.O_CREAT, 0o600)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(path, workdir, out, err)
            os.close(out)
            os.close(err)
            running[pid] = (path, workdir, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.02)
            for pid, (_path, _workdir, start) in list(running.items()):
                if time.monotonic() - start > timeout:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            continue
        path, workdir, start = running.pop(pid)
        try:
            os.killpg(pid, signal.SIGKILL)  # workers it left behind
        except (ProcessLookupError, PermissionError):
            pass
        seconds = time.monotonic() - start
        rc = os.waitstatus_to_exitcode(status)
        results[path.stem] = {
            "rc": rc,
            "timed_out": seconds > timeout,
            "seconds": round(seconds, 2),
            "stdout": Path(workdir, ".stdout").read_text(errors="replace"),
            "stderr": Path(workdir, ".stderr").read_text(errors="replace")[-4000:],
        }
    return results


def start(mode: str, programs: list[Program], jobs: int, timeout: float) -> subprocess.Popen:
    """Start the process that runs ``programs`` in ``mode``; ``collect`` reads its results."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    env.pop("MINITORCH_MINE", None)
    env.pop("PYTHONUNBUFFERED", None)  # buffered: processes that print at once keep lines whole
    command = [sys.executable, str(Path(__file__).resolve()), "--serve", mode]
    command += ["-j", str(jobs), "--timeout", str(timeout)]
    command += [str(p.path) for p in programs]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def collect(process: subprocess.Popen, mode: str) -> dict:
    out, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the {mode} runner failed (exit {process.returncode}):\n{err[-3000:]}")
    return json.loads(out)


# --- comparing ----------------------------------------------------------------------------
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# a number: not inside a word, but it may carry a unit of seconds ("0.19s", "12ms")
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|inf|nan)(?=m?s\b|\W|$)"
)


def _is_float_text(token: str) -> bool:
    return any(c in token for c in ".eEn") or "inf" in token


def _split(text: str, masked: bool) -> tuple[str, list[float]]:
    """``text`` with its numbers taken out: (the text with a placeholder per number, the
    numbers). Masked: floating point numbers become ``#`` and are not returned."""
    numbers: list[float] = []

    def take(match: re.Match) -> str:
        token = match.group(0)
        if masked and _is_float_text(token):
            return "#"
        numbers.append(float(token))
        return "{}"

    shape = _NUMBER.sub(take, _ADDRESS.sub("0x?", text))
    return "".join(shape.split()), numbers  # (padding varies with the numbers' widths)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=2e-3, abs_tol=1e-4)


def compare(program: Program, expected: str, actual: str) -> str | None:
    """None when the outputs agree, else where they first differ."""
    masked = program.compare == "masked"
    want, got = expected.splitlines(), actual.splitlines()
    if program.unordered:
        want, got = sorted(want), sorted(got)
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        w_text, w_nums = _split(w, masked)
        g_text, g_nums = _split(g, masked)
        if w_text != g_text or len(w_nums) != len(g_nums):
            return f"line {i + 1}: torch printed {w.strip()!r:.160}, minitorch {g.strip()!r:.160}"
        for a, b in zip(w_nums, g_nums, strict=True):
            if not _close(a, b):
                return f"line {i + 1}: torch printed {a!r}, minitorch {b!r} ({w.strip()!r:.120})"
    if len(want) != len(got):
        return f"torch printed {len(want)} lines, minitorch {len(got)}"
    return None


def _last_error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Exit|Interrupt)\b", line):
            return line.strip()
    return lines[-1].strip() if lines else "(no output on stderr)"


def judge(program: Program, torch_result: dict, mini_result: dict) -> tuple[str, str]:
    """(status, reason): ``same``, ``different``, ``fail`` (minitorch did not finish) or
    ``torch-fail`` (the program does not run on torch: a corpus bug)."""
    if torch_result["rc"] != 0:
        return "torch-fail", _last_error_line(torch_result["stderr"])
    if mini_result["timed_out"]:
        return "fail", f"timed out after {mini_result['seconds']} s"
    if mini_result["rc"] != 0:
        return "fail", _last_error_line(mini_result["stderr"])
    reason = compare(program, torch_result["stdout"], mini_result["stdout"])
    return ("same", "") if reason is None else ("different", reason)


def run_corpus(
    programs: list[Program], jobs: int = 2, timeout: float = 120.0, torch_cache: dict | None = None
) -> dict[str, tuple[str, str]]:
    """Run both modes (torch only for programs not in ``torch_cache``, which it fills:
    program name -> torch's result, for the caller to keep) and judge each program."""
    torch_cache = {} if torch_cache is None else torch_cache
    todo = [p for p in programs if p.name not in torch_cache]
    mini = start("minitorch", programs, jobs, timeout)
    if todo:
        torch_results = collect(start("torch", todo, jobs, timeout), "torch")
        torch_cache.update(torch_results)
    mini_results = collect(mini, "minitorch")
    return {p.name: judge(p, torch_cache[p.name], mini_results[p.name]) for p in programs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="programs at once per mode")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per program")
    parser.add_argument("--record", action="store_true", help="write torch_outputs.json")
    parser.add_argument("--serve", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        results = serve(args.serve, [Path(n) for n in args.names], args.jobs, args.timeout)
        json.dump(results, sys.stdout)
        return
    programs = discover(args.names or None)
    cache: dict = {}
    t0 = time.monotonic()
    verdicts = run_corpus(programs, args.jobs, args.timeout, cache)
    if args.record:
        record(programs, cache)
    counts: dict[str, int] = {}
    for p in programs:
        status, reason = verdicts[p.name]
        counts[status] = counts.get(status, 0) + 1
        print(f"{status:11s} {p.name:42s} {reason}")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"\n{len(programs)} programs: {summary} ({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
