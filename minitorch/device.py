"""Devices: where a tensor's storage lives (its array backend is in ``minitorch.backend``)."""

from __future__ import annotations


class device:  # noqa: N801 - PyTorch's spelling
    """Where a tensor's storage lives: ``device("cpu")`` or ``device("cuda:0")``."""

    __slots__ = ("type", "index")

    def __init__(self, spec: str | device, index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        if not isinstance(spec, str):
            raise TypeError(
                f"device: expected a device string such as 'cpu' or 'cuda:0', or a device, but "
                f"got {type(spec).__name__} {spec!r}"
            )
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'cuda' or 'cuda:N'")
        if idx:
            if not idx.isdigit():
                raise ValueError(
                    f"device: invalid device string {spec!r}: the index after ':' must be a "
                    "non-negative int ('cuda:0')"
                )
            index = int(idx)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device: index must be an int, but got {index!r}")
            if index < 0:
                raise RuntimeError(f"device: device index must not be negative, but got {index}")
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


def as_device(spec: str | device | None, op: str | None = None) -> device:
    """Normalise ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a device (None means cpu); a bad
    spec is an error that names ``op`` when given."""
    if spec is None:
        return CPU
    if isinstance(spec, device):
        return spec
    try:
        return device(spec)
    except (TypeError, ValueError, RuntimeError) as err:
        if op is None:
            raise
        raise type(err)(f"{op}: {err}") from None
