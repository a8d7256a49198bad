"""Random draws as ops: ``rand``, ``randn``, ``randint``, ``randperm``.

They take no tensor and record no gradient, but going through ``Function.apply`` (as the
``"random"`` kind) makes them visible to the tracer: a traced or compiled function draws
fresh values on every call, from the generator given or the global one, as eager code
does. (A draw baked into a graph as a constant would make dropout keep one mask forever.)
``minitorch.rand`` and the others check their arguments, then apply these.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module_of as xp
from ..function import Context, Function
from .factory import from_host
from .registry import register


class _Draw(Function):
    kind = "random"
    differentiable = False
    #: The jit's passes must neither fold, merge nor drop a draw (see ``jit.ops.is_pure``).
    pure = False


def _rng(generator: Any) -> Any:
    from ..random import rng_of

    return rng_of(generator)


class Rand(_Draw):
    """Uniform on [0, 1)."""

    name = "rand"

    @staticmethod
    def forward(size: tuple, generator: Any, dtype: Any, device: Any, requires_grad: bool) -> Any:
        return from_host(_rng(generator).random(size), dtype, device, requires_grad, "rand")


class Randn(_Draw):
    """Standard normal."""

    name = "randn"

    @staticmethod
    def forward(size: tuple, generator: Any, dtype: Any, device: Any, requires_grad: bool) -> Any:
        array = _rng(generator).standard_normal(size)
        return from_host(array, dtype, device, requires_grad, "randn")


class Randint(_Draw):
    """Integers uniform on [low, high)."""

    name = "randint"

    @staticmethod
    def forward(low: int, high: int, size: tuple, generator: Any, dtype: Any, device: Any) -> Any:
        array = _rng(generator).integers(low, high, size)
        return from_host(array, dtype, device, False, "randint")


class Randperm(_Draw):
    """A random permutation of ``range(n)``."""

    name = "randperm"

    @staticmethod
    def forward(n: int, generator: Any, dtype: Any, device: Any) -> Any:
        return from_host(_rng(generator).permutation(n), dtype, device, False, "randperm")


class Normal(Function):
    """A draw from N(mean, std) with tensor parameters (they broadcast). As PyTorch's
    ``normal``, the draw's gradient with respect to ``mean`` and ``std`` is zero: a
    reparameterised sample is ``distributions.Normal.rsample``."""

    name = "normal"
    broadcasting = True
    pure = False  # each draw counts: the jit's passes must not fold or merge it

    @staticmethod
    def forward(ctx: Context, mean: Any, std: Any, generator: Any) -> Any:
        m = xp(mean, std)
        ctx.shapes = (getattr(mean, "shape", None), getattr(std, "shape", None))
        shape = m.broadcast_shapes(m.shape(mean), m.shape(std))
        dtype = m.result_type(*(a for a in (mean, std) if hasattr(a, "dtype")))
        noise = m.asarray(_rng(generator).standard_normal(shape))
        return (mean + std * noise).astype(dtype)

    @staticmethod
    def backward(ctx: Context, grad: Any) -> tuple:
        return tuple(None if s is None else grad.new_zeros(s) for s in ctx.shapes) + (None,)


register(Rand, Randn, Randint, Randperm, Normal)
