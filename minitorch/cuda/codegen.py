"""Kernels from generated source: write the Python text of a kernel, then compile it.

A generated kernel is an ordinary kernel-language function; it only comes from a string.
Its source is registered with ``linecache`` (as IPython does for notebook cells), so
``inspect.getsource`` finds it: the simulator's checks and ``cupyx.jit`` (which compiles
from the source) both work on it, on the CPU and on a GPU alike.
"""

from __future__ import annotations

import itertools
import linecache
from typing import Any

from . import jit

_counter = itertools.count()


def compile_kernel(source: str, name: str, namespace: dict[str, Any] | None = None) -> Any:
    """Run ``source`` (one decorated kernel definition) and return the kernel ``name``.

    Its globals are the kernel language (``threadIdx``, ``syncthreads``, ``exp``, ...), plus
    ``namespace``.
    """
    filename = f"<minitorch generated kernel {next(_counter)}: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {word: getattr(jit, word) for word in jit.__all__}
    scope["jit"] = jit
    scope.update(namespace or {})
    exec(compile(source, filename, "exec"), scope)
    return scope[name]
