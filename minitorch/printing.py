"""``repr(tensor)`` in PyTorch's style, ``tensor([[1., 2.], [3., 4.]])``, and its options.

The rules are ``torch/_tensor_str.py``'s: above ``threshold`` elements only the first and
last ``edgeitems`` of each dimension are shown, and one number format (integer-valued, fixed
or scientific) is chosen from the shown items alone. Those items are gathered first, on the
tensor's own device, so a repr costs what it prints whatever the tensor's size.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import array_module_of
from .dtypes import float32, int64, is_floating


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


# --- options --------------------------------------------------------------------------------
def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Options for printing tensors, as ``torch.set_printoptions``.

    ``profile`` ("default", "short" or "full") sets the first four; options given with it
    override it. ``sci_mode`` True or False forces scientific notation on or off; None (as
    when it is left out, like in PyTorch) lets the shown values choose.
    """
    if profile is not None and (not isinstance(profile, str) or profile not in _PROFILES):
        raise ValueError(
            f"set_printoptions: profile must be one of {', '.join(map(repr, _PROFILES))}; "
            f"got {profile!r}"
        )
    if sci_mode is not None and not isinstance(sci_mode, (bool, np.bool_)):
        raise TypeError(f"set_printoptions: sci_mode must be True, False or None; got {sci_mode!r}")
    given = {"precision": precision, "edgeitems": edgeitems, "linewidth": linewidth}
    lowest = {"precision": 0, "edgeitems": 0, "linewidth": 1}
    new = dict(_PROFILES[profile]) if profile is not None else {}
    for name, value in given.items():
        if value is not None:
            new[name] = _checked_int(name, value, lowest[name])
    if threshold is not None:
        new["threshold"] = (
            math.inf if threshold == math.inf else _checked_int("threshold", threshold, 0)
        )
    for name, value in new.items():
        setattr(_OPTIONS, name, value)
    _OPTIONS.sci_mode = None if sci_mode is None else bool(sci_mode)


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(_OPTIONS)


def _checked_int(name: str, value: object, lowest: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        extra = " (or math.inf)" if name == "threshold" else ""
        raise TypeError(f"set_printoptions: {name} must be an int{extra}; got {value!r}")
    if value < lowest:
        raise ValueError(f"set_printoptions: {name} must be >= {lowest}; got {value!r}")
    return int(value)


# --- the text -------------------------------------------------------------------------------
def format_tensor(array: Any, dtype, device, extras: list[str] | None = None) -> str:
    """The text of ``repr`` for a tensor whose values are ``array`` (numpy or cupy, any size)."""
    options = _OPTIONS
    prefix = "tensor("
    suffixes = [f"device='{device}'"] if device.type != "cpu" else []
    if array.size == 0:
        body = "[]"
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
    else:
        if not options.edgeitems:
            suffixes.append(f"size={tuple(array.shape)}")
        body = _tensor_str(array, len(prefix), options)
    default = float32 if is_floating(array.dtype) else int64 if array.dtype.kind in "iu" else None
    if default is not None and dtype is not default:
        suffixes.append(f"dtype={dtype}")
    suffixes.extend(extras or [])
    return _add_suffixes(prefix + body, suffixes, len(prefix), options.linewidth)


def _tensor_str(array: Any, indent: int, options: _PrintOptions) -> str:
    """``[[...], ...]``: the shown items of a non-empty ``array``, laid out as PyTorch does."""
    summarize = array.size > options.threshold
    cut = tuple(summarize and n > 2 * options.edgeitems for n in array.shape)
    shown = _edges(array, cut, options.edgeitems)
    if not isinstance(shown, np.ndarray):
        shown = shown.get()  # a cupy array: only the shown items cross to the host
    cells, width = _cells(shown, options)
    return _layout(cells, cut, indent, width, options)


def _edges(array: Any, cut: tuple[bool, ...], edgeitems: int) -> Any:
    """``array`` with only the first and last ``edgeitems`` along each ``cut`` dimension.

    One gather on the array's own device (numpy or cupy): nothing else is read or copied.
    """
    if not any(cut):
        return array
    index = [
        np.r_[0:edgeitems, n - edgeitems : n] if c else np.arange(n)
        for n, c in zip(array.shape, cut, strict=True)
    ]
    xp = array_module_of(array)
    return array[xp.ix_(*(xp.asarray(i) for i in index))]


def _cells(values: np.ndarray, options: _PrintOptions) -> tuple[np.ndarray, int]:
    """Each value as text, right-aligned to one width; the format is chosen from all of them.

    Floats whose finite nonzero values are all whole print as ``3.``; they switch to
    scientific notation when those values span more than 1000x, or reach 1e8, or go below
    1e-4. Only finite nonzero values count toward the width, as in PyTorch.
    """
    items = values.ravel().tolist()
    if not is_floating(values.dtype):
        texts = [str(x) for x in items]
        counted = texts
    else:
        flat = values.ravel().astype(np.float64)
        counts = np.isfinite(flat) & (flat != 0)
        number = _number_format(flat[counts], options)
        texts = [number(x) for x in items]
        counted = [t for t, c in zip(texts, counts.tolist(), strict=True) if c]
    width = max([1, *map(len, counted)])
    cells = np.empty(len(texts), dtype=object)
    cells[:] = [t.rjust(width) for t in texts]
    return cells.reshape(values.shape), width


def _number_format(nonzero: np.ndarray, options: _PrintOptions) -> Callable[[float], str]:
    """The function that prints one float, given the finite nonzero values shown."""
    precision = options.precision
    if nonzero.size == 0:
        sci_mode, int_mode = False, True
    else:
        magnitude = np.abs(nonzero)
        low, high = magnitude.min(), magnitude.max()
        with np.errstate(over="ignore"):
            spread = high / low
        sci_mode = spread > 1000.0 or high > 1.0e8 or low < 1.0e-4
        if options.sci_mode is not None:
            sci_mode = options.sci_mode
        int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
    if sci_mode:
        return f"{{:.{precision}e}}".format
    if int_mode:
        return lambda x: f"{x:.0f}." if math.isfinite(x) else f"{x:.0f}"
    return f"{{:.{precision}f}}".format


def _layout(
    cells: np.ndarray, cut: tuple[bool, ...], indent: int, width: int, options: _PrintOptions
) -> str:
    """Nested brackets; a ``...`` stands for the items left out of each ``cut`` dimension."""
    if cells.ndim == 0:
        return cells.item()
    edge = options.edgeitems
    if cells.ndim == 1:
        items = cells.tolist()
        if cut[0]:
            items = [*items[:edge], " ...", *items[edge:]] if edge else ["..."]
        per_line = max(1, (options.linewidth - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_layout(sub, cut[1:], indent + 1, width, options) for sub in cells]
    if cut[0]:
        rows = [*rows[:edge], "...", *rows[edge:]]
    return "[" + ("," + "\n" * (cells.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    """``text, suffix, ...)``, starting a new line for a suffix that would pass ``linewidth``."""
    parts = [text]
    line = len(text) - text.rfind("\n") + 1  # PyTorch's measure of the last line
    for suffix in suffixes:
        if line + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line += len(suffix) + 2
    return "".join(parts) + ")"
