"""``minitorch.testing.assert_close``: PyTorch's check that two results agree.

Tensors (or numbers, or sequences and dicts of them) must have the same type, shape,
dtype and device, and values within ``atol + rtol * |expected|``; the defaults are
PyTorch's per dtype. A mismatch raises ``AssertionError`` saying how many elements
differ and the greatest absolute and relative difference, as PyTorch's message does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .tensor import Tensor

#: PyTorch's default (rtol, atol) per dtype name; other dtypes compare exactly.
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    msg: str | None = None,
) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close."""
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(
                f"The keys of the mappings do not match: {set(actual)} != {set(expected)}"
            )
        for k in expected:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)  # fmt: skip
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise AssertionError(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
            )
        for a, e in zip(actual, expected, strict=True):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)  # fmt: skip
        return
    if isinstance(actual, Tensor) != isinstance(expected, Tensor):
        raise AssertionError(
            f"Both inputs must be tensors or both numbers, but got {type(actual).__name__} "
            f"and {type(expected).__name__}"
        )
    if isinstance(actual, Tensor):
        _check_meta(actual, expected, check_device, check_dtype)
        a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
        dtype_name = actual.dtype.name
        kind = "Tensor-likes"
    else:
        a, e = np.asarray(actual), np.asarray(expected)
        dtype_name = "float64" if isinstance(actual, float) or isinstance(expected, float) else ""
        kind = "Scalars"
    if rtol is None:
        rtol, atol = _TOLERANCES.get(dtype_name, (0.0, 0.0))
    _check_values(a, e, rtol, atol, equal_nan, kind, msg)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _check_meta(actual: Tensor, expected: Tensor, check_device: bool, check_dtype: bool) -> None:
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(
            f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}."
        )
    if check_dtype and actual.dtype != expected.dtype:
        raise AssertionError(
            f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}."
        )
    if check_device and actual.device != expected.device:
        raise AssertionError(
            f"The values for attribute 'device' do not match: {actual.device} != {expected.device}."
        )


def _check_values(
    a: np.ndarray,
    e: np.ndarray,
    rtol: float,
    atol: float,
    equal_nan: bool,
    kind: str,
    msg: str | None,
) -> None:  # noqa: E501
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    diff = np.abs(a64 - e64)
    rel = diff / np.where(e64 == 0, np.inf, np.abs(e64))
    bad = int((~close).sum())
    if rtol == 0 and atol == 0:
        kind_word = "equal"
    else:
        kind_word = "close"
    if a.ndim == 0:
        raise AssertionError(
            f"{kind} are not {kind_word}!\n\n"
            f"Absolute difference: {diff.item()} (up to {atol} allowed)\n"
            f"Relative difference: {rel.item()} (up to {rtol} allowed)"
        )
    at_abs = np.unravel_index(np.nanargmax(np.where(np.isnan(diff), np.inf, diff)), a.shape)
    at_rel = np.unravel_index(np.nanargmax(np.where(np.isnan(rel), np.inf, rel)), a.shape)
    raise AssertionError(
        f"{kind} are not {kind_word}!\n\nMismatched elements: {bad} / {a.size} "
        f"({100 * bad / a.size:.1f}%)\n"
        f"Greatest absolute difference: {diff[at_abs]} at index {tuple(int(i) for i in at_abs)} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {rel[at_rel]} at index {tuple(int(i) for i in at_rel)} "
        f"(up to {rtol} allowed)"
    )


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:  # noqa: E501
    """The deprecated ``torch.testing.assert_allclose``: assert_close without the dtype
    check, NaNs equal."""
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_dtype=False,
        msg=msg or None,
    )
