"""The kernel language is what ``cupyx.jit`` compiles: the simulator refuses the rest.

The simulator runs a kernel as Python, so it could run far more than a GPU compiles. What
``cupyx.jit`` cannot compile, the simulator refuses too, before any thread runs, naming the
construct and the line (each rule below was found by compiling it, see
``tests/unit/test_cuda_cross_compile_language.py``):

- Python's containers and syntax a GPU has no counterpart for: lists, dicts, sets,
  comprehensions, f-strings, lambdas, nested functions, ``try``/``with``/``del``/``assert``,
  ``:=``, ``*`` unpacking, slices, ``else`` on a loop, chained comparisons (``0 <= i < n``),
  ``is``/``in``, ``for`` over anything but ``range(...)``, ``return`` of a value;
- calls a GPU cannot make: Python built-ins but ``range``/``len``/``min``/``max`` and the
  casts ``int``/``float``/``bool`` (``abs`` is ``jit.fabs``), plain Python functions (a
  kernel calls device functions), ``math`` functions without a GPU counterpart, other
  modules' functions;
- values a GPU cannot see: arrays, lists or objects held in globals (pass arrays as
  arguments), a shared-memory size not known when the kernel is compiled;
- a variable whose type changes (:func:`check_types`, at each launch, with the arguments'
  types): on a GPU a variable keeps the type of its first value, so ``acc = 0`` followed by
  ``acc = acc + x[i]`` on a float array does not compile (cupyx.jit cannot store a float in
  an int variable), while the simulator would quietly compute in floats.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import math
from types import ModuleType
from typing import Any

import numpy as np

from .errors import KernelLanguageError

#: ``math``'s names a kernel may use: those with a cupy counterpart ``cupyx.jit`` compiles
#: (``math.floor``/``ceil`` are not: Python's return ints, the GPU's floats).
GPU_MATH = ("exp", "log", "sqrt", "tanh", "fabs", "sin", "cos", "erf", "pi", "e")
#: Python built-ins ``cupyx.jit`` compiles (the casts, and the four it knows).
BUILTINS = ("range", "len", "min", "max", "int", "float", "bool")
_BUILTIN_HINTS = {
    "abs": "use jit.fabs(x)",
    "round": "use int(x + 0.5) for x >= 0",
    "print": "a GPU thread cannot print: write the values to an output array",
    "sum": "add in a loop over range(...)",
    "pow": "use x ** y or jit.power(x, y)",
}

#: Syntax cupyx.jit has no translation for: node type -> (what it is, what to write instead).
_SYNTAX = {
    ast.List: ("a list", "use scalar variables, or shared memory (jit.shared_memory)"),
    ast.ListComp: ("a list comprehension", "use a for loop over range(...)"),
    ast.Dict: ("a dict", "use scalar variables"),
    ast.DictComp: ("a dict comprehension", "use scalar variables"),
    ast.Set: ("a set", "use scalar variables"),
    ast.SetComp: ("a set comprehension", "use scalar variables"),
    ast.GeneratorExp: ("a generator expression", "use a for loop over range(...)"),
    ast.JoinedStr: ("an f-string", "a GPU thread has no strings"),
    ast.Lambda: ("a lambda", "write a device function: @jit.rawkernel(device=True)"),
    ast.NamedExpr: ("`:=`", "assign on a line of its own"),
    ast.Starred: ("`*` unpacking", "pass the values one by one"),
    ast.Slice: ("a slice", "index one element at a time: x[i]"),
    ast.FunctionDef: ("a nested function", "write a device function: @jit.rawkernel(device=True)"),
    ast.AsyncFunctionDef: ("a nested function", "write a device function"),
    ast.ClassDef: ("a class", "use scalar variables"),
    ast.Try: ("try/except", "guard with an if"),
    ast.With: ("a with block", "write the body without it"),
    ast.Delete: ("del", "leave the variable"),
    ast.Assert: ("assert", "guard with an if"),
    ast.Global: ("global", "pass values as arguments"),
    ast.Nonlocal: ("nonlocal", "pass values as arguments"),
    ast.Yield: ("yield", "write results to an output array"),
    ast.YieldFrom: ("yield", "write results to an output array"),
    ast.Await: ("await", "a kernel is not a coroutine"),
}
if hasattr(ast, "TryStar"):
    _SYNTAX[ast.TryStar] = ("try/except*", "guard with an if")


def _refuse(name: str, first_line: int, node: ast.AST, what: str, hint: str) -> None:
    line = first_line + getattr(node, "lineno", 1) - 1
    raise KernelLanguageError(
        f"kernel `{name}`, line {line}: {what} is not in the kernel language (cupyx.jit, "
        f"which compiles kernels for the GPU, has no translation for it): {hint}"
    )


def check_constructs(
    func: Any, tree: ast.Module, scope: dict[str, Any], language: ModuleType, device: bool = False
) -> None:
    """Refuse each construct of ``func`` (whose source parsed is ``tree``; ``scope``: the
    globals and closure variables it uses) that ``cupyx.jit`` cannot compile. ``language``
    is the kernel language's module (:mod:`minitorch.cuda.jit`, which calls this); a device
    function (``device``) may return a value."""
    name, first = func.__name__, func.__code__.co_firstlineno
    fn = tree.body[0] if tree.body else None  # (no source to read: nothing to check)
    if not isinstance(fn, ast.FunctionDef):
        return
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        _refuse(
            name,
            first,
            fn,
            "a parameter with a default, *args, **kwargs or a keyword-only parameter",
            "give the kernel plain parameters and pass every value at the launch",
        )
    params = {p.arg for p in a.args}
    assigned = {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    tuples = {
        t.id
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Tuple)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    for node in _walk_body(fn):
        kind = type(node)
        if kind in _SYNTAX:
            what, hint = _SYNTAX[kind]
            _refuse(name, first, node, what, hint)
        if isinstance(node, ast.Raise) and not _is_placeholder(node):
            _refuse(name, first, node, "raise", "a GPU thread cannot raise: guard with an if")
        elif isinstance(node, ast.Compare):
            _check_compare(name, first, node)
        elif isinstance(node, (ast.For, ast.While)):
            _check_loop(name, first, node)
        elif isinstance(node, ast.Return) and node.value is not None and not device:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                _refuse(
                    name,
                    first,
                    node,
                    "return of a value from a kernel",
                    "a kernel returns nothing: write results to an output array",
                )
        elif isinstance(node, ast.Call):
            _check_call(name, first, node, scope, params | assigned, language)
        elif isinstance(node, ast.Attribute):
            _check_attribute(name, first, node, scope, params, language)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            base = node.value.id
            constant = isinstance(node.slice, ast.Constant)
            is_tuple = base in tuples or (
                base not in params | assigned and base in scope and isinstance(scope[base], tuple)
            )
            if is_tuple and not constant:
                _refuse(
                    name,
                    first,
                    node,
                    f"indexing the tuple `{base}` with a variable",
                    "a GPU indexes a tuple only with a number written in the code",
                )
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in params | assigned and node.id in scope:
                _check_value(name, first, node, scope[node.id], language)


def _walk_body(fn: ast.FunctionDef) -> Any:
    """Every node of the function's body (not its decorators or signature, nor what a
    ``raise NotImplementedError(...)`` placeholder says)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop(0)
        yield node
        if not (isinstance(node, ast.Raise) and _is_placeholder(node)):
            todo.extend(ast.iter_child_nodes(node))


def _is_placeholder(node: ast.Raise) -> bool:
    """``raise NotImplementedError(...)``: an exercise not written yet (it never runs)."""
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _check_compare(name: str, first: int, node: ast.Compare) -> None:
    if len(node.ops) > 1:
        _refuse(
            name,
            first,
            node,
            "a chained comparison (a < b < c)",
            "write it as two comparisons: `a < b and b < c`",
        )
    if isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        _refuse(name, first, node, "`is` / `in`", "compare numbers with == and !=")


def _check_loop(name: str, first: int, node: ast.For | ast.While) -> None:
    if node.orelse:
        _refuse(name, first, node, "`else` on a loop", "test a flag after the loop")
    if isinstance(node, ast.For):
        it = node.iter
        if not (
            isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
        ):
            _refuse(
                name,
                first,
                node,
                "a for loop over something other than range(...)",
                "loop over indices: for j in range(n)",
            )
        if not isinstance(node.target, ast.Name):
            _refuse(name, first, node, "a for loop with several targets", "use one index")


def _resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The Python object an expression like ``jit.exp`` or ``math`` names, or ``_UNKNOWN``."""
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        return getattr(builtins, node.id, _UNKNOWN)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if isinstance(base, ModuleType):
            return getattr(base, node.attr, _UNKNOWN)
    return _UNKNOWN


_UNKNOWN = object()


def _check_call(
    name: str, first: int, node: ast.Call, scope: dict, local: set, jit: ModuleType
) -> None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in local:
        return  # a parameter or a local (the roles check says what it is)
    target = _resolve(func, scope)
    shown = ast.unparse(func)
    if isinstance(func, ast.Name) and func.id not in scope and target is not _UNKNOWN:
        if func.id not in BUILTINS:
            hint = _BUILTIN_HINTS.get(
                func.id, f"of Python's built-ins a kernel may call {', '.join(BUILTINS)}"
            )
            _refuse(name, first, node, f"the Python built-in `{func.id}()`", hint)
        return
    if target is _UNKNOWN:
        if isinstance(func, ast.Attribute):
            _refuse(
                name,
                first,
                node,
                f"the method call `{shown}(...)`",
                "a kernel's arrays and numbers have no methods: use jit.* functions",
            )
        return
    if isinstance(target, jit.RawKernel):
        if not target.device:
            _refuse(
                name,
                first,
                node,
                f"calling the kernel `{shown}` from a kernel",
                "make it a device function: @jit.rawkernel(device=True)",
            )
        return
    if target is jit.shared_memory or getattr(target, "__name__", "") == "shared_memory":
        _check_shared_size(name, first, node, local)
        return
    module = getattr(target, "__module__", None) or ""
    if isinstance(target, jit.ScalarType) or (
        isinstance(target, type) and issubclass(target, np.generic)
    ):
        return  # a cast: float32(x)
    if module.startswith(("minitorch.cuda.jit", "minitorch.cuda.simulator")):
        return
    if target in (getattr(math, n, None) for n in GPU_MATH):
        return
    if module == "math":
        return  # a math function outside GPU_MATH: refused as an attribute
    _refuse(
        name,
        first,
        node,
        f"calling `{shown}`, a plain Python function",
        "a kernel calls only the kernel language (jit.*) and device functions "
        "(@jit.rawkernel(device=True))",
    )


def _check_shared_size(name: str, first: int, node: ast.Call, local: set) -> None:
    size = node.args[1] if len(node.args) > 1 else None
    used = {n.id for n in ast.walk(size) if isinstance(n, ast.Name)} if size else set()
    runtime = sorted(used & local)
    if runtime:
        _refuse(
            name,
            first,
            node,
            f"a shared-memory size that depends on `{runtime[0]}`",
            "the size must be known when the kernel is compiled: a number or a constant "
            "the kernel's module or closure holds (e.g. BLOCK), not a parameter or a "
            "variable of the kernel",
        )


#: What a kernel may read off an array argument: nothing but its elements, by index, and
#: what cupyx.jit's CArray has.
ARRAY_ATTRIBUTES = frozenset({"shape", "size", "ndim"})


def _check_attribute(
    name: str, first: int, node: ast.Attribute, scope: dict, params: set, language: ModuleType
) -> None:
    if isinstance(node.value, ast.Name) and node.value.id in params:
        if node.attr not in ARRAY_ATTRIBUTES:
            _refuse(
                name,
                first,
                node,
                f"`{node.value.id}.{node.attr}`",
                "a kernel touches device memory only through its arguments' elements "
                f"({node.value.id}[i]); an array argument has no `.{node.attr}` on a GPU",
            )
        return
    base = _resolve(node.value, scope)
    if base is language and node.attr not in getattr(language, "__all__", ()):
        _refuse(
            name,
            first,
            node,
            f"`{ast.unparse(node)}`",
            "a kernel may use only the kernel language (jit.threadIdx, jit.syncthreads, "
            "jit.shared_memory, ...), not the simulator's or minitorch's internals",
        )
    if base is math and node.attr not in GPU_MATH:
        _refuse(
            name,
            first,
            node,
            f"`math.{node.attr}`",
            f"of math, a kernel has {', '.join(GPU_MATH)} (and jit.*)",
        )


def _check_value(name: str, first: int, node: ast.Name, value: Any, jit: ModuleType) -> None:
    if isinstance(value, ModuleType) and value is not jit and value is not math:
        if value.__name__.startswith("minitorch.cuda"):  # (other libraries: _forbidden says)
            _refuse(
                name,
                first,
                node,
                f"`{node.id}`, the module {value.__name__}",
                "a kernel may use only the kernel language (minitorch.cuda.jit) and math, "
                "not the simulator's or minitorch's internals",
            )
        return
    if value is None or isinstance(value, (bool, int, float, str, ModuleType, type)):
        return
    if isinstance(value, (np.generic, jit.RawKernel, jit.ScalarType)) or callable(value):
        return
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
        return
    module = getattr(type(value), "__module__", "")
    if module.startswith(("minitorch.cuda.jit", "minitorch.cuda.simulator")):
        return
    what = "an array" if hasattr(value, "shape") else f"a {type(value).__name__}"
    _refuse(
        name,
        first,
        node,
        f"the global `{node.id}` ({what})",
        "a GPU kernel sees only numbers written in the code and its arguments: pass "
        f"`{node.id}` as an argument",
    )


# -- types of variables -------------------------------------------------------------------------

INT, FLOAT, BOOL = "int", "float", "bool"
_ARTICLE = {INT: "an int", FLOAT: "a float", BOOL: "a bool"}


def _element_kind(dtype: Any) -> str | None:
    kind = np.dtype(dtype).kind
    return {"f": FLOAT, "i": INT, "u": INT, "b": BOOL}.get(kind)


def kind_of(value: Any) -> Any:
    """A launch argument's kind: ``("array", element kind)``, ``"int"``, ``"float"``, ..."""
    if hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
        return ("array", _element_kind(value.dtype))
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return INT
    if isinstance(value, (float, np.floating)):
        return FLOAT
    return None


def check_types(func: Any, name: str, args: tuple, language: ModuleType) -> None:
    """Refuse a variable that changes type (int to float, bool to a number) in ``func``
    launched with ``args``: on a GPU a variable keeps the type of its first value.
    ``language``: the kernel language's module, as for :func:`check_constructs`."""
    _check_types(func, name, tuple(kind_of(a) for a in args), language)


@functools.lru_cache(maxsize=4096)
def _check_types(func: Any, name: str, kinds: tuple, jit: ModuleType) -> None:
    try:
        tree = ast.parse(jit.source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        return
    fn = tree.body[0] if tree.body else None  # (no source to read: nothing to check)
    if not isinstance(fn, ast.FunctionDef):
        return
    closure = inspect.getclosurevars(func)
    scope = {**closure.globals, **closure.nonlocals}
    params = {p.arg: k for p, k in zip(fn.args.args, kinds, strict=False)}
    _Types(name, func.__code__.co_firstlineno, scope, params, jit).block(fn.body)


def _join(*kinds: Any) -> Any:
    found = set(kinds)
    if len(found) == 1:
        return kinds[0]
    if None in found or any(isinstance(k, tuple) for k in found):
        return None
    return FLOAT if FLOAT in found else INT


class _Types:
    """Walks a kernel's statements in order (as cupyx.jit does), giving each variable the kind
    of its first value and refusing a later value of a kind it cannot hold."""

    def __init__(self, name: str, first: int, scope: dict, params: dict, jit: ModuleType) -> None:
        self.name, self.first, self.scope, self.jit = name, first, scope, jit
        self.vars: dict[str, tuple[Any, ast.AST]] = {p: (k, None) for p, k in params.items()}

    def block(self, stmts: list) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            self.assign(node.targets[0], node.value, node)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            current = self.vars.get(node.target.id, (None, None))[0]
            new = self.binop(node.op, current, self.expr(node.value))
            self.store(node.target.id, new, node)
        elif isinstance(node, ast.For):
            if isinstance(node.target, ast.Name):
                self.store(node.target.id, INT, node)
            self.block(node.body)
        elif isinstance(node, (ast.While, ast.If)):
            self.block(node.body)
            self.block(node.orelse)

    def assign(self, target: ast.expr, value: ast.expr, node: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.store(target.id, self.expr(value), node)
        elif isinstance(target, ast.Tuple):
            values = value.elts if isinstance(value, ast.Tuple) else None
            kind = self.expr(value)
            for k, elt in enumerate(target.elts):
                if not isinstance(elt, ast.Name):
                    continue
                if values is not None and len(values) == len(target.elts):
                    self.store(elt.id, self.expr(values[k]), node)
                else:
                    self.store(elt.id, kind[1] if isinstance(kind, tuple) else None, node)

    def store(self, var: str, kind: Any, node: ast.stmt) -> None:
        if var not in self.vars:
            self.vars[var] = (kind, node)
            return
        first, where = self.vars[var]
        if (first == INT and kind == FLOAT) or (first == BOOL and kind in (INT, FLOAT)):
            line = self.first + node.lineno - 1
            began = (
                "its parameter's value"
                if where is None
                else (f"`{ast.unparse(where).strip()}`, line {self.first + where.lineno - 1}")
            )
            raise KernelLanguageError(
                f"kernel `{self.name}`, line {line}: `{var}` is first {_ARTICLE[first]} "
                f"({began}), then given {_ARTICLE[kind]} (`{ast.unparse(node).strip()}`): on a "
                f"GPU a variable keeps the type of its first value, and cupyx.jit cannot store "
                f"{_ARTICLE[kind]} in {_ARTICLE[first]} variable. Start it as {_ARTICLE[kind]} "
                f"(e.g. `{var} = 0.0`)"
            )

    def binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if isinstance(op, ast.Div):
            return FLOAT
        if a == BOOL and b == BOOL and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return BOOL
        kind = _join(INT if a == BOOL else a, INT if b == BOOL else b)
        return kind if kind in (INT, FLOAT) else None

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            value = node.value
            return kind_of(value) if isinstance(value, (bool, int, float)) else None
        if isinstance(node, ast.Name):
            if node.id in self.vars:
                return self.vars[node.id][0]
            value = self.scope.get(node.id)
            if isinstance(value, tuple) and value:
                return ("tuple", _join(*(kind_of(v) for v in value)))
            return kind_of(value) if isinstance(value, (bool, int, float)) else None
        if isinstance(node, ast.Attribute):
            value = _resolve(node, self.scope)
            if isinstance(value, (bool, int, float)):
                return kind_of(value)
            return INT if node.attr in ("x", "y", "z", "size", "ndim") else None
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            return base[1] if isinstance(base, tuple) else None
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return BOOL
            inner = self.expr(node.operand)
            return INT if inner == BOOL or isinstance(node.op, ast.Invert) else inner
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return BOOL
        if isinstance(node, ast.IfExp):
            return _join(self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, ast.Tuple):
            return ("tuple", _join(*(self.expr(e) for e in node.elts))) if node.elts else None
        if isinstance(node, ast.Call):
            return self.call(node, _resolve(node.func, self.scope))
        return None

    def call(self, node: ast.Call, target: Any) -> Any:
        jit = self.jit
        args = node.args
        if target in (int, float, bool):
            return {int: INT, float: FLOAT, bool: BOOL}[target]
        if target in (min, max):
            return _join(*(self.expr(a) for a in args)) if args else None
        if target is len:
            return INT
        if isinstance(target, jit.ScalarType):
            return _element_kind(target.dtype)
        if isinstance(target, type) and issubclass(target, np.generic):
            return _element_kind(target)
        if target is jit.grid:
            one = args and isinstance(args[0], ast.Constant) and args[0].value == 1
            return INT if one else ("tuple", INT)
        if target is jit.shared_memory and args:
            dtype = _resolve(args[0], self.scope)
            if isinstance(dtype, jit.ScalarType):
                return ("array", _element_kind(dtype.dtype))
            if isinstance(dtype, type) and issubclass(dtype, np.generic):
                return ("array", _element_kind(dtype))
            return None
        if target in (jit.shfl_down_sync, jit.shfl_xor_sync) and len(args) > 1:
            return self.expr(args[1])
        if target is jit.atomic_add and args:
            base = self.expr(args[0])
            return base[1] if isinstance(base, tuple) else None
        if target in (jit.exp, jit.log, jit.sqrt, jit.tanh, jit.fabs, jit.erf, jit.power):
            return FLOAT
        if callable(target) and getattr(target, "__module__", "") == "math":
            return FLOAT
        return None
