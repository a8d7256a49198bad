"""The registry of pieces: for each exercise, what the learner defines and where the
framework runs it.

Each chapter's module (``tensors``, ``autograd``, ...) declares its pieces with
:func:`piece`. An installer gets the :class:`~minitorch.mine.Mine` it works for, the
:class:`~minitorch.mine.patching.Patches` to make its replacements with, and the learner's
definitions in the order the piece names them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Piece:
    """One exercise's piece: the names the learner's notebook defines (``"Mul.backward"``
    is the ``backward`` of their class ``Mul``), where the framework calls it, the other
    exercises whose pieces it calls, and the installer."""

    exercise: str
    names: tuple[str, ...]
    site: str
    install: Callable[..., None]
    uses: tuple[str, ...] = ()


PIECES: dict[str, Piece] = {}


def piece(
    exercise: str, *names: str, site: str, uses: tuple[str, ...] = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare the installer of exercise ``exercise``'s piece."""

    def register(install: Callable[..., None]) -> Callable[..., None]:
        PIECES[exercise] = Piece(exercise, names, site, install, uses)
        return install

    return register


def resolve(namespace: dict[str, Any], name: str) -> Any:
    """``"Mul.backward"`` in ``namespace``: the class's own function (None when missing)."""
    head, _, attr = name.partition(".")
    obj = namespace.get(head)
    if obj is None or not attr:
        return obj
    found = getattr(obj, "__dict__", {}).get(attr)
    return getattr(found, "__func__", found)
