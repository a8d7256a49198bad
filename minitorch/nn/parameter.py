"""``nn.Parameter``: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from ..creation import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor with ``requires_grad=True`` that ``Module.parameters()`` finds.

    Assigning a Parameter to a Module attribute registers it; a plain tensor is not
    registered, so an optimizer built from ``parameters()`` would never update it.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor, got {type(data).__name__}")
        param = data.detach()  # shares storage with data, no history
        param.__class__ = cls
        param.requires_grad = requires_grad
        return param

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
