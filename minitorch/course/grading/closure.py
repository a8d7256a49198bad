"""What of a test module the learner's process gets: its probes and exactly what they use.

A test module holds probes (which run beside the learner's code) and judges (which hold
the expected values and must never leave the grader). The sandbox gets code built from
the module by a closure analysis, not a filter: starting from the ``@probe`` functions,
it follows the *global* names each piece of code reads (a function's locals, parameters
and comprehension variables are not globals: :mod:`symtable` says which are) to the
top-level statements that bind them, and keeps those and nothing else. A judge, a
constant only judges read, a bare statement at the top level, the docstring: none of
them is in the code the sandbox runs.

A statement such as ``if``/``try``/``with`` that binds a needed name is pruned to the
parts that bind needed names (``try: import scipy`` / ``except ImportError: scipy =
None`` keeps both; an ``if`` holding a helper and a judge keeps only the helper).

Helper modules next to a test module (``from cases import make_cases``) are followed the
same way: a probe that uses one ships that module's closure for the names it uses; a
helper only judges import is never sent (nor imported in the sandbox).
"""

from __future__ import annotations

import ast
import builtins
import copy
import symtable
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: A name no statement binds: a star import may provide it.
_STAR = "*"


def decorator_names(node: ast.AST) -> set[str]:
    """The last part of each decorator's name (``probe`` for ``@probes.probe(...)``)."""
    names = set()
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def is_probe_def(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        "probe" in decorator_names(node)
    )


# -- the global names a statement reads --------------------------------------------------------


def _scope_globals(table: symtable.SymbolTable) -> set[str]:
    """Global names read or written in a nested scope and the scopes inside it."""
    names = set()
    for symbol in table.get_symbols():
        if symbol.is_global() or (
            table.get_type() == "class" and symbol.is_referenced() and not symbol.is_local()
        ):
            names.add(symbol.get_name())
    for child in table.get_children():
        names |= _scope_globals(child)
    return names


class _ModuleScopeNames(ast.NodeVisitor):
    """Names read at module scope: not inside a function's, lambda's, class's or
    comprehension's own scope (their decorators, defaults, bases and first iterables
    are read at module scope)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        self.names.add(node.id)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for dec in getattr(node, "decorator_list", []):
            self.visit(dec)
        args = node.args
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None and arg.annotation is not None:
                    self.visit(arg.annotation)
            if node.returns is not None:
                self.visit(node.returns)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(part)

    def _comprehension(self, node: ast.AST) -> None:
        self.visit(node.generators[0].iter)  # type: ignore[attr-defined]

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _alias_binds(alias: ast.alias) -> str:
    """The name an import binds: ``np`` for ``numpy as np``, ``os`` for ``os.path``."""
    return _STAR if alias.name == "*" else (alias.asname or alias.name).split(".")[0]


def _bound_at_module_scope(node: ast.AST) -> set[str]:
    """Names a top-level statement binds in the module (not inside nested scopes)."""
    names: set[str] = set()

    def walk(n: ast.AST) -> None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            return
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update(_alias_binds(alias) for alias in n.names)
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        for child in ast.iter_child_nodes(n):
            walk(child)

    walk(node)
    return names


@dataclass
class _Statement:
    node: ast.stmt
    binds: set[str]
    reads: set[str] = field(default_factory=set)


def _statements(tree: ast.Module, table: symtable.SymbolTable) -> list[_Statement]:
    children = table.get_children()
    found = []
    for node in tree.body:
        visitor = _ModuleScopeNames()
        visitor.visit(node)
        reads = set(visitor.names)
        end = getattr(node, "end_lineno", node.lineno)
        for child in children:
            if node.lineno <= child.get_lineno() <= end:
                reads |= _scope_globals(child)
        found.append(_Statement(node, _bound_at_module_scope(node), reads))
    return found


# -- pruning a compound statement to what binds needed names -----------------------------------


def _prune(node: ast.stmt, needed: set[str]) -> ast.stmt | None:
    """``node`` keeping only the parts that bind a name in ``needed``; None if none does."""
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        return node  # compiler directives: always kept
    if not (_bound_at_module_scope(node) & needed):
        return None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        pruned_import = copy.copy(node)
        pruned_import.names = [a for a in node.names if _alias_binds(a) in needed | {_STAR}]
        return pruned_import
    blocks = [
        f for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)
    ]
    if not blocks or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node  # a simple statement or a definition that binds a needed name
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return node  # a loop's iterations cannot be pruned apart: kept whole
    pruned = copy.copy(node)
    for name in blocks:
        kept = [p for p in (_prune(s, needed) for s in getattr(node, name)) if p is not None]
        if name == "body" or kept:
            setattr(pruned, name, kept or [ast.Pass()])
        else:
            setattr(pruned, name, [])
    if isinstance(node, ast.Try):
        handlers = []
        for handler in node.handlers:
            h = copy.copy(handler)
            kept = [p for p in (_prune(s, needed) for s in handler.body) if p is not None]
            h.body = kept or [ast.Pass()]
            handlers.append(h)
        pruned.handlers = handlers  # type: ignore[attr-defined]
    return pruned


def _reads_of(node: ast.stmt) -> set[str]:
    """Global names a (pruned) statement reads."""
    module = ast.Module(body=[node], type_ignores=[])
    ast.fix_missing_locations(module)
    text = ast.unparse(module)
    table = symtable.symtable(text, "<pruned>", "exec")
    return _statements(ast.parse(text), table)[0].reads


# -- the closure -------------------------------------------------------------------------------


@dataclass
class Shipped:
    """The code the sandbox gets of one module, and the helper modules it imports."""

    module: ast.Module
    #: helper module name -> names of it that the shipped code uses ({"*"}: all)
    helpers: dict[str, set[str]]


def _helper_imports(node: ast.stmt, helpers: set[str], kept: list[ast.stmt]) -> dict[str, set[str]]:
    """For an import statement, the helper modules it imports and which of their names
    the shipped code uses (``{"*"}``: any of them)."""
    used: dict[str, set[str]] = {}
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module.split(".")[0] in helpers:
            used.setdefault(node.module, set()).update(a.name for a in node.names)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in helpers:
                used.setdefault(alias.name, set()).update(_attributes_of(_alias_binds(alias), kept))
    return used


def _attributes_of(name: str, nodes: Iterable[ast.AST]) -> set[str]:
    """The attributes read off the module ``name`` in ``nodes`` (``cases.make`` ->
    ``make``); ``{"*"}`` when the module itself is used another way (passed, stored)."""
    found: set[str] = set()
    for node in nodes:
        bases = set()  # the Name nodes that are read only for an attribute
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                if n.value.id == name:
                    found.add(n.attr)
                    bases.add(id(n.value))
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                if id(n) not in bases:
                    found.add(_STAR)
    return found


def closure(
    source: str,
    filename: str,
    roots: set[str] | None = None,
    helpers: Iterable[str] = (),
) -> Shipped:
    """The statements of ``source`` that ``roots`` (default: its probes) need.

    ``helpers`` names the modules beside it (importable helpers): imports of them are
    followed and reported in :attr:`Shipped.helpers`.
    """
    tree = ast.parse(source, filename)
    table = symtable.symtable(source, filename, "exec")
    statements = _statements(tree, table)
    helper_names = set(helpers)
    if roots is None:
        keep = {i for i, s in enumerate(statements) if is_probe_def(s.node)}
        needed = set().union(*(statements[i].reads for i in keep)) if keep else set()
    else:
        keep, needed = set(), set(roots)
    if _STAR in needed:  # a star import of the whole helper: every top-level name
        needed |= set().union(*(s.binds for s in statements)) - {_STAR}
    pruned: dict[int, ast.stmt] = {i: statements[i].node for i in keep}
    bound = set().union(*(s.binds for s in statements))
    changed = True
    while changed:
        changed = False
        # a name no statement binds, and no builtin, may come from a star import
        unbound = needed - bound - set(dir(builtins))
        wanted = needed | ({_STAR} if unbound else set())
        for i, s in enumerate(statements):
            if "exercise" in decorator_names(s.node):
                continue  # a judge never ships, whatever it is called
            node = _prune(s.node, wanted)
            if node is None:
                continue
            if i in pruned and ast.dump(pruned[i]) == ast.dump(node):
                continue
            pruned[i] = node
            needed |= s.reads if node is s.node else _reads_of(node)
            changed = True
    kept = [pruned[i] for i in sorted(pruned)]
    used: dict[str, set[str]] = {}
    for node in kept:
        for name, names in _helper_imports(node, helper_names, kept).items():
            used.setdefault(name, set()).update(names)
    module = ast.Module(body=kept, type_ignores=[])
    ast.fix_missing_locations(module)
    return Shipped(module, used)


# -- a test module and its helpers -------------------------------------------------------------


def helper_modules(folder: Path) -> dict[str, Path]:
    """Importable modules beside a test module: ``name.py`` and packages (not tests)."""
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".py" and path.is_file() and not path.name.startswith("test_"):
            found[path.stem] = path
        elif path.is_dir() and (path / "__init__.py").is_file():
            found[path.name] = path / "__init__.py"
    return found


def shipped_code(path: Path, filename: str) -> list[tuple[str, ast.Module, str]]:
    """What the sandbox runs for the test module at ``path``: ``(module name, code,
    filename)`` for each helper module its probes use (first) and then the module's own
    closure (named ``""``; the caller names it)."""
    helpers = helper_modules(path.parent)
    own = closure(path.read_text(encoding="utf-8"), filename, helpers=helpers)
    wanted: dict[str, set[str]] = {}
    built: dict[str, ast.Module] = {}  # each helper's closure for all its wanted names
    pending = dict(own.helpers)
    order: list[str] = []
    while pending:
        name, names = pending.popitem()
        if not (names - wanted.get(name, set())) and name in wanted:
            continue
        wanted.setdefault(name, set()).update(names)
        if name not in order:
            order.append(name)
        file = helpers.get(name.split(".")[0])
        if file is None or "." in name:
            continue  # a submodule of a helper package: shipped with the package
        inner = closure(file.read_text(encoding="utf-8"), str(file), wanted[name], helpers)
        built[name] = inner.module
        for other, more in inner.helpers.items():
            if other != name and not more <= wanted.get(other, set()):
                pending[other] = pending.get(other, set()) | more
    shipped = [
        (name, built[name], f"<test helper {name}>")
        for name in reversed(order)  # a helper's own helpers first
        if name in built
    ]
    shipped.append(("", own.module, filename))
    return shipped
