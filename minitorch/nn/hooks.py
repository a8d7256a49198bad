"""Removable hook handles, as returned by ``register_forward_hook`` and friends."""

from __future__ import annotations

from collections import OrderedDict
from itertools import count
from typing import Any

_ids = count()


class RemovableHandle:
    """``handle.remove()`` unregisters the hook it was returned for."""

    def __init__(self, hooks: OrderedDict) -> None:
        self.id = next(_ids)
        self._hooks = hooks

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
