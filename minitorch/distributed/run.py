"""``python -m minitorch.distributed.run --nproc N script.py args``: the launcher.

Like ``torchrun --nproc-per-node N``: starts N copies of the script with ``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT``
set (so ``init_process_group()`` needs no arguments), prefixes each line they print with
``[rankR]:``, and when one fails stops the others and exits non-zero naming that rank and
its error. ``--max-restarts K`` restarts the whole group up to K times; a script that
saves checkpoints resumes from its last one. ``-m module`` runs a module instead of a file.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from .launcher import launch


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch.distributed.run",
        description="Run a training script as N data-parallel worker processes.",
    )
    parser.add_argument(
        "--nproc",
        "--nproc-per-node",
        "--nproc_per_node",
        type=int,
        default=1,
        dest="nproc",
        help="number of workers (default 1)",
    )
    parser.add_argument(
        "--max-restarts",
        "--max_restarts",
        type=int,
        default=0,
        dest="max_restarts",
        help="restart the group up to K times on failure",
    )
    parser.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr")
    parser.add_argument(
        "--master-port",
        "--master_port",
        type=int,
        default=None,
        dest="master_port",
        help="default: a free port",
    )
    parser.add_argument(
        "--no-prefix", action="store_true", help="print the workers' lines without [rankR]:"
    )
    parser.add_argument(
        "-m", "--module", action="store_true", help="the script is a module name, run as python -m"
    )
    parser.add_argument("script", help="the training script (or module, with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.nproc < 1:
        parser.error(f"--nproc must be at least 1, got {args.nproc}")
    if args.max_restarts < 0:
        parser.error(f"--max-restarts must be >= 0, got {args.max_restarts}")
    if not args.module:
        problem = script_problem(args.script)
        if problem:
            parser.error(problem)
    return args


def script_problem(path: str) -> str:
    """What stops ``path`` from running at all (missing, unreadable, a syntax error), in one
    line, said once by the launcher rather than by every worker inside its rank prefix."""
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as err:
        return f"can't open script {path!r}: {err.strerror or err}"
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as err:  # (IndentationError and TabError are SyntaxErrors)
        where = f", line {err.lineno}" if err.lineno else ""
        return f"{type(err).__name__} in {path}{where}: {err.msg}"
    except ValueError as err:  # source with NUL bytes
        return f"can't compile script {path!r}: {err}"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    target = ["-m", args.script] if args.module else [args.script]
    command = [sys.executable, "-u", *target, *args.script_args]

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through launch(), which stops the workers

    signal.signal(signal.SIGTERM, stop)
    try:
        return launch(
            command,
            args.nproc,
            args.max_restarts,
            args.master_addr,
            args.master_port,
            prefix=not args.no_prefix,
        )
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
