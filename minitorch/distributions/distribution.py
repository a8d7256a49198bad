"""The base of the distributions: shapes, argument validation, and what each must define."""

from __future__ import annotations

from typing import Any

from ..size import Size
from ..tensor import Tensor


class Distribution:
    """A batch of distributions of one family: ``batch_shape`` of them, each drawing values
    of ``event_shape``. Subclasses define ``sample`` (and ``rsample`` when a draw can be
    differentiated), ``log_prob`` and ``entropy``."""

    #: Whether ``rsample`` exists (a draw gradients flow through).
    has_rsample = False
    #: PyTorch's default: check parameters and values (``validate_args=False`` skips it).
    _validate_default = True

    def __init__(
        self,
        batch_shape: tuple = (),
        event_shape: tuple = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        self._validate_args = self._validate_default if validate_args is None else validate_args

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        """``sample_shape + batch_shape + event_shape``: the shape of a draw."""
        if isinstance(sample_shape, int):
            raise TypeError(
                f"{type(self).__name__}.sample: sample_shape must be a tuple (or torch.Size), "
                f"e.g. ({sample_shape},), not an int"
            )
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement sample")

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sample (rsample): its draws can't "
            "be differentiated; use sample() and a score-function (REINFORCE) gradient"
        )

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def __repr__(self) -> str:
        params = ", ".join(f"{name}: {self._param_repr(name)}" for name in self._params)
        return f"{type(self).__name__}({params})"

    _params: tuple = ()

    def _param_repr(self, name: str) -> str:
        value = getattr(self, name)
        return repr(value) if value.numel() == 1 else f"torch.Size({list(value.shape)})"
