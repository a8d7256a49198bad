"""Indexing that copies (tensor/list/bool indices) and writing into a tensor in place.

Gathering and scattering are each other's backward: the gradient of ``t[index]`` is the
output gradient added into zeros of ``t``'s shape at ``index`` (``ScatterAdd``), and the
gradient of that scatter is the gather ``grad[index]`` again.
"""

from __future__ import annotations

from typing import Any

from .. import backend
from ..backend import array_module_of as xp
from ..checks import check_fill_value
from ..function import Context, Function
from ..tensor import Tensor
from .elementwise import unbroadcast
from .inplace import InplaceFunction
from .registry import register


class Index(Function):
    """``t[idx]`` for advanced indices: gathers the picked elements into a new tensor."""

    name = "getitem"

    @staticmethod
    def forward(ctx: Context, a: Any, index: tuple) -> Any:
        index = raw_index(index)
        ctx.shape, ctx.index = a.shape, index
        try:
            return a[index]
        except IndexError as err:
            raise IndexError(f"getitem: {err} (tensor shape {a.shape})") from err

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        # An index may pick the same element twice: those gradients add up.
        return ScatterAdd.apply(grad, ctx.shape, ctx.index, True)


def raw_index(index: tuple) -> tuple:
    """An index with its tensors replaced by their backend arrays. The ops take index tensors
    as they are, so that a tracer records them as the graph's values (a tensor index is data
    the graph reads, not a constant to bake in); their forwards read the arrays."""
    if not any(isinstance(i, Tensor) for i in index):
        return index
    return tuple(i._data if isinstance(i, Tensor) else i for i in index)


def _add_at(out: Any, index: tuple, values: Any) -> None:
    """``out[index] += values`` where repeated positions in ``index`` each add."""
    if _unique_positions(index):
        out[index] = values
        return
    backend.of_array(out).scatter_add(out, index, values)


def _unique_positions(index: tuple) -> bool:
    """True when ``index`` can't name a position twice (no integer arrays in it)."""
    return all(getattr(i, "dtype", None) is None or i.dtype.kind == "b" for i in index)


def _put(out: Any, index: tuple, values: Any, accumulate: bool) -> Any:
    """Write (or, accumulating, add: repeated indices add up) ``values`` at ``out[index]``."""
    if isinstance(values, (int, float)):  # checked to fit (check_fill_value): numpy's cast
        values = xp(out).asarray(values).astype(out.dtype)  # wraps -1 into uint8 as PyTorch
    if accumulate:
        _add_at(out, index, values)
    else:
        out[index] = values
    return out


class ScatterAdd(Function):
    """Zeros of ``shape`` with ``values`` added at ``index`` (the backward of indexing)."""

    name = "scatter_add"

    @staticmethod
    def forward(ctx: Context, values: Any, shape: tuple, index: tuple, accumulate: bool) -> Any:
        index = raw_index(index)
        ctx.index = index
        return _put(xp(values).zeros(shape, dtype=values.dtype), index, values, accumulate)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return grad[ctx.index], None, None, None  # gather back what was scattered


class IndexPut(Function):
    """``a`` with ``values`` written at ``index``: the record of ``t[index] = values``."""

    name = "index_put"

    @staticmethod
    def forward(ctx: Context, a: Any, values: Any, index: tuple, accumulate: bool) -> Any:
        index = raw_index(index)
        ctx.index, ctx.accumulate, ctx.value_shape = index, accumulate, getattr(values, "shape", ())
        return _put(a.copy(), index, values, accumulate)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        need_a, need_values = ctx.needs_input_grad[:2]
        grad_a = grad_values = None
        if need_a:  # overwritten elements no longer depend on the old value
            grad_a = grad if ctx.accumulate else IndexPut.apply(grad, 0.0, ctx.index, False)
        if need_values:
            grad_values = unbroadcast(grad[ctx.index], ctx.value_shape)
        return grad_a, grad_values, None, None


class IndexPut_(InplaceFunction):  # noqa: N801 - PyTorch's name for the in-place op
    """``t[index] = values`` (and ``t.copy_(src)``, ``t.fill_(v)``): write into t's memory.

    Recorded, t's new ``grad_fn`` is an ``IndexPutBackward0`` whose inputs are t's old
    value and ``values``; written through a view, the view's base is rebased.
    """

    name = "index_put_"
    records_as = IndexPut  # the graph shows IndexPutBackward0, as in PyTorch

    @staticmethod
    def forward(ctx: Context, out: Any, values: Any, index: tuple, accumulate: bool) -> Any:
        index = raw_index(index)
        ctx.index, ctx.accumulate, ctx.value_shape = index, accumulate, getattr(values, "shape", ())
        try:
            return _put(out, index, values, accumulate)
        except (ValueError, TypeError) as err:
            where = "" if index == (Ellipsis,) else f" at index {index!r}"
            raise ValueError(
                f"cannot write a value of shape {getattr(values, 'shape', ())} into a tensor "
                f"of shape {out.shape}{where}: {err}"
            ) from err

    backward = IndexPut.backward


class SetItem(IndexPut_):
    name = "setitem"
    records_as = IndexPut


class Copy_(IndexPut_):  # noqa: N801
    name = "copy_"
    records_as = IndexPut


def setitem(t: Any, index: Any, value: Any) -> None:
    """``t[index] = value``, in place."""
    from . import check_index, to_backend_index  # the functional API imports this module

    items = index if isinstance(index, tuple) else (index,)
    check_index(items, "setitem")
    _check_value(value, "setitem")
    check_fill_value(value, t.dtype, "setitem")
    SetItem.apply(t, value, to_backend_index(items), False)


def copy_(t: Any, src: Any) -> Any:
    """Overwrite every element of ``t`` with ``src`` (broadcast and cast), in place."""
    _check_value(src, "copy_")
    return Copy_.apply(t, src, (Ellipsis,), False)


def _check_value(value: Any, op: str) -> None:
    if isinstance(value, (str, bytes, dict, set)) or value is None:
        raise TypeError(f"{op}: can't write a {type(value).__name__} into a tensor")


register(
    IndexPut_,
    SetItem,
    Copy_,
    ScatterAdd,
    IndexPut,
)

register(Index, name="index")  # (its name in messages is getitem)
