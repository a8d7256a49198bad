"""``Size``: a tensor's shape as PyTorch hands it out (``torch.Size([2, 3])``), a tuple.

minitorch's own shapes are plain tuples (``(2, 3)``: what the lessons print and every
error message shows). PyTorch code run through ``minitorch.as_torch`` expects
``torch.Size``: there ``use_sizes()`` makes ``Tensor.shape`` and ``Tensor.size()`` return
``Size`` objects, which print as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from . import dtypes


class Size(tuple):
    """A shape: a tuple of ints that prints as ``torch.Size([2, 3])``; ``numel()`` is the
    product of its sizes."""

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        values = tuple(sizes)
        for v in values:
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(
                    f"Size: expected a sequence of ints, but got an element of type "
                    f"{type(v).__name__} ({v!r:.20})"
                )
        return super().__new__(cls, (v.__index__() for v in values))

    def numel(self) -> int:
        n = 1
        for v in self:
            n *= v
        return n

    def __repr__(self) -> str:
        return f"{dtypes.display_name}.Size({list(self)})"

    def __getitem__(self, index: Any) -> Any:
        out = tuple.__getitem__(self, index)
        return Size(out) if isinstance(index, slice) else out

    def __add__(self, other: Any) -> Size:
        return Size(tuple.__add__(self, tuple(other)))


def use_sizes() -> None:
    """``Tensor.shape`` and ``Tensor.size()`` return ``Size`` from now on (PyTorch code
    run through ``minitorch.as_torch``)."""
    from .tensor import Tensor

    if getattr(Tensor, "_sizes", False):
        return
    plain_size = Tensor.size

    def shape(self: Tensor) -> Size:
        return tuple.__new__(Size, self._data.shape)  # (ints already: no checks)

    def size(self: Tensor, dim: int | None = None) -> Any:
        return tuple.__new__(Size, self._data.shape) if dim is None else plain_size(self, dim)

    size.__doc__ = plain_size.__doc__
    Tensor._plain = (Tensor.__dict__["shape"], plain_size)
    Tensor.shape = property(shape, doc="The shape, as a ``Size``.")
    Tensor.size = size
    Tensor._sizes = True


def use_plain_shapes() -> None:
    """Undo :func:`use_sizes`: ``Tensor.shape`` and ``Tensor.size()`` return plain tuples
    again (a test that ran PyTorch code puts minitorch back as it found it)."""
    from .tensor import Tensor

    if not getattr(Tensor, "_sizes", False):
        return
    Tensor.shape, Tensor.size = Tensor._plain
    Tensor._sizes = False
