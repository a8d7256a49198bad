"""Guards on what a compiled function reads besides its arguments: the globals and closure
cells its code names -- and those of the helper functions, methods and submodules it calls --
and the plain attributes of the module it is (``self.scale``).

A trace bakes what it read into the graph: a number as a constant, a tensor as a captured
value. ``torch.compile`` guards each such read and recompiles when one changes; so does
``minitorch.compile``. Each read is guarded by a *fingerprint* of its value: numbers,
strings and None by value, lists, tuples, dicts and sets by their contents (so
``LIST[0] = 5`` or ``CONFIG["lr"] = 0.1`` after compiling is seen), objects by their
attributes, tensors, functions and classes by identity (a tensor written in place is seen
by the guards on the graph's constants). A value too large to fingerprint cheaply is
``Unguardable``: the caller runs such a function eagerly and says why.
"""

from __future__ import annotations

import collections
import dis
import enum
import functools
import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..tensor import Tensor

_SCALARS = (bool, int, str, bytes, type(None))
#: The most items (list entries, dict values, array elements) one read may hold.
MAX_ITEMS = 10_000
#: How deep objects inside objects are followed.
_MAX_DEPTH = 8

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARIES = tuple(
    {os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items() if k.endswith("lib")}
)


class Guard:
    """One assumption of a compiled graph: ``check(args, kwargs)`` returns None when it
    holds, else a sentence saying how it failed."""

    def __init__(self, description: str, check: Callable[..., str | None]) -> None:
        self.description = description
        self.check = check

    def __repr__(self) -> str:
        return f"Guard({self.description})"


class Unguardable(Exception):  # noqa: N818 - a condition, not a failure
    """A value the graph reads that can't be guarded cheaply (the message says which)."""


# --- fingerprints -----------------------------------------------------------------------
class _Budget:
    def __init__(self, what: str) -> None:
        self.what, self.left = what, MAX_ITEMS

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise Unguardable(
                f"{self.what} holds more than {MAX_ITEMS} items, too many to check on every call"
            )


def fingerprint(value: Any, what: str = "the value") -> Any:
    """A hashable summary of ``value`` that changes when what a trace read from it changes."""
    if isinstance(value, _SCALARS):  # (the common case, checked on every call: no budget)
        return (type(value), value)
    if isinstance(value, Tensor):
        return ("id", id(value))
    return _fp(value, _Budget(what), 0, set())


def _fp(value: Any, budget: _Budget, depth: int, active: set[int]) -> Any:  # noqa: PLR0911
    budget.spend(1)
    if isinstance(value, _SCALARS):
        return (type(value), value)
    if isinstance(value, (float, complex)):
        return (type(value), repr(value))  # (NaN equals itself here)
    if isinstance(value, Tensor) or _by_identity(value):
        return ("id", id(value))
    if depth > _MAX_DEPTH:
        raise Unguardable(f"{budget.what} nests objects more than {_MAX_DEPTH} deep")
    if id(value) in active:
        return ("cycle", id(value))
    active.add(id(value))
    try:
        return _fp_container(value, budget, depth + 1, active)
    finally:
        active.discard(id(value))


def _fp_container(value: Any, budget: _Budget, depth: int, active: set[int]) -> Any:
    def fp(v: Any) -> Any:
        return _fp(v, budget, depth, active)

    # (containers and objects by their contents: the graph holds values read from them)
    if isinstance(value, (tuple, list, collections.deque)):
        return (type(value), tuple(fp(v) for v in value))
    if isinstance(value, dict):
        return (type(value), tuple((fp(k), fp(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(fp(v) for v in value))
    if isinstance(value, np.ndarray):
        budget.spend(value.size)
        return ("array", value.shape, str(value.dtype), value.tobytes())
    if isinstance(value, functools.partial):
        return ("partial", fp(value.func), fp(value.args), fp(value.keywords))
    if _is_module(value):
        return _fp_module(value, fp)
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict):
        return (type(value), tuple((k, fp(v)) for k, v in state.items()))
    return ("id", id(value))


def _fp_module(module: Any, fp: Callable[[Any], Any]) -> Any:
    """A Module read as a global: its tensors by identity, its flags and plain attributes."""
    parts = []
    for prefix, m in module.named_modules():
        tensors = tuple((k, id(v)) for k, v in {**m._parameters, **m._buffers}.items())
        plain = tuple((k, fp(v)) for k, v in vars(m).items() if not k.startswith("_"))
        parts.append((prefix, type(m), m.training, tensors, plain))
    return ("module", id(module), tuple(parts))


def _by_identity(value: Any) -> bool:
    """Functions, classes, modules, enum members, dtypes: compared by identity."""
    from ..device import device
    from ..dtypes import dtype

    return isinstance(
        value,
        (
            types.FunctionType,
            types.BuiltinFunctionType,
            types.MethodType,
            types.ModuleType,
            type,
            enum.Enum,
            dtype,
            device,
            np.dtype,
            np.generic,
        ),
    ) or type(value).__name__ in ("CompiledFunction",)


def _is_module(value: Any) -> bool:
    from ..nn import Module

    return isinstance(value, Module)


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)} (id {id(value):#x})"
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict) and not _by_identity(value) and not _is_module(value):
        inner = ", ".join(f"{k}={v!r}" for k, v in state.items() if not k.startswith("_"))
        text = f"{type(value).__name__}({inner})"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def value_read_guard(description: str, read: Callable[[], Any]) -> Guard:
    """A Guard that re-reads a value and compares its fingerprint with the one seen now."""
    traced = read()
    print_as = _describe(traced)
    expected = fingerprint(traced, description)

    def check(args: tuple, kwargs: dict) -> str | None:
        try:
            now = read()
        except (KeyError, AttributeError, ValueError, IndexError):
            return f"{description} is gone"
        try:
            if fingerprint(now, description) == expected:
                return None
        except Unguardable as err:
            return f"{description} changed: {err}"
        return f"{description} changed: it was {print_as} at trace time, it is now {_describe(now)}"

    return Guard(f"{description} unchanged", check)


# --- what the code reads ----------------------------------------------------------------
def is_user_file(filename: str) -> bool:
    """A file of the program being compiled: not minitorch's own, nor the standard library's
    or an installed package's (their globals are theirs, not the program's state)."""
    if filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename) if not filename.startswith("<") else ""
    return not (path.startswith(_PACKAGE) or path.startswith(_LIBRARIES))


def is_user_code(code: types.CodeType) -> bool:
    return is_user_file(code.co_filename)


def is_user_class(cls: type) -> bool:
    """A class the program defined (a notebook's ``__main__`` has no file: it counts)."""
    if cls.__module__ == "builtins":
        return False
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    return path is None or is_user_file(path)


#: What every Module keeps in its ``__dict__`` (guarded otherwise: flags, hooks, shapes).
_MODULE_STATE = frozenset(
    {"training", "_parameters", "_buffers", "_non_persistent", "_modules", "_forward_pre_hooks",
     "_forward_hooks"}
)  # fmt: skip


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


class _Reads:
    """Walks a function, what it calls and the module it belongs to, collecting a guard for
    every global, closure variable and attribute read on the way."""

    def __init__(self) -> None:
        self.guards: list[Guard] = []
        self.names: set[str] = set()  # every name user code reads (attributes included)
        self._seen: set[int] = set()
        self._keys: set[Any] = set()
        self._top: Any = None  # the code of the function compiled (its reads need no "via")

    def add(self, key: Any, description: str, read: Callable[[], Any]) -> None:
        if key not in self._keys:
            self._keys.add(key)
            self.guards.append(value_read_guard(description, read))

    def function(self, fn: Any, called: bool = True) -> None:
        """Guard what ``fn`` reads and walk what it calls. ``called``: it runs when the
        compiled function runs (not merely a method of a class it uses), so a ``global``
        statement in it is a side effect no graph can replay."""
        func = getattr(fn, "__func__", fn)
        if isinstance(func, functools.partial):
            return self.follow(func.func)
        code = getattr(func, "__code__", None)
        if not isinstance(func, types.FunctionType) or code is None or id(code) in self._seen:
            return None
        self._seen.add(id(code))
        if not is_user_code(code):
            return None
        codes = list(_codes(code))
        names = {n for c in codes for n in c.co_names}
        self.names |= names
        if called:
            self._refuse_side_effects(func, codes)
        if self._top is None:
            self._top = code
        via = "" if code is self._top else f" (read by {func.__qualname__})"
        g = func.__globals__
        for name in sorted(names):
            if name not in g:
                continue
            value = g[name]
            if isinstance(value, types.ModuleType):
                self._module_attributes(value, names, via)
                continue
            self.add((id(g), name), f"global {name!r}{via}", lambda g=g, n=name: g[n])
            self.follow(value)
        for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=True):
            if name == "__class__":  # the cell super() reads: the class itself
                continue
            try:
                value = cell.cell_contents
            except ValueError:  # not assigned yet
                continue
            read = lambda c=cell: c.cell_contents  # noqa: E731
            self.add(("cell", id(cell)), f"closure variable {name!r}{via}", read)
            self.follow(value)
        if func.__defaults__ or func.__kwdefaults__:
            self.add(
                ("defaults", id(func)),
                f"the defaults of {func.__qualname__}",
                lambda f=func: (f.__defaults__, f.__kwdefaults__),
            )
        return None

    def _refuse_side_effects(self, func: Any, codes: list[types.CodeType]) -> None:
        for code in codes:
            for ins in dis.get_instructions(code):
                if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                    raise Unguardable(
                        f"{func.__qualname__} assigns the global {ins.argval!r}: a compiled "
                        "graph does not run the Python statements around its ops"
                    )

    def _module_attributes(self, module: types.ModuleType, names: set[str], via: str) -> None:
        """``config.SCALE`` where ``config`` is a module of the program: guard the attribute."""
        path = getattr(module, "__file__", None)
        if path is None or not is_user_file(path):
            return
        for attr in sorted(names):
            if attr in vars(module) and not isinstance(vars(module)[attr], types.ModuleType):
                description = f"global {module.__name__}.{attr}{via}"
                self.add((id(module), attr), description, lambda m=module, a=attr: vars(m)[a])
                self.follow(vars(module)[attr])

    def follow(self, value: Any) -> None:
        """Walk the code that calling ``value`` runs: a function, a method, a class, the
        methods of an object or of a Module."""
        if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
            self.function(value)
            if isinstance(value, types.MethodType):
                self.follow_class(type(value.__self__))
        elif type(value).__name__ == "CompiledFunction":
            self.function(getattr(value, "forward", None))
        elif _is_module(value):
            self.module(value, attributes=False)
        elif isinstance(value, type):
            self.follow_class(value)
        elif hasattr(value, "__dict__") and not _by_identity(value):
            self.follow_class(type(value))

    def follow_class(self, cls: type) -> None:
        """The methods of ``cls`` and its bases, and the class attributes (``scale = 2.0``
        in the class body, read as ``self.scale``) of the program's own classes."""
        for klass in cls.__mro__:
            if id(klass) in self._seen:
                continue
            self._seen.add(id(klass))
            user = is_user_class(klass)
            for name, member in vars(klass).items():
                if name.startswith("__") and name != "__call__":
                    continue  # (__init__ and the like do not run when it is called)
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if isinstance(member, types.FunctionType):
                    self.function(member, called=name in ("forward", "__call__"))
                elif user and not isinstance(member, type) and not hasattr(member, "__get__"):
                    where = f"class attribute {klass.__qualname__}.{name}"
                    self._attribute(("class", id(klass), name), where, klass, name)

    def _attribute(self, key: Any, where: str, owner: Any, name: str) -> None:
        """Guard ``vars(owner)[name]``, unless it is too large to guard and no code read
        names it (a module's vocabulary table its forward never reads)."""
        try:
            self.add(key, where, lambda: vars(owner)[name])
        except Unguardable:
            if name in self.names or name in _package_names(type(owner)):
                raise
            return
        self.follow(vars(owner)[name])

    def module(self, module: Any, attributes: bool = True) -> None:
        """The methods of ``module`` and of its submodules, and (``attributes``) their plain
        attributes: numbers, strings, containers, objects."""
        for prefix, m in module.named_modules():
            self.follow_class(type(m))
            where = f"self.{prefix + '.' if prefix else ''}"
            for hook in (*m._forward_pre_hooks.values(), *m._forward_hooks.values()):
                self.follow(hook)  # (which hooks there are: compile's tree guard)
            if not attributes:
                continue
            user = is_user_class(type(m))
            for name in list(vars(m)):
                # (parameters, buffers and submodules live in Module's own dicts, guarded
                # by shape; training has its own guard; a package class's _-names are its
                # machinery)
                if name in _MODULE_STATE or (name.startswith("_") and not user):
                    continue
                self._attribute(("attr", id(m), name), where + name, m, name)


@functools.lru_cache(maxsize=256)
def _package_names(cls: type) -> frozenset:
    """The names the methods of ``cls`` read (for classes whose code is not walked)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        for member in vars(klass).values():
            code = getattr(member, "__code__", None)
            if code is not None:
                names.update(n for c in _codes(code) for n in c.co_names)
    return frozenset(names)


def read_guards(fn: Any, module: Any) -> list[Guard]:
    """Guards on the globals and closure cells that ``fn``'s code reads (and the code it
    calls: helper functions, methods, submodules' forwards), and on ``module``'s plain
    attributes and those of its submodules. Raises ``Unguardable`` for a read that can't be
    checked cheaply, or code that assigns a global."""
    reads = _Reads()
    reads.function(fn)
    if module is not None:
        reads.module(module)
    return reads.guards
