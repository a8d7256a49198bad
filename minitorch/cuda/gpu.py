"""Running a kernel on a real GPU: the same Python function, compiled by ``cupyx.jit``.

``cupyx.jit`` reads a kernel's source and resolves the names it uses (``jit.threadIdx``,
``syncthreads``, ...) in the function's globals and closure. Ours are minitorch's kernel
language; before compiling, each is swapped for cupy's own object (and ``math``/our
``exp`` for cupy's ufuncs), in a copy of the function with the same code. Nothing else
changes: the GPU compiles the very function the simulator runs.

cupy itself is imported only when a kernel is launched on cupy arrays (so on a machine with a
GPU), or compiled for a chosen architecture (:mod:`minitorch.cuda.cross_compile`, on any machine);
``minitorch.cuda`` hands ``launch`` to the kernel language when it is imported.

Two of cupy's built-ins are replaced (:mod:`minitorch.cuda.cupy_builtins`): thread
coordinates are signed ints, as in the simulator, and warp shuffles compile without a GPU.
"""

from __future__ import annotations

import inspect
import types
import warnings
from types import SimpleNamespace
from typing import Any

from . import cupy_builtins, language_rules
from . import jit as language


def _cupy_names() -> dict[str, Any]:
    import cupy
    import cupyx.jit as cj
    from cupyx.scipy import special

    names = {
        "rawkernel": cj.rawkernel,
        "warpsize": cj.warpsize,
        "shared_memory": cj.shared_memory,
        "syncthreads": cj.syncthreads,
        "atomic_add": cj.atomic_add,
        "exp": cupy.exp,
        "log": cupy.log,
        "sqrt": cupy.sqrt,
        "tanh": cupy.tanh,
        "fabs": cupy.fabs,
        "power": cupy.power,
        "erf": special.erf,  # a cupy ufunc, which cupyx.jit calls like cupy.exp
    }
    names.update(cupy_builtins.names())  # signed thread coordinates, device-free shuffles
    for t in (language.float32, language.float64, language.int32, language.int64):
        names[t.name] = t.dtype.type
    names["uint32"] = language.uint32.dtype.type
    return names


def _math_names() -> dict[str, Any]:
    """``math``'s names a kernel may use (:data:`language_rules.GPU_MATH`), as cupy's."""
    import cupy
    from cupyx.scipy import special

    found = {}
    for name in language_rules.GPU_MATH:
        value = getattr(language.math, name)
        if callable(value):
            value = special.erf if name == "erf" else getattr(cupy, name)
        found[name] = value
    return found


def _translate(value: Any, names: dict[str, Any], compiled: dict[int, Any]) -> Any:
    """cupy's counterpart of a value a kernel refers to (the value itself if none)."""
    if value is language:
        return SimpleNamespace(**names)
    if value is language.math:
        return SimpleNamespace(**_math_names())
    if isinstance(value, language.RawKernel):
        return compile_kernel(value, compiled)
    if isinstance(value, language.ScalarType):
        return value.dtype.type
    for name, ours in vars(language).items():
        if ours is value and name in names and not isinstance(value, (int, float)):
            return names[name]
    return value


def compile_kernel(kernel: language.RawKernel, compiled: dict[int, Any] | None = None) -> Any:
    """The ``cupyx.jit`` kernel of ``kernel``'s function (cached on the kernel)."""
    if kernel._gpu is not None:
        return kernel._gpu
    import cupyx.jit as cj

    compiled = {} if compiled is None else compiled
    names = _cupy_names()
    func = kernel.func
    used = inspect.getclosurevars(func)
    glob = dict(func.__globals__)
    for name, value in used.globals.items():
        glob[name] = _translate(value, names, compiled)
    closure = None
    if func.__closure__:
        closure = tuple(
            types.CellType(_translate(c.cell_contents, names, compiled)) for c in func.__closure__
        )
    twin = types.FunctionType(func.__code__, glob, func.__name__, None, closure)
    twin.__qualname__ = func.__qualname__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "cupyx.jit.rawkernel is experimental"
        kernel._gpu = cj.rawkernel(mode=kernel.mode, device=kernel.device)(twin)
    return kernel._gpu


def launch(kernel: language.RawKernel, grid: Any, block: Any, args: tuple) -> None:
    """Launch ``kernel`` on the GPU (``args`` hold cupy arrays)."""
    compile_kernel(kernel)[grid, block](*args)
