"""Review flags: what in a submission an instructor should look at before trusting its score.

The grader's watch for delegation runs in the learner's own process, so a student who
attacks it (switches the profile hook off, swaps a probe's code, forges a frame of the
result channel) can undo it. What such an attack needs is visible in the notebook's
source, which the grader reads here, in its own process, out of the learner's reach.
:func:`review_cells` reads each code cell's syntax tree and flags:

- code that touches the grading machinery (``minitorch.course.grading`` beyond ``check``
  and ``hint``) or the interpreter's hooks (``sys.setprofile``, ``threading.setprofile``,
  ``sys.settrace``, ``sys.monitoring``) or reads its frames and objects (``sys._getframe``,
  ``gc.get_objects``, ``gc.get_referrers``, ``ctypes``);
- threads started by ``_thread``, forked processes (``os.fork``), greenlets;
- code objects or functions swapped (``f.__code__ = ...``, ``types.CodeType``,
  ``code.replace(co_code=...)``);
- the GPU simulator's internals (``minitorch.cuda.simulator``, a global array's backing
  ``.target``);
- values that compute when the grader reads them: classes with ``__array__``,
  ``__index__``, ``__int__`` and the like, or subclasses of ``int``, ``float``, ``tuple``,
  ``list``, ``str`` or ``numpy.ndarray``;
- writes to raw file descriptors (``os.write``, ``os.fdopen``, ``socket.socket(fileno=)``),
  the result channel's way out;
- code run from text that is not in the notebook (``exec``, ``eval`` or ``compile`` of
  anything but a literal) and the package's source read at run time
  (``inspect.getsource``): the package's code run as the learner's own;
- a class of the notebook that subclasses a package class and adds nothing to it, and an
  exercise's name bound to the package's own (``Block = gpt.Block``): the package's
  methods then run as the answer, called by the framework rather than the learner;
- a subclass of the package's ``Tensor``: a value that can do its work when the grader
  reads it, after the watch's window has closed;
- an exercise's answer that is a near-copy of the package's own source of that piece, at
  any depth (inside ``if True:``, a function, a class body), and a block of code that is
  the package's module source pasted.

A flag does not change the score; the instructor decides. Every solution notebook and
every correct alternative the tests hold carries none (tests/grading/test_review.py).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from minitorch.course.grading.notebook import without_magics
from minitorch.course.grading.plain import clean_text
from minitorch.course.manifest import Chapter

#: The share of an answer's 10-token runs found in the package's source that makes it a
#: near-copy (solutions reach 0.84 at most; a pasted piece is 1.0).
NEAR_COPY = 0.9
#: Answers shorter than this many 10-token runs are too short to call copies.
NEAR_COPY_MIN_RUNS = 60
#: The most flags kept for one notebook.
MAX_FLAGS = 50


@dataclass(frozen=True)
class Flag:
    """One thing an instructor should look at: which exercise (None: the notebook), what
    was seen, and where (notebook cell, line in the cell)."""

    exercise: str | None
    seen: str
    cell: int
    line: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"cell {self.cell}, line {self.line}"
        about = f"exercise {self.exercise}: " if self.exercise else ""
        return f"{about}{self.seen} ({where})"


# -- what is flagged ---------------------------------------------------------------------------

#: Dotted names whose use is flagged, by what they are.
_FLAGGED_NAMES = {
    "sys.setprofile": "sets the interpreter's profile hook (the grader's watch)",
    "sys.settrace": "sets the interpreter's trace hook",
    "threading.setprofile": "sets the threads' profile hook (the grader's watch)",
    "threading.settrace": "sets the threads' trace hook",
    "threading.setprofile_all_threads": "sets the threads' profile hook (the grader's watch)",
    "threading.settrace_all_threads": "sets the threads' trace hook",
    "sys.monitoring": "uses sys.monitoring (the interpreter's hooks)",
    "sys._getframe": "reads the interpreter's frames (sys._getframe)",
    "sys._current_frames": "reads the interpreter's frames (sys._current_frames)",
    "gc.get_objects": "searches the process's objects (gc.get_objects)",
    "gc.get_referrers": "searches the process's objects (gc.get_referrers)",
    "gc.get_referents": "searches the process's objects (gc.get_referents)",
    "os.fork": "forks the process (os.fork)",
    "os.forkpty": "forks the process (os.forkpty)",
    "os.register_at_fork": "runs code in forked processes (os.register_at_fork)",
    "os.write": "writes to a raw file descriptor (os.write)",
    "os.fdopen": "opens a raw file descriptor (os.fdopen)",
    "os.dup2": "rewires a file descriptor (os.dup2)",
    "socket.fromfd": "opens a socket on a raw file descriptor",
    "types.CodeType": "builds a code object (types.CodeType)",
    "types.FunctionType": "builds a function from a code object (types.FunctionType)",
    "types.MethodType": "binds a function to an object by hand (types.MethodType)",
    "inspect.getsource": "reads source code at run time (inspect.getsource)",
    "inspect.getsourcelines": "reads source code at run time (inspect.getsourcelines)",
    "inspect.findsource": "reads source code at run time (inspect.findsource)",
    "linecache": "reads or writes the interpreter's source cache (linecache)",
    "importlib.util.spec_from_file_location": "loads a module from a file by hand (importlib)",
    "runpy": "runs a module's code by hand (runpy)",
    "minitorch.cuda.simulator": "reaches into the GPU simulator's internals",
    "minitorch.cuda.jit.simulator": "reaches into the GPU simulator's internals",
    "minitorch.cuda.jit._state": "reaches into the GPU simulator's internals",
}
#: Modules whose import is flagged.
_FLAGGED_MODULES = {
    "_thread": "starts threads with _thread (unseen by the grader's watch)",
    "greenlet": "uses greenlets (unseen by the grader's watch)",
    "ctypes": "uses ctypes (reaches the interpreter's memory)",
    "minitorch.cuda.simulator": "reaches into the GPU simulator's internals",
}
#: What a notebook may import from the grading package.
_GRADING_ALLOWED = {"check", "hint"}
_GRADING = "minitorch.course.grading"
#: Function attributes whose assignment swaps code.
_SWAPPED = {"__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__"}
#: Special methods that make a value compute when it is read.
_LAZY_METHODS = {
    "__array__",
    "__array_interface__",
    "__array_ufunc__",
    "__array_function__",
    "__index__",
    "__int__",
    "__float__",
    "__complex__",
}
_BUILTIN_BASES = {"int", "float", "complex", "tuple", "list", "dict", "str", "bytes", "ndarray"}
#: Builtins that run code given as text.
_RUNS_TEXT = {"exec", "eval", "compile"}
#: The package's classes whose subclasses can compute when the grader reads them.
_LAZY_PACKAGE_BASES = {"minitorch.Tensor", "minitorch.tensor.Tensor"}


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class _CellReader(ast.NodeVisitor):
    """The flags of one cell: names resolved through the cell's (and earlier cells') imports."""

    def __init__(
        self, aliases: dict[str, str], chapter_id: str | None, names: frozenset[str] = frozenset()
    ) -> None:
        self.aliases = aliases  # local name -> what it was imported as ("np" -> "numpy")
        self.chapter_id = chapter_id
        self.names = names  # the names the chapter's exercises define ("Block")
        self.found: list[tuple[int, str]] = []

    def flag(self, node: ast.AST, seen: str) -> None:
        self.found.append((getattr(node, "lineno", 1), seen))

    def resolve(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    # imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[(alias.asname or alias.name).split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._module(node, alias.name, None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
            self._module(node, module, alias.name)

    def _bound(self, node: ast.AST, name: str, full: str) -> None:
        self.flag(node, f"binds {name}, an exercise's name, to the package's own {full}")

    def _module(self, node: ast.AST, module: str, name: str | None) -> None:
        full = f"{module}.{name}" if name else module
        for flagged, seen in _FLAGGED_MODULES.items():
            if module == flagged or module.startswith(flagged + ".") or full == flagged:
                self.flag(node, seen)
                return
        if full in _FLAGGED_NAMES:
            self.flag(node, _FLAGGED_NAMES[full])
        elif module == _GRADING and name in _GRADING_ALLOWED:
            return
        elif full == _GRADING or full.startswith(_GRADING + ".") or module == "minitorch.course":
            if module == "minitorch.course" and name != "grading":
                return
            self.flag(node, f"touches the grading machinery ({full})")

    # names and attributes
    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node)
        if dotted is not None and self._name(node, self.resolve(dotted)):
            return
        if node.attr == "target" and self.chapter_id == "07":
            self.flag(node, "reads a global array's backing array (.target)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        full = self.aliases.get(node.id)
        if full is not None and full != node.id:
            self._name(node, full)

    def _name(self, node: ast.AST, full: str) -> bool:
        for flagged, seen in _FLAGGED_NAMES.items():
            if full == flagged or full.startswith(flagged + "."):
                self.flag(node, seen)
                return True
        if full.startswith(_GRADING + ".") and full.split(".")[3] not in _GRADING_ALLOWED:
            self.flag(node, f"touches the grading machinery ({full})")
            return True
        return False

    # code swapped
    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target)
            value = _dotted(node.value)
            full = self.resolve(value) if value else ""
            if isinstance(target, ast.Name) and target.id in self.names:
                if full.startswith("minitorch.") and not full.startswith(_GRADING):
                    self._bound(node, target.id, full)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node.target)
        self.generic_visit(node)

    def _assigned(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute) and target.attr in _SWAPPED:
            self.flag(target, f"swaps a function's {target.attr}")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in _SWAPPED:
                self.flag(node, f"swaps a function's {name.value}")
        if isinstance(func, ast.Attribute) and func.attr == "replace":
            if any(k.arg and k.arg.startswith("co_") for k in node.keywords):
                self.flag(node, "rewrites a code object (code.replace)")
        if _dotted(func) is not None and self.resolve(_dotted(func)) == "socket.socket":
            if any(k.arg == "fileno" for k in node.keywords):
                self.flag(node, "opens a socket on a raw file descriptor")
        called = self.resolve(_dotted(func) or "")
        if called in _RUNS_TEXT or called in {f"builtins.{name}" for name in _RUNS_TEXT}:
            if not (node.args and isinstance(node.args[0], ast.Constant)):
                self.flag(
                    node,
                    f"runs code from text not in the notebook ({called.split('.')[-1]}): "
                    "the package's source could run as the answer",
                )
        self.generic_visit(node)

    # values that compute when read, the package's classes run as the answer
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            dotted = _dotted(base)
            name = dotted.split(".")[-1] if dotted else None
            full = self.resolve(dotted) if dotted else ""
            if name in _BUILTIN_BASES:
                self.flag(
                    node,
                    f"defines {node.name}, a subclass of {name} (a value that can "
                    "report another when the grader reads it)",
                )
            elif full in _LAZY_PACKAGE_BASES:
                self.flag(
                    node,
                    f"defines {node.name}, a subclass of minitorch's Tensor (a value that "
                    "can do its work when the grader reads it)",
                )
            elif full.startswith("minitorch.") and _adds_nothing(node):
                self.flag(
                    node,
                    f"defines {node.name}, a subclass of the package's {full} that adds "
                    "nothing (the package's code runs as the answer)",
                )
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if item.name in _LAZY_METHODS:
                    self.flag(
                        item,
                        f"defines {node.name}.{item.name} (a value that computes "
                        "when the grader reads it)",
                    )
        self.generic_visit(node)


def _adds_nothing(node: ast.ClassDef) -> bool:
    """Whether a class body holds nothing but ``pass``, ``...`` and a docstring."""
    return all(
        isinstance(item, ast.Pass)
        or (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))
        for item in node.body
    )


# -- near-copies of the package's source ------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*|\S")


def _runs(source: str, n: int = 10) -> set[tuple[str, ...]]:
    """The source's runs of ``n`` tokens, comments and docstrings left out."""
    text = re.sub(r'("""|\'\'\')(.*?)\1', "", source, flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    tokens = _TOKEN.findall(text)
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@cache
def _piece_runs(piece: str) -> frozenset[tuple[str, ...]]:
    module, _, path = piece.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in path.split("."):
            obj = getattr(obj, part)
        return frozenset(_runs(textwrap.dedent(inspect.getsource(obj))))
    except Exception:  # a piece with no source to compare: nothing is a copy of it
        return frozenset()


@cache
def _module_runs(piece: str) -> frozenset[tuple[str, ...]]:
    """The runs of the whole module a piece lives in."""
    try:
        module = importlib.import_module(piece.partition(":")[0])
        return frozenset(_runs(inspect.getsource(module)))
    except Exception:
        return frozenset()


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _share(runs: set[tuple[str, ...]], reference: frozenset[tuple[str, ...]]) -> float:
    return len(runs & reference) / len(runs) if reference and runs else 0.0


def _near_copies(cell: int, tree: ast.Module, source: str, chapter: Chapter | None) -> list[Flag]:
    """Definitions, at any depth, that are near-copies of an exercise's piece, and blocks
    (a cell, an ``if True:``, a function's or class's body) that are its module pasted."""
    if chapter is None:
        return []
    flags = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            continue
        text = ast.get_source_segment(source, node) if node is not tree else source
        runs = _runs(text or "")
        if len(runs) < NEAR_COPY_MIN_RUNS:
            continue
        name = getattr(node, "name", None)
        # (a pasted module is definitions: a block of statements alone can match a kernel's)
        defs = sum(isinstance(item, _DEFINITIONS) for item in body) >= 2
        pasted: set[str] = set()
        for exercise in chapter.exercises:
            for piece in exercise.pieces:
                share = _share(runs, _piece_runs(piece)) if name else 0.0
                if share >= NEAR_COPY:
                    seen = (
                        f"`{name}` is a near-copy of the package's {piece.replace(':', '.')} "
                        f"({share:.0%} of its code is the package's)"
                    )
                    flags.append(Flag(exercise.id, seen, cell, getattr(node, "lineno", 1)))
                module = piece.partition(":")[0]
                share = _share(runs, _module_runs(piece)) if module not in pasted and defs else 0.0
                if share >= NEAR_COPY:
                    pasted.add(module)
                    seen = (
                        f"a block of code that is the package's {module} pasted "
                        f"({share:.0%} of it is the package's source)"
                    )
                    flags.append(Flag(exercise.id, seen, cell, getattr(node, "lineno", 1)))
    return flags


# -- a notebook --------------------------------------------------------------------------------


def _exercise_names(chapter: Chapter | None) -> dict[str, str]:
    """The name a learner defines for each exercise's piece -> the exercise id."""
    names: dict[str, str] = {}
    for exercise in chapter.exercises if chapter else ():
        for piece in exercise.pieces:
            path = piece.partition(":")[2].split(".")
            names.setdefault(path[-1], exercise.id)
            names.setdefault(path[0], exercise.id)
    return names


def review_cells(cells: Sequence[tuple[int, str]], chapter: Chapter | None = None) -> list[Flag]:
    """The review flags of a notebook's code cells (``(cell number, source)``)."""
    aliases: dict[str, str] = {}
    owners = _exercise_names(chapter)
    top_names = frozenset(
        piece.partition(":")[2].split(".")[0]
        for exercise in (chapter.exercises if chapter else ())
        for piece in exercise.pieces
    )
    chapter_id = chapter.id if chapter else None
    flags: list[Flag] = []
    for number, source in cells:
        try:
            text = without_magics(source)
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # the loader reports it
        reader = _CellReader(aliases, chapter_id, top_names)
        try:
            reader.visit(tree)
        except RecursionError:
            flags.append(Flag(None, "code nested too deeply to read", number, 1))
            continue
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        exercise = next((owners[name] for name in defined if name in owners), None)
        for line, seen in reader.found:
            flags.append(Flag(exercise, clean_text(seen, 200), number, line))
        flags += _near_copies(number, tree, text, chapter)
    return _unique(flags)[:MAX_FLAGS]


def _unique(flags: Iterable[Flag]) -> list[Flag]:
    seen, out = set(), []
    for flag in flags:
        key = (flag.exercise, flag.seen, flag.cell)
        if key not in seen:
            seen.add(key)
            out.append(flag)
    return out
