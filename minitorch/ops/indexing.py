"""Indexing that copies (tensor/list/bool indices) and writing into a tensor in place.

Gathering and scattering are each other's backward: the gradient of ``t[index]`` is the
output gradient added into zeros of ``t``'s shape at ``index`` (``ScatterAdd``), and the
gradient of that scatter is the gather ``grad[index]`` again.
"""

from __future__ import annotations

from typing import Any

from ..device import array_module_of as xp
from ..function import Context, Function, record_inplace
from .elementwise import unbroadcast


class Index(Function):
    """``t[idx]`` for advanced indices: gathers the picked elements into a new tensor."""

    name = "getitem"

    @staticmethod
    def forward(ctx: Context, a: Any, index: tuple) -> Any:
        ctx.shape, ctx.index = a.shape, index
        try:
            return a[index]
        except IndexError as err:
            raise IndexError(f"getitem: {err} (tensor shape {a.shape})") from err

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        # An index may pick the same element twice: those gradients add up.
        return ScatterAdd.apply(grad, ctx.shape, ctx.index, True)


def _add_at(out: Any, index: tuple, values: Any) -> None:
    """``out[index] += values`` where repeated positions in ``index`` each add."""
    if _unique_positions(index):
        out[index] = values
        return
    if hasattr(out, "__cuda_array_interface__"):
        import cupyx

        cupyx.scatter_add(out, index, values)
    else:
        xp(out).add.at(out, index, values)


def _unique_positions(index: tuple) -> bool:
    """True when ``index`` can't name a position twice (no integer arrays in it)."""
    return all(getattr(i, "dtype", None) is None or i.dtype.kind == "b" for i in index)


def _put(out: Any, index: tuple, values: Any, accumulate: bool) -> Any:
    """Write (or, accumulating, add: repeated indices add up) ``values`` at ``out[index]``."""
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
        ctx.index = index
        return _put(xp(values).zeros(shape, dtype=values.dtype), index, values, accumulate)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        from . import getitem

        return getitem(grad, ctx.index), None, None, None  # gather back what was scattered


class IndexPut(Function):
    """``a`` with ``values`` written at ``index``: the record of ``t[index] = values``."""

    name = "index_put"

    @staticmethod
    def forward(ctx: Context, a: Any, values: Any, index: tuple, accumulate: bool) -> Any:
        ctx.index, ctx.accumulate, ctx.value_shape = index, accumulate, getattr(values, "shape", ())
        return _put(a.copy(), index, values, accumulate)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        from . import getitem

        need_a, need_values = ctx.needs_input_grad[:2]
        grad_a = grad_values = None
        if need_a:  # overwritten elements no longer depend on the old value
            grad_a = grad if ctx.accumulate else IndexPut.apply(grad, 0.0, ctx.index, False)
        if need_values:
            grad_values = unbroadcast(getitem(grad, ctx.index), ctx.value_shape)
        return grad_a, grad_values, None, None


def _write(t: Any, index: Any, value: Any, op: str) -> None:
    """Write ``value`` into ``t[index]`` through t's storage, and count the write.

    With grad mode on, the write is recorded: ``t`` gets a new ``grad_fn`` (an
    ``IndexPutBackward``) whose inputs are t's old value and ``value``.
    """
    from ..autograd.grad_mode import _state
    from ..tensor import Tensor
    from . import to_backend_index

    value_tensor = value if isinstance(value, Tensor) else None
    if value_tensor is not None and value_tensor.device != t.device:
        raise RuntimeError(
            f"{op}: the value is on {value_tensor.device} but the tensor written to is on "
            f"{t.device}"
        )
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True)):
        raise RuntimeError(
            f"{op}: more than one element of the written-to tensor (shape {t.shape}, strides "
            f"{t.stride()}) refers to a single memory location, e.g. after expand(); "
            "clone() the tensor before writing to it"
        )
    items = index if isinstance(index, tuple) else (index,)
    backend_index = to_backend_index(items)
    track = _state.enabled and (
        t._requires_grad or (value_tensor is not None and value_tensor._requires_grad)
    )
    if track:
        _check_inplace(t, op)
    try:
        t._data[backend_index] = value_tensor._data if value_tensor is not None else value
    except (ValueError, TypeError) as err:
        shape = getattr(value, "shape", ())
        raise RuntimeError(
            f"{op}: cannot write a value of shape {shape} into a tensor of shape {t.shape} "
            f"at index {index!r}: {err}"
        ) from err
    t._storage.version += 1
    if track:
        whole = index is Ellipsis  # copy_: the old values don't matter any more
        record_inplace(
            IndexPut,
            t,
            (t, value, backend_index, False),
            (
                t._requires_grad and not whole,
                value_tensor is not None and value_tensor._requires_grad,
                False,
                False,
            ),
            {
                "index": backend_index,
                "accumulate": False,
                "value_shape": getattr(value, "shape", ()),
            },
        )


def _check_inplace(t: Any, op: str) -> None:
    """The in-place writes autograd can't record, refused with PyTorch's messages."""
    if t._requires_grad and t.grad_fn is None:
        raise RuntimeError(
            f"{op}: a leaf Variable that requires grad is being used in an in-place operation. "
            "(Update parameters inside `with minitorch.no_grad():`, or clone() the tensor.)"
        )
    base = t._base
    if base is not None:
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"{op}: a view of a leaf Variable that requires grad is being used in an "
                "in-place operation."
            )
        raise RuntimeError(
            f"{op}: in-place writes through a view are not recorded by minitorch's autograd "
            "when the view or the value requires grad; write into the base tensor instead "
            "(base[index] = value), or build the result out of place (minitorch.where, cat)."
        )


def setitem(t: Any, index: Any, value: Any) -> None:
    """``t[index] = value``, in place."""
    _write(t, index, value, "setitem")


def copy_(t: Any, src: Any) -> Any:
    """Overwrite every element of ``t`` with ``src`` (broadcast and cast), in place."""
    _write(t, Ellipsis, src, "copy_")
    return t
