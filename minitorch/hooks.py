"""Removable hook handles, returned by ``Tensor.register_hook`` and ``Module.register_*_hook``."""

from __future__ import annotations

from typing import Any


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict, hook: Any) -> None:
        RemovableHandle._next_id += 1
        self.id = RemovableHandle._next_id
        self._hooks = hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
