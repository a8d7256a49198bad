"""Picking and masking: ``masked_fill``, ``tril``/``triu``, ``topk``, ``multinomial``, ``split``.

What a transformer needs beyond arithmetic: a causal mask (``tril``), scores hidden behind
it (``masked_fill``), the k most likely tokens (``topk``) and a draw from the rest
(``multinomial``), and the three thirds of a fused q/k/v projection (``split``, views).
Each op's backward sits under its forward: a mask lets the gradient through where it kept
the input; ``topk`` sends each value's gradient back to the position it came from; the
indices and the draws carry none.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backend import array_module_of as xp
from ..checks import as_bool, as_tensor, check_fill_value, describe
from ..dtypes import bool as bool_
from ..dtypes import is_floating
from ..function import Context, Function
from ..shape import broadcast_shapes, normalize_dim
from ..tensor import Tensor
from .compose import return_type
from .elementwise import Where, unbroadcast
from .indexing import ScatterAdd
from .registry import register


# --- masked_fill --------------------------------------------------------------------------
class MaskedFill(Function):
    """``value`` where ``mask`` is True, ``input`` elsewhere (in ``input``'s dtype)."""

    name = "masked_fill"

    @staticmethod
    def forward(a: Any, mask: Any, value: Any) -> Any:
        m = xp(a)
        return m.where(mask, m.asarray(value).astype(a.dtype), a)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, mask, value = inputs
        ctx.shape = a.shape
        ctx.save_for_backward(mask)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        (mask,) = ctx.saved_tensors
        need_a, _, need_value = ctx.needs_input_grad
        grad_a = unbroadcast(Where.apply(mask, 0.0, grad), ctx.shape) if need_a else None
        grad_value = Where.apply(mask, grad, 0.0).sum() if need_value else None
        return grad_a, None, grad_value


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` written where the bool ``mask`` (broadcast) is True."""
    as_tensor(input, "masked_fill"), as_tensor(mask, "masked_fill", "mask")
    if mask.dtype is not bool_:
        raise RuntimeError(
            f"masked_fill: only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.name} (shape {mask.shape}); compare it first (mask != 0)"
        )
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"masked_fill: only supports a 0-dimensional value tensor, but got tensor "
                f"with {value.ndim} dimension(s) (shape {value.shape})"
            )
    elif not isinstance(value, (int, float, np.number, np.bool_)):
        raise TypeError(f"masked_fill: value must be a number, but got {describe(value)}")
    check_fill_value(value, input.dtype, "masked_fill")
    broadcast_shapes(input.shape, mask.shape, op="masked_fill")
    return MaskedFill.apply(input, mask, value)


# --- tril / triu ----------------------------------------------------------------------------
def _triangle_op(keep: str, doc: str) -> type[Function]:
    """``Tril`` and ``Triu`` differ only in the triangle they keep (numpy's ``tril``/``triu``).
    Both are linear: backward keeps the same triangle of the gradient."""

    def forward(a: Any, diagonal: int) -> Any:
        return getattr(xp(a), keep)(a, diagonal)

    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        ctx.diagonal = inputs[1]

    def backward(ctx: Context, grad: Any) -> tuple:
        return op.apply(grad, ctx.diagonal), None

    attrs = {
        "__doc__": doc,
        "__module__": __name__,
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward),
    }
    op = type(keep.capitalize(), (Function,), attrs)
    return op


Tril = _triangle_op("tril", "The lower triangle (on and below ``diagonal``) of the last two dims.")
Triu = _triangle_op("triu", "The upper triangle (on and above ``diagonal``) of the last two dims.")


def _triangle(op: type[Function], input: Tensor, diagonal: int) -> Tensor:
    as_tensor(input, op.name)
    if isinstance(diagonal, (builtins.bool, np.bool_)) or not isinstance(
        diagonal, (int, np.integer)
    ):
        raise TypeError(f"{op.name}: diagonal must be an int, but got {describe(diagonal)}")
    if input.ndim < 2:
        raise RuntimeError(
            f"{op.name}: input tensor must have at least 2 dimensions, but got shape {input.shape}"
        )
    return op.apply(input, int(diagonal))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Zeros above diagonal ``diagonal`` of the last two dims (0: the main diagonal)."""
    return _triangle(Tril, input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Zeros below diagonal ``diagonal`` of the last two dims (0: the main diagonal)."""
    return _triangle(Triu, input, diagonal)


# --- topk -----------------------------------------------------------------------------------
topk_result = return_type("topk")


def _along(index: Any, dim: int) -> tuple:
    """The full index that reads ``index`` (positions along ``dim``) at every other position:
    ``a[_along(i, d)]`` is ``take_along_axis(a, i, d)``, and the same index scatters back."""
    m = xp(index)
    grids = list(m.ogrid[tuple(slice(n) for n in index.shape)]) if index.ndim else []
    grids[dim] = index
    return tuple(grids)


class Topk(Function):
    """The ``k`` largest (or smallest) elements along ``dim``, sorted, and their positions."""

    dtypes = "numeric"

    @staticmethod
    def forward(a: Any, k: int, dim: int, largest: bool) -> Any:
        m = xp(a)
        flat = a.reshape(1) if a.ndim == 0 else a
        key = flat
        if largest:  # sort by -a; NaN counts as the largest, as in PyTorch
            key = -flat.astype(np.int64) if flat.dtype.kind in "iu" else -flat
            if is_floating(flat.dtype):
                key = m.where(m.isnan(flat), -m.inf, key)
        order = m.argsort(key, axis=dim, kind="stable")
        indices = m.moveaxis(m.moveaxis(order, dim, 0)[:k], 0, dim)
        values = m.take_along_axis(flat, indices, axis=dim)
        if a.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        return values, indices.astype(np.int64)

    @staticmethod
    def setup_context(ctx: Context, inputs: tuple, output: Any) -> None:
        a, _, dim, _ = inputs
        indices = output[1]
        ctx.shape = a.shape
        ctx.index = _along(indices.reshape(1) if a.ndim == 0 else indices, dim)
        ctx.mark_non_differentiable(indices)

    @staticmethod
    def backward(ctx: Context, grad: Any, grad_indices: Any = None) -> tuple:
        # each value came from one position of the input: its gradient goes back there
        if not ctx.shape:
            return grad, None, None, None
        return ScatterAdd.apply(grad, ctx.shape, ctx.index, False), None, None, None


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """``(values, indices)`` of the ``k`` largest elements along ``dim`` (smallest with
    ``largest=False``), largest first. Indices carry no gradient; values send theirs back
    to where they were taken from. ``sorted=False`` is accepted; the result is sorted anyway."""
    as_tensor(input, "topk")
    as_bool(largest, "topk", "largest"), as_bool(sorted, "topk", "sorted")
    d = normalize_dim(dim, input.ndim, "topk")
    if isinstance(k, (builtins.bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"topk: k must be an int, but got {describe(k)}")
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(
            f"topk: selected index k={k} out of range for dim {d} of size {size} "
            f"(input shape {input.shape})"
        )
    values, indices = Topk.apply(input, int(k), d, largest)
    return topk_result(values, indices)


# --- multinomial ----------------------------------------------------------------------------
class Multinomial(Function):
    """Category indices drawn with the given (unnormalised) weights, row by row."""

    differentiable = False
    #: The jit's passes must neither fold, merge nor drop a draw (see ``jit.ops.is_pure``).
    pure = False

    @staticmethod
    def forward(
        ctx: Context, probs: Any, num_samples: int, replacement: bool, generator: Any
    ) -> Any:
        from ..random import rng_of

        rng = rng_of(generator)
        rows = probs.reshape(-1, probs.shape[-1]).astype(np.float64)
        rows = rows.get() if hasattr(rows, "get") else rows  # (cupy: draw on the host)
        if not np.isfinite(rows).all() or (rows < 0).any():
            raise RuntimeError(
                "multinomial: probability tensor contains either `inf`, `nan` or element < 0"
            )
        if (rows.sum(axis=1) <= 0).any():
            raise RuntimeError(
                "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
            )
        if replacement or num_samples == 1:
            # inverse CDF: the first category whose cumulative weight exceeds u ~ U[0, 1)
            cdf = np.cumsum(rows, axis=1)
            cdf /= cdf[:, -1:]
            u = rng.random((rows.shape[0], num_samples))
            out = np.stack(
                [np.searchsorted(c, r, side="right") for c, r in zip(cdf, u, strict=True)]
            )
        else:
            # without replacement: the num_samples first finishers of a race in which
            # category i takes an Exp(1) / p_i time (zero weights finish last)
            times = rng.standard_exponential(rows.shape)
            with np.errstate(divide="ignore"):
                times = np.where(rows > 0, times / np.where(rows > 0, rows, 1.0), np.inf)
            out = np.argsort(times, axis=1, kind="stable")[:, :num_samples]
        out = out.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))
        return xp(probs).asarray(out)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """``num_samples`` category indices per row of the 1-d or 2-d weights ``input``
    (non-negative, not all zero; they need not sum to 1), int64. Without ``replacement``
    each row's draws are distinct, so at most the number of categories."""
    as_tensor(input, "multinomial")
    as_bool(replacement, "multinomial", "replacement")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial: only supports floating-point dtypes for input, got {input.dtype.name}"
        )
    if isinstance(num_samples, (builtins.bool, np.bool_)) or not isinstance(
        num_samples, (int, np.integer)
    ):
        raise TypeError(f"multinomial: num_samples must be an int, but got {describe(num_samples)}")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples ({num_samples})")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError(
            f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
            f"replacement ({num_samples} > {input.shape[-1]})"
        )
    return Multinomial.apply(input.detach(), int(num_samples), replacement, generator)


# --- split ----------------------------------------------------------------------------------
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``: each ``split_size`` long (the last may be
    shorter), or the given list of sizes, which must add up to the dim's size."""
    as_tensor(tensor, "split", "tensor")
    d = normalize_dim(dim, tensor.ndim, "split")
    if tensor.ndim == 0:
        raise RuntimeError("split: expected a tensor with at least one dimension, got a 0-d one")
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)) and not isinstance(
        split_size_or_sections, (builtins.bool, np.bool_)
    ):
        step = int(split_size_or_sections)
        if step < 0 or (step == 0 and size):
            raise RuntimeError(
                f"split: split_size must be positive (or 0 for an empty dim), got {step}"
            )
        # an empty dim is one empty piece, as in PyTorch
        sizes = [min(step, size - start) for start in range(0, size, step)] if size else [0]
    elif isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != size or builtins.any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes: expects split_sizes to sum exactly to {size} (input "
                f"tensor's size at dimension {d}), but got split_sizes={sizes}"
            )
    else:
        raise TypeError(
            f"split: split_size_or_sections must be an int or a list of ints, but got "
            f"{describe(split_size_or_sections)}"
        )
    pieces, start, lead = [], 0, (slice(None),) * d
    for n in sizes:
        pieces.append(tensor[lead + (slice(start, start + n),)])
        start += n
    return tuple(pieces)


register(MaskedFill, Tril, Triu, Topk, Multinomial)
