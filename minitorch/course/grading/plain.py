"""Plain data: what may cross between the grader and the learner's process.

A probe's result travels as JSON. :func:`encode` (in the learner's process) turns a
value into JSON-ready data; :func:`decode` (in the grader) turns that back into plain
Python: ``None``, bools, ints, floats, strings, tuples, lists, dicts, numpy arrays and
scalars of numeric dtypes. Nothing else survives the trip: any other object arrives as
an :class:`Opaque` that equals nothing, so a learner-defined type (an ``int`` whose
``__eq__`` is always True, say) can never reach a comparison in the grader. Subclasses
of the builtin types travel as their builtin value. :func:`decode` checks everything it
is given and is bounded, since a hostile process may send anything at all.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from typing import Any

import numpy as np

#: numpy dtypes an array may have on the wire (dtype.str).
ARRAY_DTYPES = frozenset(
    "|b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8 <c8 <c16".split()
    + ">i2 >u2 >i4 >u4 >i8 >u8 >f2 >f4 >f8".split()
)
#: The most nesting :func:`decode` accepts.
MAX_DEPTH = 40
#: The most containers and scalars :func:`decode` accepts in one value (honest probes
#: send at most ~10 000).
MAX_ITEMS = 500_000
#: The most JSON values (counted by their brackets and commas) :func:`loads` parses:
#: checked before parsing, so a hostile message cannot cost the grader gigabytes.
MAX_JSON_VALUES = 3 * MAX_ITEMS
_NAME_LIMIT = 80


class PlainDataError(ValueError):
    """Data from the learner's process that is not plain data (or is too big)."""


class Opaque:
    """Stands in for an object that is not plain data: it equals nothing, is not true or
    false, and says what it was (``a MyInt``) when printed."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TypeError(f"{self!r} is not a plain value (a number, string, tuple, ...)")

    def __repr__(self) -> str:
        return f"<a {self.type_name} object>"


def _type_name(value: Any) -> str:
    try:
        name = type.__getattribute__(type(value), "__qualname__")
    except Exception:
        name = "object"
    return name[:_NAME_LIMIT] if isinstance(name, str) else "object"


def _array(value: np.ndarray) -> dict[str, Any]:
    array = value if value.flags.c_contiguous else value.copy(order="C")
    if array.dtype.str not in ARRAY_DTYPES:
        return {"$o": f"numpy array of dtype {array.dtype}"}
    data = base64.b64encode(array.tobytes()).decode("ascii")
    return {"$a": [array.dtype.str, list(array.shape), data]}


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data (runs in the learner's process)."""
    if depth > MAX_DEPTH:
        return {"$o": "value nested too deep"}
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        number = float.__float__(value)
        return number if number == number and abs(number) != float("inf") else {"$f": repr(number)}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, tuple):
        return {"$t": [encode(v, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, dict):
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(value)]}
    if type(value) is np.ndarray:
        return _array(value)
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        array = _array(np.asarray(value))
        return {"$s": array["$a"]} if "$a" in array else array
    return {"$o": _type_name(value)}


def dumps(value: Any) -> bytes:
    """JSON bytes of already-encoded data."""
    return json.dumps(value, allow_nan=False, separators=(",", ":")).encode("utf-8")


class _Budget:
    def __init__(self) -> None:
        self.items = 0

    def spend(self) -> None:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise PlainDataError("too many values")


def _decode_array(spec: Any) -> np.ndarray:
    if not (isinstance(spec, list) and len(spec) == 3):
        raise PlainDataError("a malformed array")
    dtype_str, shape, data = spec
    if not isinstance(dtype_str, str) or dtype_str not in ARRAY_DTYPES:
        raise PlainDataError(f"an array of a dtype that is not allowed: {str(dtype_str)[:20]!r}")
    if not (isinstance(shape, list) and len(shape) <= 32):
        raise PlainDataError("a malformed array shape")
    if not all(type(n) is int and 0 <= n < 2**40 for n in shape):
        raise PlainDataError("a malformed array shape")
    if not isinstance(data, str):
        raise PlainDataError("malformed array data")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    dtype = np.dtype(dtype_str)
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(raw):
        raise PlainDataError("an array whose data does not match its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _decode(data: Any, depth: int, budget: _Budget) -> Any:
    budget.spend()
    if depth > MAX_DEPTH + 1:
        raise PlainDataError("nested too deep")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [_decode(v, depth + 1, budget) for v in data]
    if type(data) is not dict or len(data) != 1:
        raise PlainDataError("an unknown kind of value")
    ((tag, body),) = data.items()
    if tag == "$t" and type(body) is list:
        return tuple(_decode(v, depth + 1, budget) for v in body)
    if tag == "$d" and type(body) is list:
        out: dict[Any, Any] = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise PlainDataError("a malformed dict")
            key = _decode(pair[0], depth + 1, budget)
            try:
                out[key] = _decode(pair[1], depth + 1, budget)
            except TypeError:
                raise PlainDataError("a dict with an unhashable key") from None
        return out
    if tag == "$f" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$a":
        return _decode_array(body)
    if tag == "$s":
        return _decode_array(body)[()]
    if tag == "$o" and type(body) is str:
        return Opaque(body[:_NAME_LIMIT])
    raise PlainDataError("an unknown kind of value")


def decode(data: Any) -> Any:
    """Plain Python from JSON-decoded data (runs in the grader); raises PlainDataError."""
    try:
        return _decode(data, 0, _Budget())
    except PlainDataError:
        raise
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError) as exc:
        raise PlainDataError(f"malformed data ({type(exc).__name__})") from None


def loads(raw: bytes) -> Any:
    """Parse JSON bytes from the learner's process; raises PlainDataError.

    Bytes that would parse into more than :data:`MAX_JSON_VALUES` values are refused
    unparsed (``[[],[],...]``: 64 MB of it took 14 s and 1.6 GB to parse).
    """
    values = raw.count(b"[") + raw.count(b"{") + raw.count(b",")
    if values > MAX_JSON_VALUES:
        raise PlainDataError("too many values")
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PlainDataError(f"not JSON ({type(exc).__name__})") from None


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Lone surrogates (a terminal or a UTF-8 file cannot take them: printing one crashed the
#: grade command before it wrote results.json).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Characters that change how the text around them shows (bidirectional overrides and
#: isolates, zero-width characters, line and paragraph separators): a message could
#: otherwise reorder or hide the columns of the score table.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp"})


def _visible(text: str) -> str:
    if text.isascii():
        return text
    text = _SURROGATE.sub("\ufffd", text)
    return "".join(" " if unicodedata.category(c) in _INVISIBLE_CATEGORIES else c for c in text)


def clean_text(text: Any, limit: int = 1000) -> str:
    """Text from the learner's process made safe to show: a str, ANSI escapes, control
    and invisible formatting characters removed, lone surrogates replaced, at most
    ``limit`` characters."""
    if not isinstance(text, str):
        return ""
    text = str.__str__(text[: limit * 4])
    text = _visible(_CONTROL.sub(" ", _ANSI.sub("", text)))
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text


def one_line(text: Any, limit: int = 1000) -> str:
    """:func:`clean_text` on one line: every run of whitespace (newlines, tabs, line and
    paragraph separators) becomes one space, so a message cannot forge report lines."""
    return clean_text(" ".join(clean_text(text, limit * 2).split()), limit)
