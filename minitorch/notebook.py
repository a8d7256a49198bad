"""Helpers for the lesson notebooks.

``show_source(obj)`` prints the source of a package function or class straight from the
installed module, so the code a lesson shows is always the code the package runs.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any


class SourceCode:
    """Source text that Jupyter renders as a highlighted ``python`` block and a terminal as text."""

    def __init__(self, text: str, title: str = "") -> None:
        self.text = text
        self.title = title

    def _repr_markdown_(self) -> str:
        header = f"`{self.title}`\n\n" if self.title else ""
        return f"{header}```python\n{self.text}\n```"

    def __repr__(self) -> str:
        header = f"# {self.title}\n" if self.title else ""
        return header + self.text


def qualified_name(obj: Any) -> str:
    """``minitorch.shape.view_strides`` for a function, class or method."""
    obj = inspect.unwrap(getattr(obj, "__func__", obj))
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return f"{module}.{name}" if module else name


def get_source(obj: Any) -> SourceCode:
    """The source of ``obj`` (function, class, method or property), dedented, with its name."""
    target = obj.fget if isinstance(obj, property) else obj
    text = textwrap.dedent(inspect.getsource(target)).rstrip()
    return SourceCode(text, qualified_name(target))


def show_source(obj: Any) -> None:
    """Display the source of ``obj``: highlighted in Jupyter, plain text anywhere else."""
    source = get_source(obj)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        print(repr(source))
        return
    if get_ipython() is None:
        print(repr(source))
    else:
        display(source)
