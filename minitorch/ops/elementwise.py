"""Elementwise ops. Binary ops broadcast their inputs (see ``minitorch.shape.broadcast_shapes``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import array_module_of as xp
from ..dtypes import get_default_dtype
from ..function import Context, Function


def _floating(result: Any) -> Any:
    """Integer inputs to a floating op give the default float dtype (float32), as in PyTorch."""
    if result.dtype.kind != "f":
        return result.astype(get_default_dtype().np)
    return result


class Add(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return a + b


class Sub(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return a - b


class Mul(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return a * b


class Div(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        result = a / b
        if hasattr(result, "dtype") and result.dtype == np.float64:
            kinds = [getattr(x, "dtype", None) for x in (a, b)]
            if not any(k is not None and k == np.float64 for k in kinds):
                result = result.astype(get_default_dtype().np)
        return result


class Pow(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return a**b


class Neg(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return -a


class Exp(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return _floating(xp(a).exp(a))


class Log(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return _floating(xp(a).log(a))


class Sqrt(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return _floating(xp(a).sqrt(a))


class Abs(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).abs(a)


class Tanh(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return _floating(xp(a).tanh(a))


class Sigmoid(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        # 1 / (1 + exp(-a)) overflows for very negative a; this form never does.
        m = xp(a)
        e = m.exp(-m.abs(a))
        return _floating(m.where(a >= 0, 1 / (1 + e), e / (1 + e)))


class Relu(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).maximum(a, 0).astype(a.dtype)


class Maximum(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return xp(a).maximum(a, b)


class Minimum(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return xp(a).minimum(a, b)


class Where(Function):
    broadcasting = True

    @staticmethod
    def forward(ctx: Context, condition: Any, a: Any, b: Any) -> Any:
        return xp(condition).where(condition, a, b)


def _comparison(op_name: str, method: str) -> type[Function]:
    """Comparison ops differ only in the numpy function; they return bool tensors."""

    def forward(ctx: Context, a: Any, b: Any) -> Any:
        return getattr(xp(a), method)(a, b)

    attrs = {"forward": staticmethod(forward), "name": op_name.lower(), "broadcasting": True}
    return type(op_name, (Function,), attrs)


Eq = _comparison("Eq", "equal")
Ne = _comparison("Ne", "not_equal")
Lt = _comparison("Lt", "less")
Le = _comparison("Le", "less_equal")
Gt = _comparison("Gt", "greater")
Ge = _comparison("Ge", "greater_equal")
LogicalAnd = _comparison("Logical_And", "logical_and")
LogicalOr = _comparison("Logical_Or", "logical_or")


class LogicalNot(Function):
    name = "logical_not"

    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return xp(a).logical_not(a)


class Clone(Function):
    @staticmethod
    def forward(ctx: Context, a: Any) -> Any:
        return a.copy()


class ToCopy(Function):
    """Copy to another dtype and/or device (``Tensor.to``)."""

    name = "to"

    @staticmethod
    def forward(ctx: Context, a: Any, dtype: Any, device: Any) -> Any:
        from ..device import array_module

        if device.type == "cpu":
            host = a if isinstance(a, np.ndarray) else a.get()
            return host.astype(dtype.np, copy=True)
        cp = array_module(device)
        with cp.cuda.Device(device.index):
            return cp.asarray(a, dtype=dtype.np).copy()
