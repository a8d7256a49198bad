"""The kernels a notebook defines, read from the notebook without running it.

A kernel is a ``def`` decorated with ``@jit.rawkernel(...)`` in a code cell. To compile one,
only its ``def`` runs (not the cell, not the decorator: the kernel is made here), in a
namespace holding what the kernel may refer to: the kernel language as the notebook imports
it (``from minitorch.cuda import jit``), ``math``, and the numbers the notebook's cells
assign at top level (``BLOCK = 64``), as they are at the kernel's cell. Its source is the
cell's, so lines are the cell's lines.

Its argument types and block come from the notebook's own launch of it
(``kernel[grid, block](args)``), worked out from what the cells before assign, again
without running them: ``np.zeros(10, dtype=np.float32)`` is a float32 array,
``rng.standard_normal(n).astype(np.float32)`` too, ``2.0`` a Python float. An argument
that cannot be worked out is typed from how the kernel uses it (an indexed parameter is a
float32 array, any other a number), and the kernel is marked as having assumed types.
A kernel whose body is only ``raise NotImplementedError`` (an exercise not written yet)
is listed as not written, not compiled.
"""

from __future__ import annotations

import ast
import json
import linecache
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import jit
from .launches import Array, Launch

_UNKNOWN = object()
_NUMPY, _RNG = object(), object()
DEFAULT_BLOCK = (256, 1, 1)


@dataclass
class NotebookKernels:
    """What a notebook defines: a :class:`Launch` per kernel; the names of those whose types
    or block were assumed (not found in a launch); those not written yet."""

    path: str
    launches: list[Launch] = field(default_factory=list)
    assumed: set[str] = field(default_factory=set)
    not_written: list[str] = field(default_factory=list)


def notebook_kernels(path: str | Path) -> NotebookKernels:
    """Every kernel the notebook at ``path`` defines, ready to compile."""
    path = Path(path)
    try:
        cells = json.loads(path.read_text())["cells"]
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"compile: cannot read the notebook {path}: {exc}") from None
    reader = _Reader(str(path))
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            reader.cell(index, "".join(source) if isinstance(source, list) else source)
    return reader.result()


def _cell_text(text: str) -> str:
    """The cell's Python: IPython's ``%magic`` and ``!shell`` lines blanked (lines kept)."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n")
    )


class _Reader:
    """Walks a notebook's top-level statements in order, keeping what each name holds."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[str, Any] = {}  # name -> number, Array, module, kernel, marker
        self.kernels: dict[str, tuple[jit.RawKernel, str]] = {}  # name -> (kernel, where)
        self.launches: dict[str, tuple[tuple, Any]] = {}  # name -> (args, block): the first
        self.not_written: list[str] = []

    # -- cells and statements ----------------------------------------------------------------
    def cell(self, index: int, text: str) -> None:
        text = _cell_text(text)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        filename = f"<{self.path} cell {index}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        for stmt in tree.body:
            self.statement(stmt, filename)

    def statement(self, stmt: ast.stmt, filename: str) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.imports(stmt)
        elif isinstance(stmt, ast.FunctionDef):
            decorator = _kernel_decorator(stmt)
            if decorator is None:
                self.values[stmt.name] = _UNKNOWN
            else:
                self.define(stmt, decorator, filename)
        elif isinstance(stmt, ast.ClassDef):
            self.values[stmt.name] = _UNKNOWN
        elif isinstance(stmt, ast.Assign):
            value = self.evaluate(stmt.value)
            for target in stmt.targets:
                self.bind(target, value, stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            if isinstance(stmt.target, ast.Name):
                self.values[stmt.target.id] = _UNKNOWN
        elif isinstance(stmt, ast.Expr):
            self.expression(stmt.value)
        for body in ("body", "orelse", "finalbody", "handlers"):  # if/for/while/with/try
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                break
            for inner in getattr(stmt, body, ()):
                if isinstance(inner, ast.ExceptHandler):
                    for s in inner.body:
                        self.statement(s, filename)
                elif isinstance(inner, ast.stmt):
                    self.statement(inner, filename)

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        import minitorch

        known = {"numpy": np, "math": math, "minitorch": minitorch, "minitorch.cuda.jit": jit}
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                module = known.get(alias.name, _UNKNOWN)
                if alias.asname is None and "." in alias.name:
                    self.values[alias.name.partition(".")[0]] = known.get(
                        alias.name.partition(".")[0], _UNKNOWN
                    )
                else:
                    self.values[alias.asname or alias.name] = module
            return
        for alias in stmt.names:
            full = f"{stmt.module}.{alias.name}"
            if full == "minitorch.cuda.jit":
                value: Any = jit
            elif stmt.module == "minitorch.cuda.jit":
                value = getattr(jit, alias.name, _UNKNOWN)
            elif stmt.module == "math":
                value = getattr(math, alias.name, _UNKNOWN)
            else:
                value = _UNKNOWN
            self.values[alias.asname or alias.name] = value

    def bind(self, target: ast.expr, value: Any, node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.values[target.id] = value
        elif isinstance(target, ast.Tuple):
            parts = node.elts if isinstance(node, ast.Tuple) else None
            for k, elt in enumerate(target.elts):
                if parts is not None and len(parts) == len(target.elts):
                    self.bind(elt, self.evaluate(parts[k]), parts[k])
                elif isinstance(elt, ast.Name):
                    self.values[elt.id] = _UNKNOWN

    def expression(self, node: ast.expr) -> None:
        """Record a launch ``kernel[grid, block](args)`` of a kernel defined so far."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            return
        target = node.func.value
        if not (isinstance(target, ast.Name) and target.id in self.kernels):
            return
        if target.id in self.launches or not isinstance(node.func.slice, ast.Tuple):
            return
        geometry = node.func.slice.elts
        if len(geometry) != 2 or node.keywords:
            return
        args = tuple(self.evaluate(a) for a in node.args)
        self.launches[target.id] = (args, self.evaluate(geometry[1]))

    # -- kernels -------------------------------------------------------------------------------
    def define(self, stmt: ast.FunctionDef, decorator: ast.Call, filename: str) -> None:
        options = {}
        for kw in decorator.keywords:
            try:
                options[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                return
        if _is_placeholder(stmt):
            self.not_written.append(f"{stmt.name} ({filename[1:-1]})")
            self.values[stmt.name] = _UNKNOWN
            return
        bare = ast.FunctionDef(
            name=stmt.name,
            args=_plain_arguments(stmt.args),
            body=stmt.body,
            decorator_list=[],
            returns=None,
            type_comment=None,
            **({"type_params": []} if hasattr(stmt, "type_params") else {}),
        )
        ast.copy_location(bare, stmt)
        module = ast.fix_missing_locations(ast.Module(body=[bare], type_ignores=[]))
        scope = self.namespace()
        exec(compile(module, filename, "exec"), scope)  # only the def: it runs no cell code
        kernel = jit.RawKernel(
            scope[stmt.name], options.get("mode", "cuda"), bool(options.get("device", False))
        )
        self.values[stmt.name] = kernel
        if not kernel.device:
            self.kernels[stmt.name] = (kernel, f"{filename[1:-1]}")

    def namespace(self) -> dict[str, Any]:
        """What a kernel defined now may refer to: modules, numbers, device functions."""
        scope: dict[str, Any] = {}
        for name, value in self.values.items():
            if value is _NUMPY:
                value = np
            if isinstance(value, (bool, int, float, str, np.generic, jit.RawKernel)):
                scope[name] = value
            elif isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
                scope[name] = value
            elif (
                type(value).__name__ == "module"
                or callable(value)
                or isinstance(value, jit.ScalarType)
            ):
                scope[name] = value
        return scope

    def result(self) -> NotebookKernels:
        found = NotebookKernels(self.path, not_written=self.not_written)
        for name, (kernel, _where) in self.kernels.items():
            args, block = self.launches.get(name, (None, None))
            params = list(kernel.func.__code__.co_varnames[: kernel.func.__code__.co_argcount])
            typed = args is not None and len(args) == len(params)
            fallback = _body_types(kernel)
            chosen = []
            for k, param in enumerate(params):
                value = args[k] if typed else _UNKNOWN
                if not isinstance(value, (bool, int, float, np.generic, Array)):
                    value = fallback[param]
                    found.assumed.add(name)
                chosen.append(value)
            geometry = _as_block(block)
            if geometry is None:
                geometry = DEFAULT_BLOCK
                found.assumed.add(name)
            found.launches.append(Launch(name, kernel, tuple(chosen), geometry))
        return found

    # -- values without running the cells ------------------------------------------------------
    def evaluate(self, node: ast.expr) -> Any:  # noqa: C901 - one case per expression form
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, (bool, int, float, str)) else _UNKNOWN
        if isinstance(node, ast.Name):
            return self.values.get(node.id, _UNKNOWN)
        if isinstance(node, ast.Tuple):
            parts = tuple(self.evaluate(e) for e in node.elts)
            return _UNKNOWN if any(p is _UNKNOWN for p in parts) else parts
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.evaluate(node.operand)
            return -value if _is_number(value) else _UNKNOWN
        if isinstance(node, ast.BinOp):
            return _binop(node.op, self.evaluate(node.left), self.evaluate(node.right))
        if isinstance(node, ast.Subscript):
            base = self.evaluate(node.value)
            if isinstance(base, Array):
                index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                ndim = base.ndim - sum(not isinstance(i, ast.Slice) for i in index)
                return Array(base.dtype, ndim) if ndim > 0 else np.dtype(base.dtype).type(0)
            return _UNKNOWN
        if isinstance(node, ast.Attribute):
            base = self.evaluate(node.value)
            if base is np or base is _NUMPY:
                return getattr(np, node.attr, _UNKNOWN)
            if isinstance(base, Array) and node.attr == "T":
                return base
            if isinstance(base, type(np)) and base is not np:
                return getattr(base, node.attr, _UNKNOWN)
            return _UNKNOWN
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.List):
            return _literal_array(node)
        return _UNKNOWN

    def call(self, node: ast.Call) -> Any:
        func = node.func
        kwargs = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        dtype = self.dtype(kwargs["dtype"]) if "dtype" in kwargs else None
        if isinstance(func, ast.Attribute):
            base = self.evaluate(func.value)
            if isinstance(base, Array):
                return self.method(base, func.attr, node.args)
            if base is _RNG:
                kind = "int64" if func.attr == "integers" else "float64"
                size = kwargs.get("size") or (
                    node.args[0] if func.attr != "integers" and node.args else None
                )
                return Array(dtype or kind, self.ndim_of(size) if size is not None else 1)
            target = self.evaluate(func)
        else:
            target = self.evaluate(func)
        if target is _UNKNOWN or not callable(target):
            return _UNKNOWN
        if getattr(target, "__module__", "") == "numpy.random" or target is getattr(
            np.random, "default_rng", None
        ):
            return _RNG
        if isinstance(target, type) and issubclass(target, np.generic):
            value = self.evaluate(node.args[0]) if node.args else 0
            return target(value) if _is_number(value) else target(0)
        name = getattr(target, "__name__", "")
        if getattr(np, name, None) is not target:
            return _UNKNOWN
        return self.creation(name, node.args, dtype)

    def creation(self, name: str, args: list, dtype: str | None) -> Any:
        """numpy's array creation: the dtype and ndim of ``np.<name>(*args)``."""
        if name in ("zeros", "ones", "empty") and args:
            return Array(dtype or "float64", self.ndim_of(args[0]))
        if name == "full" and len(args) > 1:
            fill = self.evaluate(args[1])
            kind = np.asarray(fill).dtype.name if _is_number(fill) else "float64"
            return Array(dtype or kind, self.ndim_of(args[0]))
        if name in ("zeros_like", "ones_like", "empty_like", "full_like") and args:
            base = self.evaluate(args[0])
            return Array(dtype or base.dtype, base.ndim) if isinstance(base, Array) else _UNKNOWN
        if name == "arange":
            values = [self.evaluate(a) for a in args]
            kind = "float64" if any(isinstance(v, float) for v in values) else "int64"
            return Array(dtype or kind, 1)
        if name == "linspace":
            return Array(dtype or "float64", 1)
        if name in ("array", "asarray", "ascontiguousarray") and args:
            base = self.evaluate(args[0])
            if isinstance(base, Array):
                return Array(dtype or base.dtype, base.ndim)
            if _is_number(base):
                return _UNKNOWN  # a 0-d array: not something a kernel is launched with
        return _UNKNOWN

    def method(self, base: Array, name: str, args: list) -> Any:
        if name == "astype" and args:
            dtype = self.dtype(args[0])
            return Array(dtype, base.ndim) if dtype else _UNKNOWN
        if name == "reshape":
            if len(args) == 1:
                return Array(base.dtype, self.ndim_of(args[0]))
            return Array(base.dtype, len(args))
        if name in ("ravel", "flatten"):
            return Array(base.dtype, 1)
        if name == "copy":
            return base
        return _UNKNOWN

    def dtype(self, node: ast.expr) -> str | None:
        value = self.evaluate(node)
        try:
            return np.dtype(value).name if value is not _UNKNOWN else None
        except TypeError:
            return None

    def ndim_of(self, node: ast.expr) -> int:
        """How many dims a shape argument (``10``, ``(3, 4)``, ``n``) gives."""
        value = self.evaluate(node)
        if isinstance(value, tuple):
            return len(value)
        if isinstance(node, ast.Tuple):
            return len(node.elts)
        return 1


def _kernel_decorator(stmt: ast.FunctionDef) -> ast.Call | None:
    """The ``rawkernel(...)`` decorator call (``@jit.rawkernel()``, ``@rawkernel()``), if any."""
    for decorator in stmt.decorator_list:
        if isinstance(decorator, ast.Call):
            func = decorator.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "rawkernel":
                return decorator
    return None


def _is_placeholder(stmt: ast.FunctionDef) -> bool:
    body = [
        s for s in stmt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    exc = body[0].exc
    exc = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _plain_arguments(args: ast.arguments) -> ast.arguments:
    """The parameters without annotations, and defaults as ``None`` (nothing is evaluated;
    the kernel-language check refuses defaults from the source)."""
    plain = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
        args=[ast.arg(a.arg) for a in args.args],
        vararg=ast.arg(args.vararg.arg) if args.vararg else None,
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=[ast.Constant(None) if d is not None else None for d in args.kw_defaults],
        kwarg=ast.arg(args.kwarg.arg) if args.kwarg else None,
        defaults=[ast.Constant(None) for _ in args.defaults],
    )
    return plain


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.generic))


_OPERATORS = {
    ast.Add: "__add__",
    ast.Sub: "__sub__",
    ast.Mult: "__mul__",
    ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__",
    ast.Div: "__truediv__",
}


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    if _is_number(a) and _is_number(b):
        name = _OPERATORS.get(type(op))
        try:
            result = getattr(a, name)(b) if name else NotImplemented
        except (ArithmeticError, TypeError):
            return _UNKNOWN
        return _UNKNOWN if result is NotImplemented else result
    arrays = [v for v in (a, b) if isinstance(v, Array)]
    if arrays and all(isinstance(v, Array) or _is_number(v) for v in (a, b)):
        dtypes = [np.dtype(v.dtype) if isinstance(v, Array) else v for v in (a, b)]
        return Array(np.result_type(*dtypes).name, max(v.ndim for v in arrays))
    return _UNKNOWN


def _literal_array(node: ast.List) -> Any:
    try:
        return Array(
            np.asarray(ast.literal_eval(node)).dtype.name, np.asarray(ast.literal_eval(node)).ndim
        )
    except (ValueError, TypeError, SyntaxError):
        return _UNKNOWN


def _as_block(value: Any) -> tuple[int, int, int] | None:
    dims = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(dims) <= 3 or not all(
        isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims
    ):
        return None
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def _body_types(kernel: jit.RawKernel) -> dict[str, Any]:
    """Argument types from the kernel's body: an indexed parameter is a float32 array (with
    as many dims as its indices), a number used with an array element a float, others ints."""
    params, indexed, _, _ = jit._roles(kernel.func)
    try:
        tree = ast.parse(jit.source_of(kernel.func))
    except (OSError, SyntaxError, TypeError, IndexError):
        tree = None
    ndims: dict[str, int] = {}
    floats: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            n = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
            ndims[node.value.id] = max(ndims.get(node.value.id, 1), n)
        if isinstance(node, ast.BinOp):
            sides = (node.left, node.right)
            if any(isinstance(s, ast.Subscript) for s in sides):
                floats.update(s.id for s in sides if isinstance(s, ast.Name))
    types: dict[str, Any] = {}
    for param in params:
        if param in indexed:
            types[param] = Array("float32", ndims.get(param, 1))
        else:
            types[param] = 1.0 if param in floats else 1024
    return types
