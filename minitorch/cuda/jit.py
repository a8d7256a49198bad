"""The kernel language: cupy's ``cupyx.jit.rawkernel`` language, runnable anywhere.

A kernel is a Python function written against the names below, exactly as for
``cupyx.jit``::

    from minitorch.cuda import jit

    @jit.rawkernel()
    def add(a, b, out, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            out[i] = a[i] + b[i]

    add[blocks, threads](a, b, out, n)     # Numba/cupy launch syntax: kernel[grid, block](...)

Launched on numpy arrays, it runs in the CPU simulator (:mod:`minitorch.cuda.simulator`):
every thread of every block, with barriers, per-block shared memory and checks. Launched
on cupy arrays, the *same function* is compiled by ``cupyx.jit`` for the GPU
(:mod:`minitorch.cuda.gpu` swaps these names for cupy's before compiling).

What works inside a kernel (on both): integer and float scalars, ``if``/``while``/
``for ... in range(...)`` (with ``break``/``continue``), element access ``a[i]`` (1-d) or
``a[i, j]`` (n-d), ``a.size``, ``len(a)``, ``min``/``max`` of scalars, the math functions
and casts below, and these CUDA built-ins (``shfl_down_sync``/``shfl_xor_sync`` exchange
values between the lanes of a warp, as ``__shfl_down_sync``/``__shfl_xor_sync``). Not:
numpy calls, whole-array operations, default arguments, ``return`` of a value from a
kernel, nor anything else ``cupyx.jit`` cannot compile (lists, chained comparisons, a
variable that changes type, ...: :mod:`minitorch.cuda.language_rules`), which the
simulator refuses as a GPU would.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import math
import sys
from types import ModuleType
from typing import Any

import numpy as np

from . import language_rules, simulator
from .errors import KernelLanguageError
from .simulator import (
    LaunchStats,
    atomic_add,
    shared_memory,
    shfl_down_sync,
    shfl_xor_sync,
    syncthreads,
)
from .source import source_of

__all__ = [
    "RawKernel",
    "atomic_add",
    "blockDim",
    "blockIdx",
    "erf",
    "exp",
    "fabs",
    "float32",
    "float64",
    "gridDim",
    "grid",
    "int32",
    "int64",
    "log",
    "power",
    "rawkernel",
    "shared_memory",
    "shfl_down_sync",
    "shfl_xor_sync",
    "sqrt",
    "syncthreads",
    "tanh",
    "threadIdx",
    "warpsize",
]

_state = simulator.state


def _outside(name: str) -> RuntimeError:
    return RuntimeError(
        f"{name} only has a value inside a kernel launch (kernel[grid, block](...))"
    )


class _ThreadIdx:
    """``threadIdx.x/.y/.z``: this thread's position in its block."""

    @property
    def x(self) -> int:
        if _state.launch is None:
            raise _outside("threadIdx")
        return _state.tx

    @property
    def y(self) -> int:
        if _state.launch is None:
            raise _outside("threadIdx")
        return _state.ty

    @property
    def z(self) -> int:
        if _state.launch is None:
            raise _outside("threadIdx")
        return _state.tz


class _BlockIdx:
    """``blockIdx.x/.y/.z``: this block's position in the grid."""

    @property
    def x(self) -> int:
        if _state.launch is None:
            raise _outside("blockIdx")
        return _state.bx

    @property
    def y(self) -> int:
        if _state.launch is None:
            raise _outside("blockIdx")
        return _state.by

    @property
    def z(self) -> int:
        if _state.launch is None:
            raise _outside("blockIdx")
        return _state.bz


class _LaunchDim:
    """``blockDim`` (threads per block) or ``gridDim`` (blocks per grid), per axis."""

    def __init__(self, name: str, attr: str) -> None:
        self._name, self._attr = name, attr

    def _dims(self) -> tuple[int, int, int]:
        launch = _state.launch
        if launch is None:
            raise _outside(self._name)
        return getattr(launch, self._attr)

    @property
    def x(self) -> int:
        return self._dims()[0]

    @property
    def y(self) -> int:
        return self._dims()[1]

    @property
    def z(self) -> int:
        return self._dims()[2]


threadIdx = _ThreadIdx()  # noqa: N816 - CUDA's names
blockIdx = _BlockIdx()  # noqa: N816
blockDim = _LaunchDim("blockDim", "block")  # noqa: N816
gridDim = _LaunchDim("gridDim", "grid")  # noqa: N816
warpsize = 32


def grid(ndim: int) -> Any:
    """The global thread index: ``blockIdx.x * blockDim.x + threadIdx.x`` (a tuple for 2, 3)."""
    launch = _state.launch
    if launch is None:
        raise _outside("grid()")
    b = launch.block
    index = (
        _state.bx * b[0] + _state.tx,
        _state.by * b[1] + _state.ty,
        _state.bz * b[2] + _state.tz,
    )
    if ndim == 1:
        return index[0]
    if ndim in (2, 3):
        return index[:ndim]
    raise ValueError("grid(ndim): ndim must be 1, 2 or 3")


# -- scalar math and casts (mapped to cupy's ufuncs and numpy's types on a GPU) --------------
def exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def tanh(x: float) -> float:
    return math.tanh(x)


def fabs(x: float) -> float:
    return math.fabs(x)


def erf(x: float) -> float:
    return math.erf(x)


def power(x: float, y: float) -> float:
    """``x ** y`` as C's ``pow``: NaN (not a complex number) for a negative base and a
    fractional exponent, inf on overflow."""
    try:
        return math.pow(x, y)
    except ValueError:
        return math.inf if x == 0 else math.nan  # 0 ** negative, or (-2) ** 0.5
    except OverflowError:
        return math.copysign(math.inf, x) if float(y).is_integer() and y % 2 else math.inf


class ScalarType:
    """A cast such as ``float32(x)``; also a dtype for ``shared_memory(float32, n)``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = np.dtype(name)
        self.__name__ = name

    def __call__(self, x: Any) -> Any:
        kind = self.dtype.kind
        if kind == "f":
            return float(self.dtype.type(x))
        if kind in "iu":
            return int(self.dtype.type(int(x)))
        return bool(x)

    def __repr__(self) -> str:
        return f"jit.{self.name}"


float32, float64 = ScalarType("float32"), ScalarType("float64")
int32, int64, uint32 = ScalarType("int32"), ScalarType("int64"), ScalarType("uint32")


# -- kernels -------------------------------------------------------------------------------------
#: Runs a kernel on cupy arrays: ``minitorch.cuda.gpu.launch``, set when ``minitorch.cuda``
#: is imported (the language itself knows nothing of cupy).
gpu_launcher: Any = None


class RawKernel:
    """A kernel: ``kernel[grid, block](*args)`` runs it in the simulator on numpy arrays,
    or on the GPU through ``cupyx.jit`` on cupy arrays. ``.stats`` is the last simulated
    launch's :class:`LaunchStats`. A device function (``device=True``) is called from
    kernels like a plain function."""

    def __init__(self, func: Any, mode: str = "cuda", device: bool = False) -> None:
        self.func, self.mode, self.device = func, mode, device
        self.stats: LaunchStats | None = None
        self._checked = False
        self._gpu: Any = None
        functools.update_wrapper(self, func)

    def __getitem__(self, grid_and_block: Any) -> Any:
        if not isinstance(grid_and_block, tuple) or len(grid_and_block) != 2:
            raise TypeError(
                f"kernel {self.__name__}: launch it as {self.__name__}[grid, block](*args), "
                f"not {self.__name__}[{grid_and_block!r:.40}]"
            )
        grid, block = grid_and_block
        return lambda *args: self.launch(grid, block, args)

    def __call__(self, *args: Any) -> Any:
        if self.device:
            return self.func(*args)
        raise TypeError(
            f"kernel `{self.__name__}` is launched, not called: {self.__name__}[grid, block](...)"
        )

    def launch(self, grid: Any, block: Any, args: tuple) -> None:
        """Run on every thread of the grid: on the GPU for cupy arrays, else simulated."""
        if self.device:
            raise TypeError(f"`{self.__name__}` is a device function: call it from a kernel")
        if any(hasattr(a, "__cuda_array_interface__") for a in args):
            if gpu_launcher is None:
                raise RuntimeError(f"{self.__name__}: no GPU launcher (minitorch.cuda.gpu)")
            gpu_launcher(self, grid, block, args)  # cupy arrays: compiled and run on the GPU
            return
        if not self._checked:
            check_language(self.func)
            self._checked = True
        check_arguments(self.func, self.__name__, args)
        check_types(self.func, self.__name__, args)
        self.stats = simulator.launch(self.func, grid, block, args, self.__name__)

    def __repr__(self) -> str:
        kind = "device function" if self.device else "kernel"
        return f"<{kind} {self.__name__}>"


def rawkernel(*, mode: str = "cuda", device: bool = False) -> Any:
    """Decorator: a Python function becomes a :class:`RawKernel` (as ``cupyx.jit.rawkernel``)."""

    def wrap(func: Any) -> RawKernel:
        return RawKernel(func, mode, device)

    return wrap


# -- what a kernel may use --------------------------------------------------------------------
_FORBIDDEN_ROOTS = ("numpy", "cupy", "cupyx", "torch", "minitorch", "scipy", "numba", "jax")
_ALLOWED_MODULES = ("minitorch.cuda.jit", "minitorch.cuda.simulator")
_DTYPE_NAMES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool_", "intp",
}  # fmt: skip


def _forbidden(value: Any) -> str | None:
    """The library a global a kernel uses belongs to, when the GPU could not run it."""
    if isinstance(value, (RawKernel, ScalarType)) or value is math:
        return None
    if isinstance(value, type) and issubclass(value, np.generic):
        return None  # numpy.float32 as a cast or dtype
    module = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
    if not isinstance(module, str) or module.startswith(_ALLOWED_MODULES):
        return None
    root = module.partition(".")[0]
    return module if root in _FORBIDDEN_ROOTS else None


@functools.cache
def _roles(func: Any) -> tuple[tuple[str, ...], frozenset, frozenset, frozenset]:
    """The kernel's parameters, those it indexes (``x[i]``), those it writes (``out[i] =``)
    and those it only uses as numbers, read from its source (empty sets when the source
    can't be read)."""
    params = tuple(inspect.signature(func).parameters)
    try:
        tree = ast.parse(source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        return params, frozenset(), frozenset(), frozenset()
    indexed, written, handed_on, used = set(), set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used.add(node.id)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            indexed.add(node.value.id)
            if isinstance(node.ctx, ast.Store):
                written.add(node.value.id)
        elif isinstance(node, ast.Call):  # handed to a device function: it may index it
            handed_on.update(a.id for a in node.args if isinstance(a, ast.Name))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            handed_on.add(node.value.id)  # (x.size: an array's attribute)
    names = set(params)
    numbers = (names & used) - indexed - handed_on  # (a parameter never read: no check)
    return params, frozenset(indexed & names), frozenset(written & names), frozenset(numbers)


def _what(value: Any) -> str:
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"a {value.dtype} array of shape {tuple(value.shape)}"
    return f"{type(value).__name__} {value!r:.40}"


def check_arguments(func: Any, name: str, args: tuple) -> None:
    """Name a launch argument of the wrong kind before any thread runs: a number where the
    kernel indexes an array, an array where it uses a number, a read-only array it writes."""
    params, indexed, written, numbers = _roles(func)
    if len(args) != len(params):
        raise TypeError(
            f"kernel {name}: takes {len(params)} arguments ({', '.join(params)}), but the "
            f"launch gave {len(args)}"
        )
    for param, value in zip(params, args, strict=True):
        if type(value).__module__.startswith("minitorch") and hasattr(value, "numpy"):
            raise TypeError(
                f"kernel {name}: parameter {param!r} got a minitorch {type(value).__name__}; "
                f"a kernel takes arrays: pass {param}.numpy() (or a cupy array on a GPU)"
            )
        is_array = hasattr(value, "shape") and getattr(value, "ndim", 0) > 0
        if param in indexed and not is_array:
            raise TypeError(
                f"kernel {name}: parameter {param!r} is indexed in the kernel ({param}[...]), "
                f"but the launch passed {_what(value)}: pass an array"
            )
        if param in numbers and is_array:
            raise KernelLanguageError(
                f"kernel {name}: parameter {param!r} is used as a number in the kernel, but the "
                f"launch passed {_what(value)}: a thread works on one element at a time (index "
                f"it, {param}[i], or pass a Python number)"
            )
        flags = getattr(value, "flags", None)
        if param in written and flags is not None and not flags.writeable:
            raise ValueError(
                f"kernel {name}: parameter {param!r} is written by the kernel ({param}[...] = "
                f"...), but the launch passed a read-only array ({_what(value)}): pass a "
                "writable one, e.g. np.empty_like(...)"
            )


def check_types(func: Any, name: str, args: tuple) -> None:
    """Refuse a variable whose type changes in ``func`` launched with ``args`` (as cupyx.jit
    would): :func:`minitorch.cuda.language_rules.check_types`."""
    language_rules.check_types(func, name, args, sys.modules[__name__])


def _code_names(code: Any) -> set[str]:
    """The global and attribute names ``code`` and the code nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def _module_attributes(code: Any) -> list[tuple[str, str]]:
    """``(name, attribute)`` for each ``name.attribute`` that ``code`` (and the code nested
    in it) reads off a global: the byte code's global load followed by an attribute load."""
    import dis

    found, previous = [], None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and previous is not None:
            found.append((previous, ins.argval))
        previous = ins.argval if ins.opname in ("LOAD_GLOBAL", "LOAD_DEREF") else None
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            found += _module_attributes(const)
    return found


def _refuse_builtins(func: Any, names: set[str]) -> None:
    """Refuse a call of a Python built-in a GPU has no counterpart for (``sorted``, ...)."""
    for name in sorted(names):
        value = getattr(builtins, name, None)
        if callable(value) and name not in language_rules.BUILTINS:
            raise KernelLanguageError(
                f"kernel `{func.__name__}` calls the Python built-in `{name}`: a GPU kernel "
                f"can use only {', '.join(language_rules.BUILTINS)} (and jit.* built-ins)"
            )


def check_language(func: Any, _seen: set | None = None, device: bool = False) -> None:
    """Refuse a kernel that calls numpy/cupy/torch/minitorch (a GPU thread cannot run them),
    or uses what ``cupyx.jit`` cannot compile (:mod:`minitorch.cuda.language_rules`)."""
    _seen = {func} if _seen is None else _seen
    names = inspect.getclosurevars(func)
    scope = {**names.globals, **names.nonlocals}
    try:
        tree = ast.parse(source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        tree = None
    if tree is not None and not tree.body:  # no lines to read (code run from a string)
        tree = None
    used: list[tuple[str, Any]] = []
    if tree is None:  # what the code object names: its globals, modules' attributes, built-ins
        used = [(n, v) for n, v in scope.items() if not isinstance(v, ModuleType)]
        for n, attr in _module_attributes(func.__code__):
            module = scope.get(n)
            if isinstance(module, ModuleType) and attr not in _DTYPE_NAMES:
                used.append((f"{n}.{attr}", getattr(module, attr, module)))
        _refuse_builtins(func, _code_names(func.__code__) - set(scope))
    else:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                raise KernelLanguageError(
                    f"kernel `{func.__name__}` imports inside its body: a GPU kernel cannot "
                    "import; use only the kernel language (minitorch.cuda.jit)"
                )
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = scope.get(node.value.id)
                if isinstance(base, ModuleType) and node.attr not in _DTYPE_NAMES:
                    used.append((f"{node.value.id}.{node.attr}", getattr(base, node.attr, base)))
            elif isinstance(node, ast.Name) and node.id in scope:
                value = scope[node.id]
                if not isinstance(value, ModuleType):
                    used.append((node.id, value))
    for shown, value in used:
        library = _forbidden(value)
        if library is not None:
            raise KernelLanguageError(
                f"kernel `{func.__name__}` uses `{shown}` from {library}: a kernel runs on each "
                "GPU thread and can only use the kernel language (element reads and writes, "
                "scalar arithmetic, jit.* built-ins), not a library's ready-made functions"
            )
    if tree is not None:
        language_rules.check_constructs(func, tree, scope, sys.modules[__name__], device)
    for value in scope.values():  # the device functions it calls, checked as they run on a GPU
        if isinstance(value, RawKernel) and value.device and value.func not in _seen:
            _seen.add(value.func)
            check_language(value.func, _seen, device=True)
