"""Chapter 01's pieces in the framework: strides, positions, broadcasting, permute, sum."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import shape as shape_module
from ..ops import reduce, views
from ..shape import Layout
from .pieces import piece


@piece("01.1", "contiguous_strides", site="the strides of every new contiguous tensor")
def _strides(mine: Any, contiguous_strides: Any) -> None:
    learner = mine.wrap("01.1", "contiguous_strides", contiguous_strides)
    mine.patches.replace(shape_module, "contiguous_strides", lambda s: tuple(learner(s)))


@piece("01.2", "index_to_position", site="x[i, j, ...]: where an element sits in storage")
def _position(mine: Any, index_to_position: Any) -> None:
    learner = mine.wrap("01.2", "index_to_position", index_to_position)
    forward = views.Slice.forward

    def slice_forward(ctx: Any, x: Layout, index: tuple) -> Layout:
        ints = len(index) == len(x.shape) and all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in index
        )
        if not ints or not all(-n <= i < n for i, n in zip(index, x.shape, strict=True)):
            return forward(ctx, x, index)  # slices, None, ...: the package's (and its errors)
        picked = tuple(int(i) % n for i, n in zip(index, x.shape, strict=True))
        ctx.shape, ctx.index = x.shape, index
        return Layout((), (), int(learner(picked, x.strides, x.offset)))

    mine.patches.replace(views.Slice, "forward", staticmethod(slice_forward))


@piece("01.3", "unravel_index", site="your sum_dim (01.7), which walks the output with it")
def _unravel(mine: Any, unravel_index: Any) -> None:
    """Nothing to replace: numpy walks the storage in the package, and the learner's own
    sum_dim (01.7) is this piece's call site."""


@piece(
    "01.4",
    "broadcast_shapes",
    site="minitorch.broadcast_shapes, matmul's batch dims and the shape errors of elementwise ops",
)
def _broadcast(mine: Any, broadcast_shapes: Any) -> None:
    learner = mine.wrap("01.4", "broadcast_shapes", broadcast_shapes)
    package = shape_module.broadcast_shapes

    def shapes(*given: Any, op: str = "broadcast_shapes") -> tuple:
        try:
            return tuple(learner(*[tuple(s) for s in given]))
        except ValueError as refused:
            # Shapes that really don't broadcast get the package's message (PyTorch's
            # words, naming the op); a refusal of shapes that do broadcast is the piece's.
            expected = package(*given, op=op)
            raise ValueError(
                f"broadcast_shapes (exercise 01.4) refused {' and '.join(map(str, given))}, "
                f"which broadcast to {expected}: {refused}"
            ) from refused

    mine.patches.replace(shape_module, "broadcast_shapes", shapes)


@piece("01.5", "broadcast_index", site="no call of its own: numpy maps broadcast indices")
def _broadcast_index(mine: Any, broadcast_index: Any) -> None:
    """Nothing to replace: numpy maps broadcast indices in the package."""


class _Strided:
    """What ``permute`` sees of a tensor: its layout, and ``as_strided`` to make another."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.shape = tuple(layout.shape)
        self.ndim = len(self.shape)

    def dim(self) -> int:
        return self.ndim

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> Any:
        return tuple(self.layout.strides) if dim is None else self.layout.strides[dim]

    def storage_offset(self) -> int:
        return self.layout.offset

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> _Strided:
        offset = self.layout.offset if storage_offset is None else storage_offset
        return _Strided(Layout(tuple(size), tuple(stride), int(offset)))

    def __repr__(self) -> str:
        return f"<tensor layout shape={self.shape} strides={self.stride()}>"


@piece("01.6", "permute", site="Tensor.permute, .T and .mT: every transposed view")
def _permute(mine: Any, permute: Any) -> None:
    learner = mine.wrap("01.6", "permute", permute)
    forward = views.Permute.forward

    def permute_forward(ctx: Any, x: Layout, dims: Any) -> Layout:
        forward(ctx, x, dims)  # the package's checks of dims (and ctx.dims for backward)
        out = learner(_Strided(x), tuple(ctx.dims))
        if not isinstance(out, _Strided):
            raise TypeError(
                f"permute (exercise 01.6) returned {type(out).__name__}; it must return "
                "t.as_strided(shape, strides, offset): a view, not a copy"
            )
        return out.layout

    mine.patches.replace(views.Permute, "forward", staticmethod(permute_forward))


@piece("01.7", "sum_dim", site="Tensor.sum over dims, on the CPU", uses=("01.2", "01.3"))
def _sum(mine: Any, sum_dim: Any) -> None:
    from ..tensor import Tensor

    learner = mine.wrap("01.7", "sum_dim", sum_dim)
    forward = reduce.Sum.forward

    def sum_forward(a: Any, dim: Any, keepdim: bool, dtype: Any = None) -> Any:
        if not isinstance(a, np.ndarray) or a.dtype == np.bool_ or a.ndim == 0:
            return forward(a, dim, keepdim, dtype)
        want = forward(np.zeros((0,) * 0, dtype=a.dtype), None, False, dtype).dtype
        dims = range(a.ndim) if dim is None else dim
        out = Tensor._from_array(a)
        for d in sorted(dims, reverse=True):
            out = learner(out, d)
        data = np.asarray(out._data if isinstance(out, Tensor) else out).astype(want)
        if keepdim:
            data = data.reshape(tuple(1 if i in dims else n for i, n in enumerate(a.shape)))
        return data

    mine.patches.replace(reduce.Sum, "forward", staticmethod(sum_forward))
