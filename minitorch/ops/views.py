"""View ops: each maps a Layout (shape, strides, offset) to a new Layout over the same storage.

Backward of a view is the matching rearrangement of the gradient: reshape it back,
permute it back, sum it over the expanded dims, or scatter it back into zeros the size of
the input (slicing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backend import array_module
from ..function import Context, ViewFunction
from ..shape import Layout, infer_size, normalize_dim, numel, view_strides
from .elementwise import unbroadcast
from .registry import register


class View(ViewFunction):
    @staticmethod
    def forward(ctx: Context, x: Layout, shape: Sequence[int]) -> Layout:
        shape = infer_size(shape, numel(x.shape), "view")
        strides = view_strides(x.shape, x.strides, shape)
        if strides is None:
            raise RuntimeError(
                f"view: cannot view a tensor of shape {x.shape} and strides {x.strides} as "
                f"shape {shape}: the dims it would merge are not laid out back to back in "
                "storage (the tensor is not contiguous there). Use .reshape(...), which copies "
                "when it must, or .contiguous().view(...)"
            )
        ctx.shape = x.shape
        return Layout(shape, strides, x.offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return grad.reshape(ctx.shape), None


class Permute(ViewFunction):
    @staticmethod
    def forward(ctx: Context, x: Layout, dims: Sequence[int]) -> Layout:
        ndim = len(x.shape)
        if len(dims) != ndim:
            raise RuntimeError(
                f"permute: the tensor has {ndim} dims but dims={tuple(dims)} has {len(dims)}"
            )
        dims = tuple(normalize_dim(d, ndim, "permute") for d in dims)
        if sorted(dims) != list(range(ndim)):
            raise RuntimeError(f"permute: dims={dims} repeats a dim; each dim must appear once")
        ctx.dims = dims
        return Layout(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims), x.offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(*inverse), None


class Expand(ViewFunction):
    """Broadcast without copying: a dim of size 1 gets stride 0, so every index reads one value."""

    @staticmethod
    def forward(ctx: Context, x: Layout, sizes: Sequence[int]) -> Layout:
        sizes = tuple(sizes)
        extra = len(sizes) - len(x.shape)
        if extra < 0:
            raise RuntimeError(
                f"expand: the number of sizes {sizes} must be at least the tensor's number of "
                f"dims (shape {x.shape})"
            )
        shape, strides = [], []
        for i, size in enumerate(sizes):
            if i < extra:  # a new leading dim: every index reads the same elements
                if size < 0:
                    raise RuntimeError(f"expand: -1 is not allowed for the new leading dim {i}")
                shape.append(size)
                strides.append(0)
                continue
            old, stride = x.shape[i - extra], x.strides[i - extra]
            if size == -1 or size == old:
                shape.append(old)
                strides.append(stride)
            elif old == 1:
                shape.append(size)
                strides.append(0)
            else:
                raise RuntimeError(
                    f"expand: the expanded size {size} must match the existing size {old} at "
                    f"non-singleton dim {i}. Target sizes: {sizes}. Tensor sizes: {x.shape}"
                )
        ctx.shape = x.shape
        return Layout(tuple(shape), tuple(strides), x.offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return unbroadcast(grad, ctx.shape), None  # every copy's gradient adds up


class Squeeze(ViewFunction):
    @staticmethod
    def forward(ctx: Context, x: Layout, dims: Sequence[int]) -> Layout:
        keep = [i for i in range(len(x.shape)) if not (i in dims and x.shape[i] == 1)]
        ctx.shape = x.shape
        return Layout(tuple(x.shape[i] for i in keep), tuple(x.strides[i] for i in keep), x.offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return grad.reshape(ctx.shape), None


class Unsqueeze(ViewFunction):
    @staticmethod
    def forward(ctx: Context, x: Layout, dim: int) -> Layout:
        stride = x.strides[dim] * x.shape[dim] if dim < len(x.shape) else 1
        ctx.shape = x.shape
        return Layout(
            x.shape[:dim] + (1,) + x.shape[dim:],
            x.strides[:dim] + (stride,) + x.strides[dim:],
            x.offset,
        )

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return grad.reshape(ctx.shape), None


class AsStrided(ViewFunction):
    """Any layout at all, checked to stay inside the storage."""

    name = "as_strided"

    @staticmethod
    def forward(
        ctx: Context,
        x: Layout,
        size: Sequence[int],
        stride: Sequence[int],
        offset: int,
        storage_len: int,
    ) -> Layout:
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError(f"as_strided: size {size} and stride {stride} differ in length")
        if offset < 0 or any(s < 0 for s in stride) or any(n < 0 for n in size):
            raise RuntimeError(
                f"as_strided: sizes, strides and the offset must be non-negative, but got size "
                f"{size}, stride {stride}, storage_offset {offset}"
            )
        if numel(size):
            last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
            if last >= storage_len:
                raise RuntimeError(
                    f"as_strided: size {size}, stride {stride} and offset {offset} would read "
                    f"storage position {last}, past the end of a storage of {storage_len} elements"
                )
        ctx.geometry = (x, Layout(size, stride, offset), storage_len)
        return Layout(size, stride, offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        """Add each output element's gradient to the storage position it read, then read the
        input's elements back out of that storage-sized gradient."""
        from . import scatter_add  # (ops/indexing.py imports this module)

        x, out, storage_len = ctx.geometry
        device = grad.device
        flat = scatter_add(grad.reshape(-1), (storage_len,), (_positions(out, device),))
        grad_x = flat[(_positions(x, device),)].reshape(x.shape)
        return grad_x, None, None, None, None


class Slice(ViewFunction):
    """Basic indexing: ints pick (and drop) a dim, slices narrow it, None adds a dim."""

    name = "getitem"

    @staticmethod
    def grad_fn_name(x: Any, index: tuple) -> str:
        """PyTorch's node: the last step its indexing takes (``x[0]`` selects, ``x[1:]``
        slices, ``x[None]`` unsqueezes; a whole ``:`` is no step)."""
        for item in reversed(index):
            if item is None:
                return "UnsqueezeBackward0"
            if isinstance(item, slice):
                if item != slice(None):
                    return "SliceBackward0"
            elif item is not Ellipsis:
                return "SelectBackward0"
        return "AliasBackward0"

    @staticmethod
    def forward(ctx: Context, x: Layout, index: tuple) -> Layout:
        shape, strides, offset = [], [], x.offset
        dim = 0
        for item in expand_ellipsis(index, len(x.shape)):
            if item is None:
                shape.append(1)
                strides.append(0)
                continue
            if dim >= len(x.shape):
                raise IndexError(
                    f"getitem: too many indices for a tensor of shape {x.shape} (index {index})"
                )
            size, stride = x.shape[dim], x.strides[dim]
            if isinstance(item, slice):
                start, stop, step = item.indices(size)
                offset += start * stride
                shape.append(len(range(start, stop, step)))
                strides.append(stride * step)
            else:
                i = int(item)
                if not -size <= i < size:
                    raise IndexError(
                        f"getitem: index {i} is out of bounds for dim {dim} with size {size}"
                    )
                offset += (i % size) * stride
            dim += 1
        shape.extend(x.shape[dim:])
        strides.extend(x.strides[dim:])
        ctx.shape, ctx.index = x.shape, index
        return Layout(tuple(shape), tuple(strides), offset)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        from . import scatter_add  # (ops/indexing.py imports this module)

        # Zeros the input's size with the gradient written where the slice looked.
        return scatter_add(grad, ctx.shape, ctx.index, accumulate=False), None


def expand_ellipsis(index: tuple, ndim: int) -> tuple:
    """Replace ``...`` by as many full slices as the dims the other items leave untouched."""
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    out: list[Any] = []
    for item in index:
        if item is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(item)
    return tuple(out)


def _positions(layout: Layout, device: Any) -> Any:
    """The storage position of every element of ``layout``, as a flat int64 array."""
    xp = array_module(device)
    pos = xp.full(layout.shape, layout.offset, dtype=xp.int64)
    for k, (n, s) in enumerate(zip(layout.shape, layout.strides, strict=True)):
        axis = [1] * len(layout.shape)
        axis[k] = n
        pos = pos + (xp.arange(n, dtype=xp.int64) * s).reshape(axis)
    return pos.reshape(-1)


register(
    View,
    Permute,
    Expand,
    Squeeze,
    Unsqueeze,
    AsStrided,
    Slice,
)
