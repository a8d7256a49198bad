"""``Work``: the handle an asynchronous collective returns (``async_op=True``).

Collectives of one process group run one after another on the group's communication
thread, in the order they were issued (every rank must issue them in the same order).
``wait()`` blocks until this one has finished and re-raises its error if it failed.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from .errors import DistError


class Work:
    """A collective in flight: ``wait()``, ``is_completed()``, ``result()``."""

    def __init__(self, future: Future, name: str) -> None:
        self._future = future
        self.name = name

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the collective has finished; raise its error if it failed."""
        try:
            self._future.result(timeout)
        except DistError as exc:  # raise it here, without the thread pool's frames
            raise exc.with_traceback(None) from None
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        return self._future.done() and self._future.exception() is None

    def exception(self) -> BaseException | None:
        return self._future.exception() if self._future.done() else None

    def add_done_callback(self, fn: Any) -> None:
        """Call ``fn(work)`` when the collective finishes (on the communication thread)."""
        self._future.add_done_callback(lambda _: fn(self))

    def result(self) -> Any:
        """What the collective produced (the tensors it wrote), once finished."""
        try:
            return self._future.result()
        except DistError as exc:
            raise exc.with_traceback(None) from None

    def __repr__(self) -> str:
        state = "completed" if self.is_completed() else "pending"
        return f"Work({self.name}, {state})"
