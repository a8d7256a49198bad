"""Normal: the Gaussian with mean ``loc`` and standard deviation ``scale``."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..autograd import no_grad
from ..creation import randn, tensor
from ..dtypes import get_default_dtype
from ..shape import broadcast_shapes
from ..tensor import Tensor
from .distribution import Distribution

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


def _broadcast_all(*values: Any) -> list[Tensor]:
    """Numbers as tensors (the tensors' dtype, else the default), all of one shape."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else get_default_dtype()
    made = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype) for v in values]
    shape = broadcast_shapes(*(tuple(t.shape) for t in made))
    return [t.expand(*shape) if tuple(t.shape) != shape else t for t in made]


class Normal(Distribution):
    """N(loc, scale^2), elementwise over the broadcast shape of ``loc`` and ``scale``
    (``scale`` positive)."""

    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), (), validate_args)
        if self._validate_args:
            with no_grad():
                bad = not (self.scale > 0).all().item()
            if bad:
                raise ValueError(
                    f"Expected parameter scale ({type(self.scale).__name__} of shape "
                    f"{tuple(self.scale.shape)}) of distribution Normal to satisfy the "
                    f"constraint GreaterThan(lower_bound=0.0), but found invalid values:\n"
                    f"{self.scale}"
                )

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape``, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """``loc + scale * eps`` with ``eps ~ N(0, 1)``: gradients reach loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        """``-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))``."""
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - ops.log(self.scale) - _LOG_SQRT_2PI

    def entropy(self) -> Tensor:
        """``0.5 + 0.5 log(2 pi) + log(scale)``."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + ops.log(self.scale)

    def cdf(self, value: Any) -> Tensor:
        from ..nn.functional import erf

        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))
