"""``nn.Parameter``: a tensor that a Module registers as one of its learnable weights; and
the lazy modules' (``nn.lazy``) parameters and buffers whose shape is not known yet."""

from __future__ import annotations

from typing import Any

from ..autograd import no_grad
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


class UninitializedParameter(Parameter):
    """A Parameter whose shape is not known yet (zero elements until ``materialize``)."""

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def materialize(self, shape: tuple[int, ...], device: Any = None, dtype: Any = None) -> None:
        """Give this parameter (this very object) uninitialised storage of ``shape``."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        with no_grad():
            self.set_(empty(*shape, device=device, dtype=dtype))
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running statistics)."""

    cls_to_become = Tensor

    def __new__(cls, device: Any = None, dtype: Any = None) -> UninitializedBuffer:
        buffer = empty(0, device=device, dtype=dtype)
        buffer.__class__ = cls
        return buffer

    def __init__(self, device: Any = None, dtype: Any = None) -> None:
        pass

    materialize = UninitializedParameter.materialize

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"
