"""``repr(tensor)`` in PyTorch's style: ``tensor([[1., 2.], [3., 4.]])``."""

from __future__ import annotations

import numpy as np

from .dtypes import float32, int64


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
        fmt = "{:.0f}."
    else:
        nonzero = np.abs(finite[finite != 0])
        scientific = nonzero.size and (nonzero.max() >= 1e8 or nonzero.min() < 1e-4)
        fmt = "{:.4e}" if scientific else "{:.4f}"

    def one(x: float) -> str:
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        return fmt.format(x)

    width = max((len(one(x)) for x in values.ravel()), default=0)
    return lambda x: one(x).rjust(width)


def format_tensor(array: np.ndarray, dtype, device, extras: list[str] | None = None) -> str:
    """The text of ``repr`` for a tensor whose values (on the CPU) are ``array``."""
    prefix = "tensor("
    if array.dtype.kind == "f":
        formatter = {"float_kind": _float_formatter(array.astype(np.float64))}
    else:
        formatter = None
    if array.size == 0:
        body = "[]" if array.ndim <= 1 else f"[], size={array.shape}"
    else:
        body = np.array2string(
            array,
            separator=", ",
            prefix=prefix,
            formatter=formatter,
            threshold=1000,
            edgeitems=3,
            max_line_width=80,
        )
    suffix = []
    if device.type != "cpu":
        suffix.append(f"device='{device}'")
    default = float32 if array.dtype.kind == "f" else int64 if array.dtype.kind in "iu" else None
    if default is not None and dtype is not default:
        suffix.append(f"dtype={dtype}")
    suffix.extend(extras or [])
    return prefix + body + "".join(", " + s for s in suffix) + ")"
