"""Indexing that copies (tensor/list/bool indices) and writing into a tensor in place."""

from __future__ import annotations

from typing import Any

from ..function import Context, Function


class Index(Function):
    """``t[idx]`` for advanced indices: gathers the picked elements into a new tensor."""

    name = "getitem"

    @staticmethod
    def forward(ctx: Context, a: Any, index: tuple) -> Any:
        return a[index]


def _write(t: Any, index: Any, value: Any, op: str) -> None:
    """Write ``value`` into ``t[index]`` through t's storage, and count the write."""
    from ..tensor import Tensor
    from . import to_backend_index

    if isinstance(value, Tensor):
        if value.device != t.device:
            raise RuntimeError(
                f"{op}: the value is on {value.device} but the tensor written to is on {t.device}"
            )
        value = value._data
    items = index if isinstance(index, tuple) else (index,)
    try:
        t._data[to_backend_index(items)] = value
    except (ValueError, TypeError) as err:
        shape = getattr(value, "shape", ())
        raise RuntimeError(
            f"{op}: cannot write a value of shape {shape} into a tensor of shape {t.shape} "
            f"at index {index!r}: {err}"
        ) from err
    t._storage.version += 1


def setitem(t: Any, index: Any, value: Any) -> None:
    """``t[index] = value``, in place."""
    _write(t, index, value, "setitem")


def copy_(t: Any, src: Any) -> Any:
    """Overwrite every element of ``t`` with ``src`` (broadcast and cast), in place."""
    _write(t, Ellipsis, src, "copy_")
    return t
