"""Your minitorch: the package runs the pieces you wrote in the exercise notebooks.

::

    with minitorch.mine.use("exercises/") as mine:   # or a notebook, or globals()
        print(mine)                                  # which pieces are yours
        ...                                          # the framework now runs them

Inside the block, every finished piece (one that no longer raises the exercise's
``NotImplementedError``) replaces the package's own at its real call sites: the strides
of every new tensor, the backward engine, ``optim.Adam.step``, the GradScaler, the JIT
passes, DDP's ring and buckets. A piece that is unfinished, missing, or calls an unfinished
one stays the package's, and the report says so. When a piece of yours raises inside the
framework, the error carries a note naming its exercise. Where a call needs more than the
exercise asked for (a backward pass with hooks, Adam with ``weight_decay``), the package's
piece runs that call and the report counts it.

``MINITORCH_MINE=path`` does the same for a whole process, from ``import minitorch`` on.

Both run the notebook's code in your process, as you, with no sandbox and no time limit,
exactly as running its cells in JupyterLab would: use them on your own work. To run
somebody else's notebook, grade it (``python -m minitorch.grade``), which runs it in the
sandbox; the grading commands ignore ``MINITORCH_MINE``.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .patching import Patches, defined_by_learner, named, unfinished
from .pieces import PIECES, Piece, resolve

__all__ = ["Mine", "Mismatch", "active", "compare", "use"]

_CHAPTER_MODULES = ("tensors", "autograd", "modules", "amp", "jit", "ddp", "gpu", "gpt")


def _load_pieces() -> None:
    import importlib

    for name in _CHAPTER_MODULES:
        importlib.import_module(f"{__name__}.{name}")


@dataclass
class Status:
    """Whose piece an exercise's is, and why."""

    exercise: str
    yours: bool
    why: str
    origin: str = ""
    site: str = ""
    ran: int = 0
    package_ran: Counter = field(default_factory=Counter)

    def line(self) -> str:
        from minitorch.course import manifest

        try:
            title = manifest.exercise(self.exercise).title
        except KeyError:
            title = ""
        if not self.yours:
            return f"{self.exercise}  package's  {title}: {self.why}"
        calls = f"; ran {_times(self.ran)}" if self.ran else ""
        extra = "".join(
            f"; the package's ran {_times(n)} ({why})" for why, n in self.package_ran.items()
        )
        return f"{self.exercise}  yours      {title}: {self.site}{calls}{extra}"


def _is(names: list) -> str:
    return "is" if len(names) == 1 else "are"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


class Mine:
    """What :func:`use` installed: ``statuses`` per exercise, ``yours()`` the ids of the
    pieces that are the learner's; printing it gives the table."""

    def __init__(self, source_label: str) -> None:
        self.source = source_label
        self.statuses: dict[str, Status] = {}
        self.problems: list[str] = []
        self._patches = Patches()
        self._lock = threading.Lock()

    # --- what the installers call --------------------------------------------------------
    def wrap(self, exercise: str, label: str, func: Callable) -> Callable:
        """The learner's ``func``, counting its calls and naming the exercise in its errors."""
        status = self.statuses[exercise]
        noted = named(exercise, label, func)

        def counted(*args: Any, **kwargs: Any) -> Any:
            status.ran += 1
            return noted(*args, **kwargs)

        counted.__wrapped__ = func  # type: ignore[attr-defined]
        counted.__name__ = getattr(func, "__name__", label)
        counted.__qualname__ = getattr(func, "__qualname__", label)
        counted.__doc__ = getattr(func, "__doc__", None)
        # The learner's other pieces call it by its global name (02.7's walk calls 02.6's
        # order): route those calls through the count too, while the pieces are in use.
        home = getattr(func, "__globals__", None)
        if isinstance(home, dict) and home.get(counted.__name__) is func:
            self._patches.replace_item(home, counted.__name__, counted)
        return counted

    def package_ran(self, exercise: str, why: str) -> None:
        """Count a call the package's piece ran because it needed more than the exercise."""
        self.statuses[exercise].package_ran[why] += 1

    @property
    def patches(self) -> Patches:
        return self._patches

    # --- the report ------------------------------------------------------------------------
    def yours(self) -> list[str]:
        return [ex for ex, s in self.statuses.items() if s.yours]

    def __repr__(self) -> str:
        lines = [f"Your minitorch, from {self.source}:"]
        lines += ["  " + s.line() for s in sorted(self.statuses.values(), key=_order)]
        lines += [f"  (while loading: {p})" for p in self.problems]
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def _order(status: Status) -> tuple[int, ...]:
    return tuple(int(part) for part in status.exercise.split("."))


_active: list[Mine] = []


def active() -> Mine | None:
    """The innermost :func:`use` in effect, if any."""
    return _active[-1] if _active else None


def _candidates(
    chapter: str | None, defs: Any
) -> Iterator[tuple[Piece, list[Any] | None, str | None]]:
    """Each piece the definitions can speak for: with the learner's objects, or a reason why
    not. A namespace of unknown chapter (``globals()``) speaks only for pieces it defines."""
    for piece in PIECES.values():
        if chapter is not None and not piece.exercise.startswith(chapter + "."):
            continue
        objs = [resolve(defs, name) for name in piece.names]
        mine = [o is not None and defined_by_learner(o) for o in objs]
        if chapter is None and not any(mine):
            continue
        missing = [n for n, ok in zip(piece.names, mine, strict=True) if not ok]
        if missing:
            yield piece, None, f"{', '.join(missing)} {_is(missing)} not defined in the notebook"
            continue
        stubs = [n for n, o in zip(piece.names, objs, strict=True) if unfinished(o)]
        if stubs:
            yield (
                piece,
                None,
                f"{', '.join(stubs)} {_is(stubs)} not finished (raises NotImplementedError)",
            )
            continue
        yield piece, objs, None


@contextmanager
def use(source: Any, only: Any = None) -> Iterator[Mine]:
    """Run the framework on the learner's pieces from ``source`` (an exercise notebook, a
    folder of them, or a notebook's ``globals()``) until the block ends; ``only`` (exercise
    ids) limits it to those pieces.

    A notebook's cells run here, in your process, with your rights and no time limit (as
    in JupyterLab): use it on your own work; grade anyone else's notebook instead."""
    mine = _install(source, only)
    try:
        yield mine
    finally:
        _uninstall(mine)


def _install(source: Any, only: Any = None) -> Mine:
    from . import source as sources

    _load_pieces()
    only = _checked_only(only)
    label = "your notebook's globals()" if isinstance(source, dict) else str(source)
    mine = Mine(label)
    found: dict[str, tuple[Piece, list[Any], str]] = {}
    loaded = sources.namespaces(source)
    _check_only_chapters(only, [chapter for _, chapter, _, _ in loaded])
    for origin, chapter, defs, problems in loaded:
        mine.problems += problems
        for piece, objs, why in _candidates(chapter, defs):
            if only is not None and piece.exercise not in only:
                continue
            if objs is None:
                if piece.exercise not in found:
                    mine.statuses[piece.exercise] = Status(piece.exercise, False, why, origin)
                continue
            found[piece.exercise] = (piece, objs, origin)
    # A piece that calls another exercise's piece needs that one finished too.
    ready = dict(found)
    changed = True
    while changed:
        changed = False
        for ex, (piece, _, origin) in list(ready.items()):
            blocked = [u for u in piece.uses if u not in ready and (only is None or u in only)]
            if blocked:
                why = f"it calls your {', '.join(blocked)}, which is not finished"
                mine.statuses[ex] = Status(ex, False, why, origin)
                del ready[ex]
                changed = True
    try:
        for ex in sorted(ready, key=lambda e: tuple(int(p) for p in e.split("."))):
            piece, objs, origin = ready[ex]
            mine.statuses[ex] = Status(ex, True, "", origin, piece.site)
            piece.install(mine, *objs)
    except BaseException:
        mine.patches.restore()
        raise
    _active.append(mine)
    return mine


def _checked_only(only: Any) -> set[str] | None:
    """``only`` as a set of exercise ids, each one with a piece the framework runs; a
    ValueError naming an unknown id and the ids there are."""
    if only is None:
        return None
    ids = [only] if isinstance(only, str) else list(only)
    with_pieces = sorted({p.exercise for p in PIECES.values()}, key=_id_order)
    for exercise in ids:
        if exercise not in with_pieces:
            raise ValueError(
                f"mine.use(only=...): no exercise {exercise!r} has a piece the framework "
                f"runs; those that do are {', '.join(with_pieces)}"
            )
    return set(ids)


def _check_only_chapters(only: set[str] | None, chapters: list[str | None]) -> None:
    """A ValueError for an id of ``only`` from a chapter none of the notebooks is."""
    if only is None or None in chapters:
        return
    for exercise in sorted(only, key=_id_order):
        if exercise.split(".")[0] not in chapters:
            raise ValueError(
                f"mine.use(only=...): exercise {exercise} is chapter "
                f"{exercise.split('.')[0]}'s, and the notebooks given are chapter "
                f"{', '.join(sorted(c for c in chapters if c))}'s"
            )


def _id_order(exercise: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in exercise.split("."))


def _uninstall(mine: Mine) -> None:
    mine.patches.restore()
    if mine in _active:
        _active.remove(mine)


#: The course's grading commands (``python -m ...``): they run a notebook in the sandbox
#: only, never in their own process, so they ignore ``MINITORCH_MINE``.
GRADING_COMMANDS = (
    "minitorch.grade",
    "minitorch.course.grade",
    "minitorch.course.gradescope",
    "minitorch.course.batch",
)


def grading_command(argv: list[str] | None = None) -> str | None:
    """The grading command this process was started as (``sys.orig_argv``), or None."""
    import sys

    argv = list(getattr(sys, "orig_argv", []) if argv is None else argv)
    args = iter(argv[1:])
    for arg in args:  # the interpreter's options, up to what it runs
        if arg in ("-W", "-X"):
            next(args, None)  # (their value)
        elif arg.startswith("-m"):
            module = arg[2:] or next(args, "")  # -m x, or -mx
            return module if module in GRADING_COMMANDS else None
        elif arg == "-c" or arg.startswith("-c") or not arg.startswith("-"):
            return None  # a command or a script: the rest are its own arguments
    return None


def _from_environment() -> Mine | None:
    """``MINITORCH_MINE=path``: install the learner's pieces for the rest of the process.

    It runs that notebook's code here, as this process's user, with no time limit: use it
    on your own work. A grading command ignores it (and drops it from the environment its
    workers inherit), saying so on stderr."""
    import sys

    path = os.environ.get("MINITORCH_MINE")
    if not path:
        return None
    command = grading_command()
    if command is not None:
        del os.environ["MINITORCH_MINE"]
        print(
            f"minitorch: MINITORCH_MINE={path} is ignored by python -m {command}: grading "
            "runs each notebook in its sandbox, never in this process",
            file=sys.stderr,
        )
        return None
    mine = _install(path)
    yours = len(mine.yours())
    print(
        f"minitorch: MINITORCH_MINE={path}: {yours} of {len(mine.statuses)} pieces are yours "
        "(print(minitorch.mine.active()) lists them)",
        file=sys.stderr,
    )
    return mine


class Mismatch(AssertionError):
    """The learner's pieces made the framework compute something else than the package's;
    ``package`` and ``yours`` are the two results, ``exercises`` the pieces that changed it."""

    package: Any = None
    yours: Any = None
    exercises: list = []  # noqa: RUF012 - replaced per instance


def _close(a: Any, b: Any, tol: float) -> bool:
    import numpy as np

    from ..tensor import Tensor

    if isinstance(a, Tensor):
        a, b = a.detach().numpy(), b.detach().numpy() if isinstance(b, Tensor) else b
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
        )
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(_close(x, y, tol) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (np.ndarray, float, np.floating)):
        b = np.asarray(b)
        return np.shape(a) == b.shape and bool(
            np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
        )
    return a == b


@dataclass
class Comparison:
    """The workload's result on the package's pieces and on the learner's."""

    package: Any
    yours: Any
    mine: Mine


def compare(workload: Callable[[], Any], source: Any, tol: float = 1e-4) -> Comparison:
    """Run ``workload()`` on the package's pieces, then on the learner's from ``source``
    (where no piece of the learner's is finished, once: both results are that one).

    When the results differ (beyond ``tol``), or the learner's run raises, each of the
    learner's pieces is tried alone to find the ones that change it, and :class:`Mismatch`
    names their exercises (a piece that only calls a wrong one, as 02.7's walk calls
    02.6's order, is not blamed for it).
    """
    package = workload()
    failure: Exception | None = None
    yours: Any = None
    with use(source) as mine:
        if not mine.yours():  # the same pieces would run again: nothing to compare
            return Comparison(package, package, mine)
        try:
            yours = workload()
        except Exception as err:
            failure = err
    if failure is None and _close(package, yours, tol):
        return Comparison(package, yours, mine)
    culprits = [e for e in mine.yours() if not _same_alone(workload, source, e, package, tol)]
    uses = {e: PIECES[e].uses for e in culprits if e in PIECES}
    culprits = [e for e in culprits if not any(u in culprits for u in uses.get(e, ()))]
    named = ", ".join(culprits) or "several pieces together"
    what = (
        f"raised {type(failure).__name__}: {failure}"
        if failure is not None
        else "computed something else than the package's "
        f"({_first_difference(package, yours, tol)})"
    )
    err = Mismatch(
        f"your framework {what}. The piece(s) of exercise {named} change the result: check "
        "them again."
    )
    err.package, err.yours, err.exercises = package, yours, culprits
    raise err from failure


def _same_alone(
    workload: Callable[[], Any], source: Any, exercise: str, package: Any, tol: float
) -> bool:
    """Does the workload give the package's result with only this one piece of the learner's?"""
    with use(source, only=[exercise]):
        try:
            return _close(package, workload(), tol)
        except Exception:
            return False


def _first_difference(a: Any, b: Any, tol: float, where: str = "") -> str:
    """Where two results first differ, and both values there: ``[0][12]: the package's
    0.51, yours 0.73``."""
    import numpy as np

    from ..tensor import Tensor

    if isinstance(a, Tensor):
        a = a.detach().numpy()
    if isinstance(b, Tensor):
        b = b.detach().numpy()
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            if not _close(a[k], b[k], tol):
                return _first_difference(a[k], b[k], tol, f"{where}[{k!r}]")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not _close(x, y, tol):
                return _first_difference(x, y, tol, f"{where}[{i}]")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
        bad = ~np.isclose(a, b, rtol=tol, atol=tol, equal_nan=True)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            return (
                f"at {where or 'the result'}{list(index)}: the package's {a[index].tolist()!r}, "
                f"yours {b[index].tolist()!r}"
            )
    return f"at {where or 'the result'}: the package's {_short(a)}, yours {_short(b)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."
