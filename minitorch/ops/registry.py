"""The op registry: every op of the package under its name, registered explicitly.

A traced or saved graph names its ops (``"mul"``, ``"linear"``); loading a graph, the
fusion passes and the exporters find the Function by that name here. Each module that
defines ops registers them (``register(Add, Sub, ...)``) where it defines them; a name
taken twice is an error, so two ops can never be confused by a graph.
"""

from __future__ import annotations

from typing import Any

OPS: dict[str, type] = {}


def register(*ops: type, name: str | None = None) -> None:
    """Register Function classes under their ``name`` (or ``name``, for a single op)."""
    if name is not None and len(ops) != 1:
        raise TypeError("register: name= is for a single op")
    for op in ops:
        key = name or op.name
        taken = OPS.get(key)
        if taken is not None and taken is not op:
            raise RuntimeError(
                f"register: the op name {key!r} is taken by {taken.__module__}."
                f"{taken.__qualname__}; {op.__module__}.{op.__qualname__} needs another name"
            )
        OPS[key] = op


def lookup(name: str) -> Any:
    """The registered op called ``name`` (None if there is none)."""
    return OPS.get(name)


def elementwise() -> dict[str, type]:
    """The registered ops with a scalar formula (``scalar``): the ones every fuser,
    code generator and exporter treats elementwise, by name."""
    return {key: op for key, op in OPS.items() if getattr(op, "scalar", None)}
