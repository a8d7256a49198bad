"""``Variable``: PyTorch's deprecated name from before tensors tracked gradients themselves.

Since PyTorch 0.4 a tensor is all there is: ``Variable(t, requires_grad=True)`` returns a
Tensor, a new leaf sharing ``t``'s storage (``t.detach().requires_grad_(True)``), and
every tensor counts as a Variable for ``isinstance``. ``volatile=True`` has no effect any
more (with a warning): ``with minitorch.no_grad():`` replaces it. Kept so that old code
runs; new code makes tensors with ``requires_grad=True``.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a Tensor (see the module docstring)."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: Any = None) -> Any:
        if volatile is not None:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            from ..creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
