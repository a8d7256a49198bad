"""Categorical: one of ``K`` categories, with probabilities ``probs`` (or ``logits``)."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..autograd import no_grad
from ..checks import as_tensor
from ..creation import full, zeros_like
from ..dtypes import finfo
from ..shape import broadcast_shapes
from ..tensor import Tensor
from .distribution import Distribution


def _logsumexp(x: Tensor) -> Tensor:
    """``log(sum(exp(x), -1))`` along the last dim, kept, without overflow."""
    top = ops.max(x, dim=-1, keepdim=True).values.detach()
    top = ops.where(ops.isfinite(top), top, zeros_like(top))
    return top + ops.log(ops.sum(ops.exp(x - top), dim=-1, keepdim=True))


class Categorical(Distribution):
    """Draws a category index in ``0 .. K-1``: give ``probs`` (non-negative, normalised
    along the last dim) or ``logits`` (unnormalised log-probabilities), not both. Leading
    dims are the batch."""

    _params = ("probs", "logits")

    def __init__(
        self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args: Any = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError(
                "Categorical: either `probs` or `logits` must be specified, but not both"
            )
        given = as_tensor(probs if logits is None else logits, "Categorical",
                          "probs" if logits is None else "logits")  # fmt: skip
        if given.ndim < 1:
            raise ValueError(
                f"Categorical: `{'probs' if logits is None else 'logits'}` parameter must be at "
                f"least one-dimensional, but got shape {tuple(given.shape)}"
            )
        super().__init__(tuple(given.shape[:-1]), (), validate_args)
        if self._validate_args:
            with no_grad():
                bad = ops.isnan(given).any().item()
                if logits is None:
                    bad = bad or (given < 0).any().item() or not (given.sum(-1) > 0).all().item()
            if bad:
                name = "probs" if logits is None else "logits"
                rule = "Simplex()" if logits is None else "IndependentConstraint(Real(), 1)"
                raise ValueError(
                    f"Expected parameter {name} ({type(given).__name__} of shape "
                    f"{tuple(given.shape)}) of distribution Categorical to satisfy the "
                    f"constraint {rule}, but found invalid values:\n{given}"
                )
        if logits is None:
            self.probs = given / given.sum(-1, keepdim=True)
            eps = finfo(given.dtype).eps  # PyTorch's probs_to_logits: away from 0 and 1
            self.logits = ops.log(ops.clamp(self.probs, min=eps, max=1 - eps))
        else:
            self.logits = given - _logsumexp(given)
            self.probs = ops.softmax(self.logits, dim=-1)
        self._num_events = given.shape[-1]

    @property
    def param_shape(self) -> tuple:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        """Undefined for categories: NaN, as PyTorch's."""
        return full(tuple(self.batch_shape), float("nan"), dtype=self.probs.dtype)

    variance = mean

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Category indices (int64) of shape ``sample_shape + batch_shape``."""
        shape = self._extended_shape(sample_shape)
        n = 1
        for s in tuple(sample_shape):
            n *= s
        with no_grad():
            rows = self.probs.reshape(-1, self._num_events)
            draws = ops.multinomial(rows, max(n, 1), True)  # (batch, n)
            draws = draws.transpose(0, 1)[:n]  # (n, batch)
        return draws.reshape(shape)

    def _check_value(self, value: Tensor) -> None:
        with no_grad():
            bad = (
                value.dtype.is_floating_point
                and not (value == ops.floor(value)).all().item()
                or (value < 0).any().item()
                or (value >= self._num_events).any().item()
            )
        if bad:
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support (IntegerInterval(lower_bound=0, upper_bound="
                f"{self._num_events - 1})) of the distribution {self!r}, but found invalid "
                f"values:\n{value}"
            )

    def log_prob(self, value: Tensor) -> Tensor:
        """The log-probability of each category index in ``value`` (broadcast against the
        batch)."""
        as_tensor(value, "Categorical.log_prob", "value")
        if self._validate_args:
            self._check_value(value)
        index = value.long().unsqueeze(-1)
        shape = broadcast_shapes(tuple(index.shape[:-1]), tuple(self.batch_shape))
        logits = self.logits.expand(*shape, self._num_events)
        index = index.expand(*shape, 1)
        return logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        """``-sum(p log p)`` over the categories (0 log 0 counts as 0)."""
        logits = ops.clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)
