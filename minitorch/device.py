"""Devices: where a tensor's storage lives (its array backend is in ``minitorch.backend``)."""

from __future__ import annotations


class device:  # noqa: N801 - PyTorch's spelling
    """Where a tensor's storage lives: ``device("cpu")`` or ``device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | device, index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        kind, _, idx = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'cuda' or 'cuda:N'")
        if idx:
            index = int(idx)
        if kind == "cuda" and index is None:
            index = 0
        self.type = kind
        self.index = index if kind == "cuda" else None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}'"
            + ("" if self.index is None else f", index={self.index}")
            + ")"
        )


CPU = device("cpu")


def as_device(spec: str | device | None) -> device:
    """Normalise ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a device (None means cpu)."""
    if spec is None:
        return CPU
    return spec if isinstance(spec, device) else device(spec)
