"""Turning an exception into one line a learner can act on."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any


def describe_exception(exc: BaseException) -> str:
    """``"TypeError: first line of the message"``, or just the type when there is none.

    Safe on hostile exceptions: a ``__str__`` that raises gives no message, and a huge
    message or type name is cut.
    """
    try:
        name = type(exc).__name__
        name = name[:80] if isinstance(name, str) else "Exception"
    except BaseException:
        name = "Exception"
    try:
        message = str(exc)
        message = message[:4000].strip() if isinstance(message, str) else ""
    except BaseException:  # a broken __str__ in learner code
        message = ""
    if isinstance(exc, SyntaxError) and isinstance(exc.msg, str) and exc.msg:
        message = exc.msg[:4000]
    first = message.splitlines()[0][:1000] if message else ""
    return f"{name}: {first}" if first else name


def line_in(tb: TracebackType | None, filename: str) -> int | None:
    """The line, in the code compiled as ``filename``, where the traceback last passed."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _frames(tb: TracebackType | None) -> list[tuple[Any, int]]:
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return frames


def _function_name(frame: Any) -> str:
    """``Mul.backward`` for a method (Python 3.11+ knows the qualified name), else ``backward``."""
    return getattr(frame.f_code, "co_qualname", frame.f_code.co_name)


def notebook_location(exc: BaseException, nb: Any) -> str:
    """Where in the notebook ``exc`` was raised, e.g. ``"in `f`, line 4 of notebook cell 7"``.

    A notebook frame is one whose globals are the notebook's namespace (``nb._globals``),
    so this works for loaded notebooks and for a live kernel alike. Returns "" when the
    exception never passed through notebook code.
    """
    namespace = getattr(nb, "_globals", None)
    cells = getattr(nb, "_cells", {})
    for frame, line in reversed(_frames(exc.__traceback__)):
        if namespace is not None and frame.f_globals is namespace:
            cell = cells.get(frame.f_code.co_filename)
            where = f"notebook cell {cell}" if cell else "its notebook cell"
            function = _function_name(frame)
            if function == "<module>":
                return f"at line {line} of {where}"
            return f"in `{function}`, line {line} of {where}"
    return ""


def notebook_function(exc: BaseException, nb: Any) -> str | None:
    """The innermost notebook function the exception passed through, if any."""
    namespace = getattr(nb, "_globals", None)
    for frame, _ in reversed(_frames(exc.__traceback__)):
        if namespace is not None and frame.f_globals is namespace:
            name = _function_name(frame)
            return None if name.startswith("<") else name
    return None


def file_location(exc: BaseException, test_file: str) -> str:
    """Where in the test file ``exc`` was raised, e.g. ``"in `test_x`, line 12 of test_01.py"``."""
    for frame, line in reversed(_frames(exc.__traceback__)):
        if frame.f_code.co_filename == test_file:
            return f"in `{frame.f_code.co_name}`, line {line} of {Path(test_file).name}"
    return ""
