"""Gradient buckets: which parameters' gradients travel together in one all-reduce.

One all-reduce per parameter pays the per-message latency hundreds of times; one for the
whole model cannot start until backward has finished. DDP cuts the difference: walk the
parameters in *reverse* order (the order backward produces their gradients) and fill
buckets of about ``bucket_cap_mb`` each; a bucket's all-reduce starts as soon as its last
gradient is ready, while backward goes on computing the gradients of earlier layers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from ..autograd.grad_mode import no_grad
from ..creation import zeros
from ..tensor import Tensor


def assign_buckets(
    sizes: Sequence[int], cap_bytes: int, keys: Sequence[Hashable] | None = None
) -> list[list[int]]:
    """Parameter indices grouped into buckets, walking from the last parameter to the first.

    ``sizes[i]`` is parameter i's gradient size in bytes. A parameter joins the open bucket
    of its key (dtype and device: one flat buffer holds one dtype); a bucket closes once it
    holds ``cap_bytes`` or more. Buckets come out in the order they start filling, so
    ``assign_buckets([4, 4, 4, 4, 4], 8)`` is ``[[4, 3], [2, 1], [0]]``.
    """
    if cap_bytes <= 0:
        raise ValueError(f"assign_buckets: cap_bytes must be positive, got {cap_bytes}")
    keys = keys if keys is not None else [None] * len(sizes)
    open_buckets: dict = {}  # key -> (bucket, bytes so far)
    buckets: list[list[int]] = []
    for i in reversed(range(len(sizes))):
        key = keys[i]
        if key not in open_buckets:
            bucket: list[int] = []
            buckets.append(bucket)
            open_buckets[key] = (bucket, 0)
        bucket, filled = open_buckets[key]
        bucket.append(i)
        filled += sizes[i]
        if filled >= cap_bytes:
            del open_buckets[key]
        else:
            open_buckets[key] = (bucket, filled)
    return buckets


class Bucket:
    """One flat gradient buffer and where each of its parameters' gradients lives in it."""

    def __init__(self, index: int, params: list[Tensor]) -> None:
        self.index = index
        self.params = params
        total = sum(p.numel() for p in params)
        self.buffer = zeros(total, dtype=params[0].dtype, device=params[0].device)
        self.views: list[Tensor] = []
        offset = 0
        for p in params:
            n = p.numel()
            self.views.append(self.buffer[offset : offset + n].view(p.shape))
            offset += n
        self.pending = len(params)
        self.work: Any = None

    @property
    def nbytes(self) -> int:
        return self.buffer.numel() * self.buffer.element_size()

    def reset(self) -> None:
        self.pending = len(self.params)
        self.work = None

    def fill(self, k: int, grad: Tensor | None, as_view: bool) -> None:
        """Put parameter k's gradient into the buffer (zeros for no gradient)."""
        view = self.views[k]
        with no_grad():
            if grad is None:
                view.zero_()
            elif grad is not view:
                view.copy_(grad)
        if as_view and grad is not view:
            self.params[k].grad = view
        self.pending -= 1
