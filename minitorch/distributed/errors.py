"""The errors a process group raises: a peer that is gone, a collective that timed out.

Both are ``RuntimeError``s, as PyTorch's ``DistBackendError`` is, and both name the
collective and the rank that did not answer, so a crashed or diverged rank shows up as
an error on every other rank instead of a hang.
"""

from __future__ import annotations


class DistError(RuntimeError):
    """Base class of the errors of ``minitorch.distributed``."""


class DistBackendError(DistError):
    """A collective failed: a peer closed its connection (it exited or crashed)."""


class DistTimeoutError(DistError, TimeoutError):
    """A collective did not finish within the process group's timeout."""


class PeerGone(Exception):
    """Raised by a transport: ``rank`` closed its connection. The group turns it into a
    :class:`DistBackendError` that names the collective."""

    def __init__(self, rank: int, detail: str = "") -> None:
        super().__init__(rank, detail)
        self.rank = rank
        self.detail = detail


class PeerTimeout(Exception):
    """Raised by a transport: nothing came from ``rank`` before the deadline."""

    def __init__(self, rank: int | None, seconds: float) -> None:
        super().__init__(rank, seconds)
        self.rank = rank
        self.seconds = seconds
