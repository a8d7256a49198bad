"""A time limit for a block of code, with SIGALRM, where the platform allows it."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class TimeLimitExceeded(BaseException):
    """Raised inside code that ran past its time limit.

    A ``BaseException`` so that a learner's ``except Exception:`` does not swallow it.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran longer than {seconds:g} s")
        self.seconds = seconds


def can_limit_time() -> bool:
    """Whether :func:`time_limit` can interrupt code here (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in the block if it runs longer than ``seconds``.

    Without SIGALRM (Windows) or off the main thread there is no limit. A timer that
    was already running is restarted with what was left of it when the block ends.
    """
    if not seconds or seconds <= 0 or not can_limit_time():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeLimitExceeded(seconds)

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_delay, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay:
            left = previous_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
