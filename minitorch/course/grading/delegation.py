"""Delegation: an answer that hands the exercised piece to a ready-made implementation.

An exercise declares what it forbids, next to its probes::

    STRIDES = forbid(minitorch.shape.contiguous_strides, minitorch.Tensor.stride, np.zeros)

    @probe(forbid=STRIDES)
    def strides(nb, shapes):
        return [nb.contiguous_strides(shape) for shape in shapes]

While the probe runs, a call to a forbidden implementation *made from code outside the
libraries* (the learner's cells, an alias of the function, a copy captured before grading,
a function re-created after ``importlib.reload``, a class attribute rebound to it) is
recorded; when the probe ends the probe fails with "your answer used minitorch's own
contiguous_strides: write it yourself", and the runner gives the whole exercise no points.
Calls minitorch (or the forbidden function's own package, numpy say) makes stay allowed:
``minitorch.tensor(values).view(shape)`` computes contiguous strides on the learner's
behalf, and that is not delegation. Library code that only passes the call along (the
standard library's ``unittest.mock``, ``functools``, ``threading``; other packages) does
not make it the library's: the walk up the callers goes on to the learner's code.

How it works: ``sys.setprofile`` (and ``threading.setprofile``) watch the ``call`` and
``c_call`` events; a callee matches a forbidden Python function by its code's location
(``co_filename``, ``co_name``, ``co_firstlineno``, which a reload or a rebinding keeps), a
forbidden C function by module and qualified name. The callers are walked up from the
callee: the call counts when the learner's code comes before minitorch's (or the
callee package's) own, and a frame counts as minitorch's only if its code is what
compiling its file gives and it runs with its module's globals (code compiled under a
library's file name is the learner's).

Threads: a probe's threads get the hook from ``threading.setprofile``; a thread the
notebook starts while it loads (a worker serving requests from a queue, say) gets
:func:`_dormant` (see :func:`watching_new_threads`), which hands each event to the hook
while a guard is active.

Limits: the watch runs in the learner's process, so it catches answers that delegate,
not a student who attacks the watch itself: switching a thread's hook off, clearing the
watch's records, ctypes. Those take code that reaches into the grader, which a look at
the notebook shows.

What ``forbid`` accepts (each may be wrapped in :class:`Forbidden` to give its label):

- a function, method, staticmethod, classmethod or property: that code;
- a class: every function defined in its body, and any class of the notebook that *is*
  it or subclasses it (``class Mul(ops.Mul): pass`` would otherwise run minitorch's own
  backward, called by the engine on the learner's behalf);
- ``(owner, "name")``: ``owner.__dict__["name"]`` (what ``getattr`` would hide);
- a numpy function (array-function dispatchers included) or another C function;
- a module name such as ``"torch"``: any call into that package.

Inside a probe, ``with forbidding(targets, nb):`` watches a narrower stretch; guards nest.
:data:`TORCH` is forbidden everywhere a probe forbids anything.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import re
import signal
import sys
import sysconfig
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import CodeType, FrameType, FunctionType, MethodType, ModuleType
from typing import Any

from minitorch.course.grading.fingerprint import fingerprint

#: The message starts so (``runner`` uses it to give the whole exercise no points).
DELEGATION_PREFIX = "your answer used "
#: Packages no answer may call (a learner who reaches for them delegates the piece).
TORCH = "torch"


#: Seconds a watched block goes on after its first forbidden call. It earns nothing
#: whatever it does next, so an answer that delegates and would then run to its time limit
#: (listing every index of a huge shape with ``np.ndindex``, say) is stopped sooner.
AFTER_A_HIT = 0.25


def _cut_short(layer: _Layer) -> None:
    """Bring a running time limit (``timelimit.time_limit``'s timer) down to
    :data:`AFTER_A_HIT` seconds from now, once per guard; without one, nothing changes.
    Not while a module is being imported: an import stopped halfway can leave an
    extension module (torch's) unable to load again in this process."""
    if layer.cut or not hasattr(signal, "getitimer") or _importing():
        return
    layer.cut = True
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    if left > AFTER_A_HIT:
        signal.setitimer(signal.ITIMER_REAL, AFTER_A_HIT)


def _importing() -> bool:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class Delegated(AssertionError):
    """The learner's code called a forbidden implementation; ``str()`` says which."""


@dataclass(frozen=True)
class Forbidden:
    """One forbidden implementation, with the words the message uses for it."""

    target: Any
    label: str = ""


@dataclass
class Targets:
    """A resolved set of forbidden implementations (what :func:`forbid` returns)."""

    codes: dict[tuple[str, str], dict[int, str]] = field(default_factory=dict)
    package_codes: dict[tuple[str, str], str] = field(default_factory=dict)
    wrappers: set[tuple[str, str, int]] = field(default_factory=set)
    c_functions: dict[tuple[str, str], str] = field(default_factory=dict)
    classes: dict[type, str] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)
    #: fingerprints of the forbidden functions' code (see ``fingerprint``) -> label
    copies: dict[str, str] = field(default_factory=dict)

    def __add__(self, other: Targets) -> Targets:
        merged = Targets()
        for part in (self, other):
            for key, lines in part.codes.items():
                merged.codes.setdefault(key, {}).update(lines)
            merged.package_codes.update(part.package_codes)
            merged.wrappers |= part.wrappers
            merged.c_functions.update(part.c_functions)
            merged.classes.update(part.classes)
            merged.packages.update(part.packages)
            merged.copies.update(part.copies)
        return merged

    def __bool__(self) -> bool:
        return bool(
            self.codes or self.package_codes or self.c_functions or self.classes or self.packages
        )


# -- resolving targets --------------------------------------------------------------------------


def _label(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        module = _c_key(obj)[0] if callable(obj) else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    root = module.split(".")[0]
    if root == "minitorch":
        return f"minitorch's own {name}"
    if root == "numpy":
        return f"numpy's {name}"
    return f"{root}'s {name}" if root else name


def _add_code(targets: Targets, code: CodeType, label: str) -> None:
    targets.codes.setdefault((code.co_filename, code.co_name), {})[code.co_firstlineno] = label
    printed = fingerprint(code)
    if printed is not None:
        targets.copies.setdefault(printed, label)


def _c_key(func: Any) -> tuple[str, str]:
    """(module, qualified name) of a C function or method, as a ``c_call`` event shows it."""
    module = getattr(func, "__module__", None)
    owner = getattr(func, "__objclass__", None) or getattr(func, "__self__", None)
    if not isinstance(module, str):
        if isinstance(owner, ModuleType):
            module = owner.__name__
        elif isinstance(owner, type):
            module = owner.__module__
        else:
            module = type(owner).__module__ if owner is not None else ""
    return module, getattr(func, "__qualname__", getattr(func, "__name__", ""))


def _resolve(targets: Targets, obj: Any, label: str) -> None:
    if isinstance(obj, Forbidden):
        _resolve(targets, obj.target, obj.label or label)
        return
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        owner, name = obj
        _resolve(targets, owner.__dict__[name], label or _label(getattr(owner, name)))
        return
    if isinstance(obj, str):
        targets.packages[obj] = label or f"{obj}'s own version"
        return
    label = label or _label(obj)
    if isinstance(obj, (staticmethod, classmethod)):
        _resolve(targets, obj.__func__, label)
    elif isinstance(obj, property):
        for accessor in (obj.fget, obj.fset, obj.fdel):
            if accessor is not None:
                _resolve(targets, accessor, label)
    elif isinstance(obj, MethodType):
        _resolve(targets, obj.__func__, label)
    elif isinstance(obj, FunctionType):
        while isinstance(getattr(obj, "__wrapped__", None), FunctionType):  # a decorator's
            code = obj.__code__
            targets.wrappers.add((code.co_filename, code.co_name, code.co_firstlineno))
            obj = obj.__wrapped__
        _add_code(targets, obj.__code__, label)
        for twin in _twins(obj):
            _add_code(targets, twin.__code__, label)
    elif isinstance(obj, type):
        targets.classes[obj] = label
        for value in vars(obj).values():
            if isinstance(value, (FunctionType, staticmethod, classmethod, property)):
                _resolve(targets, value, label)
    elif type(obj).__name__ == "_ArrayFunctionDispatcher":  # numpy's public functions
        implementation = obj._implementation
        if isinstance(implementation, FunctionType):
            _add_code(targets, implementation.__code__, label)
        else:  # a C function, whose Python dispatcher bears its name, somewhere in numpy
            targets.package_codes[("numpy", obj.__name__)] = label
            targets.c_functions[_c_key(implementation)] = label
    elif callable(obj):
        targets.c_functions[_c_key(obj)] = label
    else:
        raise TypeError(f"forbid() cannot watch {obj!r}: give a function, class or module name")


def _twins(func: FunctionType) -> list[FunctionType]:
    """The other methods of ``func``'s class that do exactly what it does (``Tensor.add``
    for ``Tensor.__add__``: both are ``ops.add(self, other)``), so that forbidding the
    operator forbids the method too, and the other way round."""
    owner: Any = sys.modules.get(func.__module__)
    for part in func.__qualname__.split(".")[:-1]:
        owner = getattr(owner, part, None)
    if not isinstance(owner, type):
        return []
    code = func.__code__
    same = (code.co_code, code.co_names, code.co_consts, code.co_argcount)
    return [
        value
        for value in vars(owner).values()
        if isinstance(value, FunctionType)
        and value is not func
        and (
            value.__code__.co_code,
            value.__code__.co_names,
            value.__code__.co_consts,
            value.__code__.co_argcount,
        )
        == same
    ]


def forbid(*objects: Any) -> Targets:
    """The forbidden implementations ``objects`` (see the module docstring), resolved once;
    torch is always among them."""
    targets = Targets()
    _resolve(targets, TORCH, "")
    for obj in objects:
        if isinstance(obj, Targets):
            targets = targets + obj
        else:
            _resolve(targets, obj, "")
    return targets


# -- whose code is calling ---------------------------------------------------------------------


def _library_roots() -> tuple[str, ...]:
    import minitorch

    roots = {os.path.dirname(os.path.abspath(minitorch.__file__))}
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            roots.add(os.path.abspath(path))
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        roots.add(os.path.abspath(prefix))
    return tuple(sorted(root.rstrip(os.sep) + os.sep for root in roots))


_ROOTS: tuple[str, ...] | None = None
_LIBRARY: dict[str, bool] = {}


def is_library(filename: str) -> bool:
    """Whether code from ``filename`` belongs to minitorch, Python or an installed package."""
    known = _LIBRARY.get(filename)
    if known is not None:
        return known
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _library_roots()
    found = filename.startswith("<frozen") or (
        os.path.isabs(filename) and os.path.abspath(filename).startswith(_ROOTS)
    )
    _LIBRARY[filename] = found
    return found


#: The most callers :func:`_on_behalf_of_learner` walks up.
_WALK_LIMIT = 64
_SIGNATURES: dict[str, frozenset[tuple[Any, ...]] | None] = {}
_GENUINE: dict[int, tuple[CodeType, bool]] = {}


def _signature(code: CodeType) -> tuple[Any, ...]:
    consts = tuple(
        ("code", c.co_name, c.co_firstlineno) if isinstance(c, CodeType) else repr(c)
        for c in code.co_consts
    )
    return (code.co_name, code.co_firstlineno, code.co_code, code.co_names, consts)


def _compiled_from(filename: str) -> frozenset[tuple[Any, ...]] | None:
    """Signatures of every code object compiling ``filename`` gives (None: unreadable)."""
    if filename in _SIGNATURES:
        return _SIGNATURES[filename]
    found: frozenset[tuple[Any, ...]] | None = None
    try:
        if filename.startswith("<frozen ") and filename.endswith(">"):
            import _imp

            top = _imp.get_frozen_object(filename[len("<frozen ") : -1])
        else:
            with open(filename, "rb") as f:
                top = compile(f.read(), filename, "exec", dont_inherit=True)
        codes, todo = [], [top]
        while todo:
            code = todo.pop()
            codes.append(_signature(code))
            todo += [c for c in code.co_consts if isinstance(c, CodeType)]
        found = frozenset(codes)
    except Exception:
        found = None
    _SIGNATURES[filename] = found
    return found


_IMPORT_ROOTS: tuple[str, ...] | None = None


def _import_roots() -> tuple[str, ...]:
    """Folders modules are imported from (minitorch's parent, site-packages, the
    standard library), longest first."""
    global _IMPORT_ROOTS
    if _IMPORT_ROOTS is None:
        import minitorch

        roots = {os.path.dirname(os.path.dirname(os.path.abspath(minitorch.__file__)))}
        for name in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(name)
            if path:
                roots.add(os.path.abspath(path))
        ordered = sorted((r.rstrip(os.sep) + os.sep for r in roots), key=len, reverse=True)
        _IMPORT_ROOTS = tuple(ordered)
    return _IMPORT_ROOTS


_MODULE_NAMES: dict[str, str | None] = {}


def _module_name(filename: str) -> str | None:
    """The module a library file is imported as ("minitorch.shape"), from its path."""
    if filename not in _MODULE_NAMES:
        _MODULE_NAMES[filename] = _name_from_path(filename)
    return _MODULE_NAMES[filename]


def _name_from_path(filename: str) -> str | None:
    path = os.path.abspath(filename)
    root = next((r for r in _import_roots() if path.startswith(r)), None)
    if root is None or not path.endswith(".py"):
        return None
    parts = path[len(root) : -len(".py")].split(os.sep)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


def _genuine(frame: FrameType) -> bool:
    """Whether the frame runs library code as imported: code that compiling its file
    gives (not code compiled or forged under a library's file name), with its module's
    globals (not the library's code re-bound to the learner's names)."""
    code = frame.f_code
    filename = code.co_filename
    if not is_library(filename):
        return False
    known = _GENUINE.get(id(code))
    if known is None or known[0] is not code:
        signatures = _compiled_from(filename)
        known = (code, signatures is not None and _signature(code) in signatures)
        _GENUINE[id(code)] = known
    if not known[1]:
        return False
    if filename.startswith("<frozen"):
        return True
    name = _module_name(filename)
    module = sys.modules.get(name) if name else None
    return module is None or getattr(module, "__dict__", None) is frame.f_globals


_OWNERS: dict[str, str] = {}


def _owner(filename: str) -> str:
    """The top-level package a library file belongs to ("minitorch", "numpy"; "" for
    Python's own modules)."""
    if filename not in _OWNERS:
        _OWNERS[filename] = _owner_of(filename)
    return _OWNERS[filename]


def _owner_of(filename: str) -> str:
    name = _module_name(filename) if not filename.startswith("<frozen") else None
    if not name:
        return ""
    top = name.partition(".")[0]
    stdlib = sysconfig.get_paths().get("stdlib", "")
    in_stdlib = bool(stdlib) and os.path.abspath(filename).startswith(stdlib + os.sep)
    return "" if in_stdlib and "site-packages" not in filename else top


def _closes_over(frame: FrameType, callee: Any) -> bool:
    """Whether ``frame`` runs a closure handed ``callee`` (a code object or a C function):
    a decorator's wrapper (``no_grad()(f)``, ``autocast()(f)``) only passes the call on."""
    if not frame.f_code.co_freevars:
        return False
    values = frame.f_locals
    for name in frame.f_code.co_freevars:
        value = values.get(name)
        value = getattr(value, "__func__", value)
        if value is callee or getattr(value, "__code__", None) is callee:
            return True
    return False


def _on_behalf_of_learner(
    caller: FrameType | None, package: str, skip: Any = None, callee: Any = None
) -> bool:
    """Whether a call made by ``caller`` (into ``package``) was made for the learner.

    It was when, walking up the callers, the learner's code comes before minitorch's or
    ``package``'s own: Python's modules and other packages in between are only the way
    it went (``unittest.mock``, ``threading``, ``functools``, a thread pool: a learner can
    hand any callable to them), and so is minitorch's closure that was handed ``callee``
    (its decorators' wrappers: ``no_grad()(f)`` calls ``f`` for whoever wrapped it). Code
    that claims a library's file but is not what that file compiles to counts as the
    learner's.
    """
    for _ in range(_WALK_LIMIT):
        if caller is None:
            # the bottom of a thread that only library code runs (a thread pool): it runs
            # what it was handed, and during a probe only the learner's code hands it work
            return threading.current_thread() is not threading.main_thread()
        if (skip is not None and skip(caller.f_code)) or (
            callee is not None and _closes_over(caller, callee)
        ):
            callee = caller.f_code  # (a wrapper of that wrapper passes it on too)
            caller = caller.f_back
            continue
        filename = caller.f_code.co_filename
        if not is_library(filename):
            return True
        owner = _owner(filename)
        if owner and owner in ("minitorch", package):
            return not _genuine(caller)  # only where the walk stops does forging pay
        caller = caller.f_back
    return False


_PACKAGE_DIRS: dict[str, str] = {}


def _package_dir(package: str) -> str:
    """The folder of an installed package, found without importing it ("" if none)."""
    if package not in _PACKAGE_DIRS:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        _PACKAGE_DIRS[package] = os.path.dirname(origin) + os.sep if origin else ""
    return _PACKAGE_DIRS[package]


def _package(name: Any) -> str:
    return name.partition(".")[0] if isinstance(name, str) else ""


# -- the package's source run as the learner's own ----------------------------------------------

#: id of a code object seen by the watch -> (it, its fingerprint when it is a candidate copy)
_COPIES: dict[int, tuple[CodeType, str | None]] = {}


def _source_in_view(code: CodeType) -> bool:
    """Whether ``code`` was compiled from text a reader can see where it says it was written
    (a notebook cell, a file): the line it starts on there defines it. Source fetched at run
    time (``exec(inspect.getsource(...))``, a string built by the code) has no such line."""
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    if code.co_name.startswith("<"):  # a lambda, a comprehension, a module's body
        return 0 <= start < len(lines)
    defines = re.compile(rf"(async\s+def|def|class)\s+{re.escape(code.co_name)}\b")
    # (decorators, a decorator's arguments on lines of their own, come before the def)
    return any(defines.match(line.strip()) for line in lines[max(start, 0) : start + 50])


def _copy_print(code: CodeType) -> str | None:
    """The fingerprint of ``code`` when it may be a recompiled copy of a library's code: the
    learner's, with no source in view (None for the libraries' own and for cells' code)."""
    seen = _COPIES.get(id(code))
    if seen is None or seen[0] is not code:
        candidate = not is_library(code.co_filename) and not _source_in_view(code)
        seen = (code, fingerprint(code) if candidate else None)
        _COPIES[id(code)] = seen
    return seen[1]


def _copy_label(code: CodeType, targets: Targets) -> str:
    printed = _copy_print(code) if targets.copies else None
    label = targets.copies.get(printed, "") if printed else ""
    return f"{label}, its source run as your code" if label else ""


# -- the watch -----------------------------------------------------------------------------------


class _Layer:
    def __init__(self, targets: Targets) -> None:
        self.targets = targets
        self.hits: list[str] = []
        self.cut = False  # (its time limit cut short: see _cut_short)


class _Watch:
    """The profile hook and the stack of active guards.

    The hook does as little as it can per event: a set lookup of the callee's name, and
    the rest only when the name is one a guard watches.
    """

    def __init__(self) -> None:
        self.layers: list[_Layer] = []
        self.names: frozenset[str] = frozenset()
        self.c_names: frozenset[str] = frozenset()
        self.packages: frozenset[str] = frozenset()
        self.copies = False
        self.saved: tuple[Any, Any] = (None, None)
        self.hook = self._make_hook()

    def _refresh(self) -> None:
        targets = [layer.targets for layer in self.layers]
        self.names = frozenset(
            [name for t in targets for _, name in t.codes]
            + [name for t in targets for _, name in t.package_codes]
        )
        self.c_names = frozenset(q.rsplit(".", 1)[-1] for t in targets for _, q in t.c_functions)
        self.packages = frozenset(p for t in targets for p in t.packages)
        self.copies = any(t.copies for t in targets)
        self.hook = self._make_hook()

    def _make_hook(self) -> Any:
        """The profile function, with what it checks in its closure (the fastest lookups)."""
        names, c_names = self.names, self.c_names
        prefixes = tuple(_package_dir(p) for p in self.packages if _package_dir(p))
        modules = tuple(self.packages)
        on_call, on_c_call, on_copy = self._on_call, self._on_c_call, self._on_copy
        copies, seen = self.copies, _COPIES

        def hook(frame: FrameType, event: str, arg: Any) -> None:
            if event == "call":
                code = frame.f_code
                if code.co_name in names or code.co_filename.startswith(prefixes):
                    on_call(frame)
                if copies:
                    known = seen.get(id(code))
                    if known is None or known[0] is not code or known[1]:
                        on_copy(code)
            elif event == "c_call":
                if getattr(arg, "__name__", None) in c_names or (
                    modules and str(getattr(arg, "__module__", None)).startswith(modules)
                ):
                    on_c_call(frame, arg)

        return hook

    def _on_call(self, frame: FrameType) -> None:
        code = frame.f_code
        package = _package(frame.f_globals.get("__name__"))
        # a decorator's wrapper around a forbidden function is skipped
        if not _on_behalf_of_learner(frame.f_back, package, self._is_wrapper, code):
            return
        key = (code.co_filename, code.co_name)
        for layer in self.layers:
            targets = layer.targets
            label = targets.codes.get(key, {}).get(code.co_firstlineno)
            label = label or targets.package_codes.get((package, code.co_name))
            label = label or targets.packages.get(package)
            if label:
                _cut_short(layer)
                layer.hits.append(label)

    def _on_copy(self, code: CodeType) -> None:
        """A call of the learner's code that is a recompiled copy of a forbidden function
        counts whoever calls it (the package's ``Module.__call__`` calling a copied
        ``forward`` runs the package's source as the learner's answer)."""
        for layer in self.layers:
            label = _copy_label(code, layer.targets)
            if label:
                _cut_short(layer)
                layer.hits.append(label)

    def _is_wrapper(self, code: CodeType) -> bool:
        key = (code.co_filename, code.co_name, code.co_firstlineno)
        return any(key in layer.targets.wrappers for layer in self.layers)

    def _on_c_call(self, frame: FrameType, func: Any) -> None:
        key = _c_key(func)
        if not _on_behalf_of_learner(frame, _package(key[0]), callee=func):
            return
        for layer in self.layers:
            label = layer.targets.c_functions.get(key) or layer.targets.packages.get(
                _package(key[0])
            )
            if label:
                _cut_short(layer)
                layer.hits.append(label)

    def push(self, layer: _Layer) -> None:
        if not self.layers:
            self.saved = (sys.getprofile(), threading.getprofile())
        self.layers.append(layer)
        self._refresh()
        sys.setprofile(self.hook)
        threading.setprofile(self.hook)

    def pop(self, layer: _Layer) -> bool:
        """Remove ``layer``; whether the hook was still in place (not switched off)."""
        intact = sys.getprofile() is self.hook
        if layer in self.layers:
            self.layers.remove(layer)
        self._refresh()
        if self.layers:
            sys.setprofile(self.hook)
        else:
            sys.setprofile(self.saved[0])
            threading.setprofile(self.saved[1])
        return intact


_WATCH = _Watch()


def _dormant(frame: FrameType, event: str, arg: Any) -> None:
    """The profile hook of threads started while a notebook loads: the watch's hook while
    a guard is active, nothing otherwise."""
    if _WATCH.layers:
        _WATCH.hook(frame, event, arg)


@contextmanager
def watching_new_threads() -> Iterator[None]:
    """Threads started inside the block (by a notebook as it loads) keep :func:`_dormant`
    as their profile hook, so a probe's guard also sees the calls they make for it."""
    saved = threading.getprofile()
    threading.setprofile(_dormant)
    try:
        yield
    finally:
        threading.setprofile(saved)


def _label_of(obj: Any, targets: Targets) -> str:
    """The label of ``obj`` when it *is* a forbidden implementation, else ""."""
    if isinstance(obj, (staticmethod, classmethod, MethodType)):
        obj = obj.__func__
    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, FunctionType):
        code = obj.__code__
        return targets.codes.get((code.co_filename, code.co_name), {}).get(code.co_firstlineno, "")
    if isinstance(obj, type):
        return next((label for cls, label in targets.classes.items() if issubclass(obj, cls)), "")
    if callable(obj) and type(obj).__name__ in ("builtin_function_or_method", "method_descriptor"):
        return targets.c_functions.get(_c_key(obj), "")
    return ""


def _definitions_in(
    namespace: dict[str, Any] | None, targets: Targets, looked_up: set[str] | None = None
) -> list[str]:
    """Labels of forbidden implementations the notebook's classes are, inherit from, or
    hold as attributes (``class Linear(nn.Module): forward = F.linear``): those are called
    by the package on the learner's behalf, so no call from the learner's code shows them.

    A class the notebook only imported counts when the probe looked its name up (it is then
    the answer: ``Linear = nn.Linear``); imported and left unused, it costs nothing.
    """
    if not namespace:
        return []
    found = []
    home = namespace.get("__name__", "__main__")
    for name, value in list(namespace.items()):
        found += [label for code in _codes_of(value) if (label := _copy_label(code, targets))]
        if not isinstance(value, type):
            continue
        if looked_up is not None and value.__module__ != home and name not in looked_up:
            continue
        label = _label_of(value, targets)
        if label:
            found.append(label)
        elif value.__module__ == home:  # a class the notebook defined (not an imported one)
            attributes = list(vars(value).values())
            if not _codes_of(value):  # a class that defines no function of its own
                attributes += _inherited(value, home)
            found += [label for attr in attributes if (label := _label_of(attr, targets))]
    return found


def _inherited(cls: type, home: str) -> list[Any]:
    """What ``cls`` inherits from classes the notebook did not define: for a class that
    defines no function, such as ``class Block(gpt.Block): pass``, whose inherited forbidden
    method runs when the package calls it (``Module.__call__`` calls ``forward``). A class
    with functions of its own inherits the rest of its base as any subclass does."""
    seen = set(vars(cls))
    found = []
    for base in cls.__mro__[1:]:
        if base is object:
            continue
        for name, value in vars(base).items():
            if name not in seen and base.__module__ != home:
                found.append(value)
            seen.add(name)
    return found


def _codes_of(value: Any) -> list[CodeType]:
    """The code of a function, or of a class's functions (and what decorators wrap)."""
    values = list(vars(value).values()) if isinstance(value, type) else [value]
    codes = []
    for item in values:
        if isinstance(item, (staticmethod, classmethod, MethodType)):
            item = item.__func__
        elif isinstance(item, property):
            item = item.fget
        for _ in range(8):
            if not isinstance(item, FunctionType):
                break
            codes.append(item.__code__)
            item = getattr(item, "__wrapped__", None)
    return codes


@contextmanager
def refusing_ops(label: str, *functions: type) -> Iterator[None]:
    """Raise :class:`Delegated` after the block if one of the ``functions`` (Function
    classes, or subclasses that keep their forward) was applied in it, however the answer
    reached it (``Permute.apply``, ``t.add_``, an ``nn.LogSoftmax`` module): minitorch's
    own code applies ops on everyone's behalf, so the watch of calls does not see them."""
    from minitorch.function import register_apply_hook

    seen = []

    def hook(cls: Any, *_: Any) -> None:
        for f in functions:
            inherited = isinstance(cls, type) and issubclass(cls, f) and cls.forward is f.forward
            if cls is f or inherited:
                seen.append(cls)

    handle = register_apply_hook(hook)
    try:
        yield
    finally:
        handle.remove()
    if seen:
        raise Delegated(message(label))


def message(label: str) -> str:
    """The one line a delegating answer gets."""
    return f"{DELEGATION_PREFIX}{label}: write it yourself"


def is_delegation(text: str) -> bool:
    return isinstance(text, str) and text.startswith(DELEGATION_PREFIX)


@contextmanager
def forbidding(targets: Targets | Iterable[Any], nb: Any = None) -> Iterator[None]:
    """Watch the block: raise :class:`Delegated` at its end if code outside the libraries
    called one of ``targets``, or a class of ``nb`` is (or subclasses) a forbidden class.

    The learner's code cannot catch the error: it is raised here, after the block, and it
    replaces whatever the block raised.
    """
    if not isinstance(targets, Targets):
        targets = forbid(*targets)
    if not targets:
        yield
        return
    namespace = getattr(nb, "_globals", nb if isinstance(nb, dict) else None)
    looked_up = getattr(nb, "_looked_up", None) if not isinstance(nb, dict) else None
    layer = _Layer(targets)
    _WATCH.push(layer)
    try:
        yield
    except BaseException as exc:
        _finish(layer, namespace, looked_up, exc)
        raise
    _finish(layer, namespace, looked_up)


def _finish(
    layer: _Layer, namespace: dict[str, Any] | None, looked_up: Any, raised: Any = None
) -> None:
    intact = _WATCH.pop(layer)
    found = layer.hits + _definitions_in(namespace, layer.targets, looked_up)
    if found:
        raise Delegated(message(found[0])) from None
    # Python drops a profile hook that raises, and at the recursion limit the hook's own
    # call raises: a recursion that never ends is the learner's bug, not a switch-off
    if not intact and not isinstance(raised, RecursionError):
        raise Delegated(
            f"{DELEGATION_PREFIX}sys.setprofile, which switches off the grader's watch for "
            "ready-made implementations: remove it"
        ) from None
