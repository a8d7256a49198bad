"""A kernel function's source text, read the way every checker of chapter 07 reads it."""

from __future__ import annotations

import inspect
import linecache
import textwrap
from typing import Any


def source_of(func: Any) -> str:
    """The function's source, from the lines Python keeps of its file (not
    ``inspect.getsource``, which looks for the function's module among all the loaded ones:
    running other packages' code while a probe watches the learner's)."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    return textwrap.dedent("".join(inspect.getblock(lines[code.co_firstlineno - 1 :])))
