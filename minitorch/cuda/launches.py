"""A kernel launch described by types: what compiling a kernel for a GPU needs.

:class:`Array` is an array argument by its dtype and number of dims (``cupyx.jit`` compiles
a kernel for its arguments' types, not their values); :class:`Launch` is a kernel with the
arguments (arrays, :class:`Array` or numbers) and the block it is launched with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Array:
    """An array argument given by its type alone: what ``cupyx.jit`` compiles for."""

    dtype: str
    ndim: int = 1

    def __repr__(self) -> str:
        return f"{self.dtype}[{', '.join(':' * self.ndim)}]"


@dataclass(frozen=True)
class Launch:
    """A kernel with the arguments (or their types) and the block it is launched with."""

    name: str
    kernel: Any  # a minitorch.cuda.jit.RawKernel
    args: tuple
    block: tuple[int, int, int]
