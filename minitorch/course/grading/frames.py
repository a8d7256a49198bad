"""Tags on the result channel's frames: the grader knows which frames its worker sent.

The worker and the notebook it loads share a process, so the notebook's code can reach
the channel's file descriptor and write frames of its own (a ``loaded`` frame that hides
the real load errors, a reply that passes a test). So the grader sends the worker a fresh
random key with the setup frame, before any cell runs; from then on every frame the worker
sends starts with ``HMAC-SHA256(key, sequence number + payload)``. A frame written without
the key fails the check, which the grader reports as forged (a review flag), and the
sequence number keeps a copied frame from being sent again.

What this does not stop: code that finds the key in the worker's memory (gc, ctypes). That
takes code the review flags (``gc.get_objects``, ``ctypes``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TAG_BYTES = 32


def _tag(key: bytes, sequence: int, payload: bytes) -> bytes:
    return hmac.new(key, sequence.to_bytes(8, "big") + payload, hashlib.sha256).digest()


class Signer:
    """The worker's side: tags each payload it sends, in order."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._sequence = 0

    def seal(self, payload: bytes) -> bytes:
        tag = _tag(self._key, self._sequence, payload)
        self._sequence += 1
        return tag + payload


class Verifier:
    """The grader's side: checks each frame's tag, in order; a fresh key each time."""

    def __init__(self) -> None:
        self.key = secrets.token_bytes(32)
        self._sequence = 0

    def open(self, frame: bytes) -> bytes | None:
        """The payload of a frame the worker sent, or None for one it did not."""
        tag, payload = frame[:TAG_BYTES], frame[TAG_BYTES:]
        if len(tag) < TAG_BYTES or not hmac.compare_digest(
            tag, _tag(self.key, self._sequence, payload)
        ):
            return None
        self._sequence += 1
        return payload
