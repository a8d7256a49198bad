"""Probes and judges: how an exercise test is split between two processes.

A *probe* runs the learner's piece and returns what it observed, as plain data::

    @probe
    def strides(nb, shape):
        return nb.contiguous_strides(shape)

A *judge* is the exercise test itself. It draws the inputs, hands them to the probe with
``run`` and decides, comparing with the reference, in the grader's own process::

    @exercise("01.1")
    def test_strides(run):
        shape = tuple(run.rng.integers(1, 5, size=3))
        got = run(strides, shape)
        assert tuple(got) == expected_strides(shape), f"..."

When the grader grades a notebook, the probe runs in the sandboxed process that loaded
the learner's notebook, and ``run`` receives its result as plain data (see
:mod:`minitorch.course.grading.plain`); ``check()`` and pytest run the probe in-process, through
the same conversion, so all three see the same values. When the learner's code raises,
``run`` raises a :class:`LearnerError` that is also an instance of the nearest builtin
exception class (a judge may ``except ValueError``).
"""

from __future__ import annotations

import builtins
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from minitorch.course.grading import delegation, plain
from minitorch.course.grading.delegation import Targets
from minitorch.course.grading.namespace import MissingDefinition
from minitorch.course.grading.results import ERROR, FAILED, NOT_IMPLEMENTED, TIMED_OUT
from minitorch.course.grading.timelimit import TimeLimitExceeded, time_limit
from minitorch.course.grading.tracebacks import (
    describe_exception,
    notebook_function,
    notebook_location,
)

Probe = TypeVar("Probe", bound=Callable[..., Any])

LOOP_HINT = "look for a loop that never ends"
#: The longest message about the learner's code that is kept.
MESSAGE_LIMIT = 1000
#: Statuses a probe failure may have (never "passed").
FAILURE_STATUSES = (ERROR, FAILED, NOT_IMPLEMENTED, TIMED_OUT)


def probe(func: Probe | None = None, *, forbid: Any = None) -> Any:
    """Mark a module-level function ``func(nb, *inputs)`` as a probe; returned unchanged.

    ``@probe(forbid=targets)`` also watches the probe for delegation: a call from the
    learner's code to one of ``targets`` (see :func:`minitorch.course.grading.delegation.forbid`),
    or to torch, fails the probe with "your answer used ...: write it yourself".
    """
    if func is None:
        return lambda f: probe(f, forbid=forbid)
    func.__minitorch_probe__ = True  # type: ignore[attr-defined]
    if forbid is not None:
        targets = forbid if isinstance(forbid, Targets) else delegation.forbid(*forbid)
        func.__minitorch_forbid__ = targets  # type: ignore[attr-defined]
    return func


def is_probe(func: Any) -> bool:
    return callable(func) and getattr(func, "__minitorch_probe__", False) is True


def timed_out_message(seconds: float, where: str = "") -> str:
    """``"timed out after 2 s (in `f`, line 3 of notebook cell 4): look for a loop ..."``."""
    place = f" ({where})" if where else ""
    return f"timed out after {seconds:g} s{place}: {LOOP_HINT}"


# -- the learner's exception, as data --------------------------------------------------------


def _builtin_kind(exc: BaseException) -> str:
    """The nearest builtin Exception class of ``exc`` ("ValueError"), else "Exception"."""
    for cls in type(exc).__mro__:
        if getattr(builtins, cls.__name__, None) is cls and issubclass(cls, Exception):
            return cls.__name__
    return "Exception"


def _raw_message(exc: BaseException) -> str:
    try:
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        text = text if isinstance(text, str) else repr(text)
    except BaseException:  # a __str__ that raises: no message
        return ""
    return plain.clean_text(text[: 4 * MESSAGE_LIMIT].strip(), MESSAGE_LIMIT)


def describe_failure(exc: BaseException, nb: Any) -> dict[str, str]:
    """What the learner's code raised, as plain data: status, kind, message, raw."""
    try:
        return _describe(exc, nb)
    except BaseException:  # a hostile exception object: say as little as is safe
        return {"status": ERROR, "kind": "Exception", "message": "your code raised", "raw": ""}


def _describe(exc: BaseException, nb: Any) -> dict[str, str]:
    kind, raw = _builtin_kind(exc), _raw_message(exc)
    where = notebook_location(exc, nb)
    if isinstance(exc, TimeLimitExceeded):
        return {"status": TIMED_OUT, "kind": "TimeoutError", "message": "", "raw": str(exc.seconds)}
    if isinstance(exc, MissingDefinition):
        message = str(exc)
        status = ERROR
        if exc.not_implemented:
            numbers = [str(f.cell) for f in exc.failures]
            if len(numbers) == 1:
                cells, verb, raises = f"cell {numbers[0]}", "raises", "that raise"
            else:
                listed = ", ".join(numbers[:-1]) + " and " + numbers[-1]
                cells, verb, raises = f"cells {listed}", "raise", "those raises"
            message = (
                f"`{exc.name}` is not defined: {cells} still {verb} NotImplementedError; "
                f"replace {raises} with your code"
            )
            status = NOT_IMPLEMENTED
        return {"status": status, "kind": "AttributeError", "message": message, "raw": raw}
    if isinstance(exc, NotImplementedError):
        function = notebook_function(exc, nb)
        if function is not None:
            message = (
                f"`{function}` still raises NotImplementedError: replace that raise with your code"
            )
        else:
            message = describe_exception(exc) + (f" ({where})" if where else "")
        return {"status": NOT_IMPLEMENTED, "kind": kind, "message": message, "raw": raw}
    if isinstance(exc, AssertionError):
        first = raw.splitlines()[0] if raw else ""
        message = first or ("assertion failed" + (f" ({where})" if where else ""))
        return {"status": FAILED, "kind": kind, "message": message, "raw": raw}
    message = describe_exception(exc) + (f" ({where})" if where else "")
    return {"status": ERROR, "kind": kind, "message": message, "raw": raw}


def call_probe(
    func: Callable[..., Any],
    nb: Any,
    args: list[Any],
    timeout: float | None,
    limit: float | None = None,
) -> Any:
    """Run a probe on the learner's definitions; the reply as JSON-ready data.

    ``{"ok": data}``, or ``{"raised": {status, kind, message, raw}}`` when the learner's
    code raised or ran past ``timeout`` seconds (what is left of the exercise's
    ``limit``, which the message names).
    """
    forbidden = getattr(func, "__minitorch_forbid__", None)
    with _switches_kept():
        return _call_probe(func, nb, args, timeout, limit, forbidden)


@contextmanager
def _switches_kept() -> Iterator[None]:
    """This thread's framework switches (grad mode, anomaly mode, autocast) as they were
    before the learner's code ran, whatever it left on or a time limit interrupted: the
    judges, and ``check()``'s notebook, run on after it in this process."""
    from minitorch import state
    from minitorch.amp import autocast_mode

    grad, anomaly = state.grad.enabled, state.anomaly.enabled
    try:
        with autocast_mode.state_kept():
            yield
    finally:
        state.grad.enabled, state.anomaly.enabled = grad, anomaly


def _call_probe(
    func: Callable[..., Any],
    nb: Any,
    args: list[Any],
    timeout: float | None,
    limit: float | None,
    forbidden: Any,
) -> Any:
    try:
        with time_limit(timeout):
            with delegation.forbidding(forbidden or (), nb):
                value = func(nb, *args)
            return {"ok": plain.encode(value)}
    except TimeLimitExceeded as exc:
        where = ""
        try:
            with time_limit(2.0):
                where = notebook_location(exc, nb)
        except BaseException:
            pass
        message = timed_out_message(limit or exc.seconds, where)
        return {"raised": {"status": TIMED_OUT, "kind": "TimeoutError", "message": message}}
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: the learner's code did it
        try:
            with time_limit(2.0):
                return {"raised": describe_failure(exc, nb)}
        except BaseException:
            return {"raised": {"status": ERROR, "kind": "Exception", "message": "your code raised"}}


# -- the judge's side --------------------------------------------------------------------------


class LearnerError(Exception):
    """The learner's code raised (or ran too long, or returned something unusable).

    ``status`` is how the test fails when the judge lets this through, ``message`` the
    one line shown; ``str()`` is the learner's own exception message.
    """

    status: str = ERROR
    message: str = ""
    kind: str = "Exception"

    def __str__(self) -> str:
        return self.args[0] if self.args else ""


_KINDS: dict[str, type[LearnerError]] = {}


def _one_message(cls: type) -> bool:
    """Whether ``cls("message")`` works (not so for ExceptionGroup, UnicodeDecodeError)."""
    try:
        cls("message")
    except Exception:
        return False
    return True


def learner_error(reply: Any) -> LearnerError:
    """A :class:`LearnerError` (also a ValueError, ... as the learner's was) from a reply."""
    if not isinstance(reply, dict):
        reply = {}
    status = reply.get("status")
    status = status if status in FAILURE_STATUSES else ERROR
    kind = reply.get("kind")
    builtin = getattr(builtins, kind, None) if isinstance(kind, str) else None
    if not (isinstance(builtin, type) and issubclass(builtin, Exception)) or not _one_message(
        builtin
    ):
        kind, builtin = "Exception", Exception
    cls = _KINDS.get(kind)
    if cls is None:
        bases = (LearnerError,) if builtin is Exception else (LearnerError, builtin)
        cls = _KINDS[kind] = type(f"Learner{kind}", bases, {"__module__": __name__})
    message = plain.clean_text(reply.get("message"), MESSAGE_LIMIT) or "your code raised"
    error = cls(plain.clean_text(reply.get("raw"), MESSAGE_LIMIT))
    error.status, error.message, error.kind = status, message, kind
    return error


def result_of(reply: Any) -> Any:
    """The probe's value from a decoded reply, or raise the :class:`LearnerError`."""
    if isinstance(reply, dict) and "ok" in reply:
        try:
            return plain.decode(reply["ok"])
        except plain.PlainDataError as exc:
            raise learner_error(
                {"status": ERROR, "message": f"your code returned something unusable: {exc}"}
            ) from None
    if isinstance(reply, dict) and "raised" in reply:
        raise learner_error(reply["raised"])
    raise learner_error({"status": ERROR, "message": "your code's process sent a malformed reply"})


class Runner:
    """What a judge calls: ``run(probe, *inputs)`` -> the probe's result, as plain data.

    ``run.rng`` is a numpy Generator seeded for this grading run, for drawing inputs;
    ``run.deadline`` (``time.monotonic()``) is when the exercise's time runs out, and
    ``run.limit`` the exercise's time limit in seconds.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = secrets.randbits(32) if seed is None else int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.deadline: float | None = None
        self.limit: float | None = None

    def __call__(self, func: Callable[..., Any], *inputs: Any) -> Any:
        if not is_probe(func):
            raise TypeError(f"run() takes a function decorated with @probe, not {func!r}")
        return result_of(self.call(func, plain.encode(list(inputs))))

    def time_left(self) -> float | None:
        if self.deadline is None:
            return None
        return max(self.deadline - time.monotonic(), 0.001)

    def call(self, func: Callable[..., Any], args: Any) -> Any:
        """Run the probe on encoded ``args``; its reply, parsed (see :func:`call_probe`)."""
        raise NotImplementedError


class LocalRunner(Runner):
    """Runs probes in this process, on ``nb`` (pytest, ``check()``), through the same
    conversions as the grader's sandbox."""

    def __init__(self, nb: Any, seed: int | None = None) -> None:
        super().__init__(seed)
        self.nb = nb

    def call(self, func: Callable[..., Any], args: Any) -> Any:
        inputs = plain.decode(plain.loads(plain.dumps(args)))
        reply = call_probe(func, self.nb, inputs, self.time_left(), self.limit)
        return plain.loads(plain.dumps(reply))


# -- what the sandbox gets of a test module: its probes and what they need ---------------------


def tensor_data(t: Any) -> dict[str, Any]:
    """A tensor as plain data, for a probe to return: ``{"type", "shape", "dtype",
    "values", "requires_grad"}`` (only ``"type"`` when ``t`` is not a minitorch Tensor).

    Read through Tensor's own methods: a subclass of the learner's that overrides them
    (a value that does its work when it is read, after the watch's window has closed)
    shows what it holds, not what it computes then."""
    from minitorch.tensor import Tensor

    if not isinstance(t, Tensor):
        return {"type": type(t).__name__}
    return {
        "type": "Tensor",
        "shape": tuple(int(n) for n in Tensor.shape.fget(t)),  # type: ignore[attr-defined]
        "dtype": str(Tensor.dtype.fget(t)),  # type: ignore[attr-defined]
        "values": np.array(Tensor.numpy(Tensor.detach(t)), copy=True),
        "requires_grad": bool(Tensor.requires_grad.fget(t)),  # type: ignore[attr-defined]
    }
