"""``fx.Graph``: an ordered list of ``Node``s, ways to edit it, and the Python it prints as.

The nodes form a doubly linked list behind a sentinel, as in torch.fx, so a loop over
``graph.nodes`` may insert after or erase the node it is at. New nodes go where the
insertion point is (``inserting_before``/``inserting_after``; the end by default), named
after their target (``linear``, ``add_1``, ``sum_1``: a name never shadows a builtin).
``python_code()`` writes the graph as the ``forward`` a ``GraphModule`` runs.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import math
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

from .node import Node, _get_path, map_arg, qualified_name

__all__ = ["Graph", "PythonCode", "map_arg"]

_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")
_MISSING = object()


def _illegal_names() -> dict[str, Any]:
    """Names a node may not take (keywords, builtins, the code's globals), each with the
    one object allowed to have it."""
    import minitorch

    from ..dtypes import display_name

    names: dict[str, Any] = {k: object() for k in keyword.kwlist}
    names.update(vars(builtins))
    names.update(inf=math.inf, nan=math.nan, NoneType=type(None), device=minitorch.device)
    names.update({"torch": minitorch, display_name: minitorch})
    return names


class _Namespace:
    """Unique Python names for nodes: ``add``, ``add_1``, ...; never a builtin's name."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._base_count: dict[str, int] = {}
        self._illegal = _illegal_names()

    def create_name(self, candidate: str, obj: Any = None) -> str:
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used:
            num = self._base_count.get(base, 0)
            if self._illegal.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        return candidate


def _target_to_str(target: Any) -> str:
    name = target.__name__ if callable(target) else str(target)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    return _snake_case_sub.sub(r"_\1", name).lower()


class _NodeList:
    """``graph.nodes``: iterates the linked list (safe against erasing the current node)."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self.graph, self.reverse = graph, reverse

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self.graph._root
        cur = root._prev if self.reverse else root._next
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = cur._prev if self.reverse else cur._next

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self.graph, not self.reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class Graph:
    """A program as a list of Nodes: inputs (``placeholder``), ops and one ``output``."""

    def __init__(self, owning_module: Any = None, tracer_cls: Any = None) -> None:
        self._root = Node(self, "", "placeholder", "", (), {})
        self._insert: Callable[[Node], None] = self._root.prepend
        self._len = 0
        self._namespace = _Namespace()
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    # --- creating nodes ---------------------------------------------------------------------
    def create_node(
        self,
        op: str,
        target: Any,
        args: tuple | None = None,
        kwargs: dict | None = None,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """A new node at the insertion point, named ``name`` (or after its target)."""
        args, kwargs = tuple(args or ()), dict(kwargs or {})
        for n in map_arg_nodes((args, kwargs)):
            if n.graph is not self:
                raise RuntimeError(
                    f"fx.Graph.create_node: argument {n.name!r} of the new {op} node belongs "
                    "to another graph (copy it in with node_copy or graph_copy)"
                )
        candidate = name if name is not None else _target_to_str(target)
        node = Node(
            self, self._namespace.create_name(candidate, None), op, target, args, kwargs, type_expr
        )
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr: Any = None, default_value: Any = _MISSING) -> Node:
        args = () if default_value is _MISSING else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(
        self,
        module_name: str,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any = None,
    ) -> Node:  # noqa: E501
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(
        self,
        method_name: str,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any = None,
    ) -> Node:  # noqa: E501
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(
        self,
        the_function: Callable,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any = None,
    ) -> Node:  # noqa: E501
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) here, its Node arguments mapped by
        ``arg_transform``."""
        args, kwargs = map_arg(node.args, arg_transform), map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(
        self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False
    ) -> Any:
        """Copy ``g``'s nodes (but its output) here; ``val_map`` maps old nodes to new ones
        (filled in as it goes). Returns what ``g``'s output returns, in the new nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], lambda n: val_map[n])
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go just before ``n`` (before every node when ``n`` is None)."""
        return _InsertPoint(self, (n or self._root._next).prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go just after ``n`` (at the end when ``n`` is None). As in torch.fx,
        each goes right after ``n``: insert one node per ``with``, or chain the anchors."""
        return _InsertPoint(self, n.append if n is not None else self._root.prepend)

    def __deepcopy__(self, memo: dict) -> Graph:
        """A copy with new Nodes (the linked list copied node by node, not recursively)."""
        new = Graph(tracer_cls=self._tracer_cls)
        memo[id(self)] = new
        out = new.graph_copy(self, {}, return_output_node=True)
        if out is not None:
            value, node = out
            new.output(value, node.type)
        return new

    # --- removing ------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nothing reads any more."""
        if to_erase.users:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users "
                f"in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self or to_erase._erased:
            raise RuntimeError(f"fx.Graph.erase_node: node {to_erase} is not in this graph")
        to_erase._remove_from_list()
        to_erase._erased = True
        to_erase.args, to_erase.kwargs = (), {}
        self._len -= 1

    def eliminate_dead_code(self) -> bool:
        """Erase every node whose value nothing reads and that has no side effect; True if
        any was erased."""
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    # --- reading -----------------------------------------------------------------------------
    def find_nodes(self, *, op: str, target: Any = None, sort: bool = True) -> list[Node]:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def lint(self) -> None:
        """Check the graph is well formed: each node's arguments defined before it and in this
        graph, unique names, known ops, targets that exist in the owning module."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but "
                        "was used as an argument! If you are copying nodes from another graph, "
                        "make sure to use ``arg_transform`` on node_copy() to remap values"
                    )
                if arg not in seen:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                        "Please check that Nodes in the graph are topologically ordered"
                    )
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
            module = self.owning_module
            if module is not None and node.op in ("get_attr", "call_module"):
                try:
                    _get_path(module, node.target)
                except AttributeError:
                    raise RuntimeError(
                        f"Node {node} target {node.target} references nonexistent attribute "
                        f"of {type(module).__name__}"
                    ) from None

    def __str__(self) -> str:
        return "graph():" + "".join(f"\n    {n.format_node()}" for n in self.nodes)

    def print_tabular(self) -> None:
        """A table of the nodes: opcode, name, target, args, kwargs."""
        rows = [[n.op, n.name, _tabular_target(n), str(n.args), str(n.kwargs)] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(5)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [headers, ["-" * w for w in widths], *rows]
        ]  # noqa: E501
        print("\n".join(lines))

    # --- code ------------------------------------------------------------------------------
    def python_code(self, root_module: str = "self") -> PythonCode:
        return _codegen(self, root_module)


class _InsertPoint:
    """Where new nodes go, from now until the ``with`` block ends (as torch.fx's)."""

    def __init__(self, graph: Graph, insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.saved, graph._insert = graph._insert, insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.graph._insert = self.saved


class PythonCode:
    """``python_code()``'s result: the source of ``forward`` and the globals it needs."""

    def __init__(self, src: str, globals: dict[str, Any]) -> None:  # noqa: A002
        self.src, self.globals = src, globals


def map_arg_nodes(a: Any) -> list[Node]:
    found: list[Node] = []
    map_arg(a, found.append)
    return found


def _tabular_target(n: Node) -> str:
    return qualified_name(n.target) if n.op == "call_function" else str(n.target)


_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "matmul": "@", "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|",
    "xor": "^", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
}  # fmt: skip
_UNARY = {"neg": "-", "pos": "+", "invert": "~"}


class _Globals:
    """The names generated code uses for functions, and the objects behind them."""

    def __init__(self) -> None:
        import minitorch

        from ..dtypes import display_name

        self.values: dict[str, Any] = {
            "torch": minitorch, display_name: minitorch, "operator": operator, "math": math,
            "builtins": builtins, "inf": math.inf, "nan": math.nan,
            "device": minitorch.device, "NoneType": type(None),
        }  # fmt: skip
        self.wrapped: list[str] = []  # globals of wrapped functions, re-wrapped by the code

    def name_of(self, fn: Any, wrapped: bool = False) -> str:
        """``torch.relu``, ``operator.add``, or a global made for a user's function (and
        for a wrapped one: ``math_sqrt``, ``__main___helper``)."""
        qualified = qualified_name(fn)
        head = qualified.split(".", 1)[0]
        if not wrapped and head in self.values and _resolve(self.values, qualified) is fn:
            return qualified
        name = _illegal_char_regex.sub("_", qualified)
        while self.values.get(name, fn) is not fn:
            name += "_"
        self.values[name] = fn
        return name


def _resolve(values: dict[str, Any], dotted: str) -> Any:
    head, *rest = dotted.split(".")
    obj = values[head]
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def _code_arg(a: Any, g: _Globals) -> str:
    if isinstance(a, Node):
        return a.name
    if isinstance(a, tuple):
        inner = ", ".join(_code_arg(x, g) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_code_arg(x, g) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_code_arg(v, g)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return f"slice({_code_arg(a.start, g)}, {_code_arg(a.stop, g)}, {_code_arg(a.step, g)})"
    if inspect.isfunction(a) or inspect.isbuiltin(a) or isinstance(a, type):
        return g.name_of(a)
    return repr(a)


def _call_args(args: tuple, kwargs: dict, g: _Globals) -> str:
    parts = [_code_arg(a, g) for a in args] + [
        f"{k} = {_code_arg(v, g)}" for k, v in kwargs.items()
    ]
    return ", ".join(parts)


def _attr_path(root: str, path: str) -> str:
    """``self.layer1.conv`` (``getattr(self.layer1, "0")`` where a part is not a name)."""
    out = root
    for part in path.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


def _expr(node: Node, root: str, g: _Globals) -> str:
    args, kwargs = node.args, node.kwargs
    if node.op == "get_attr":
        return _attr_path(root, node.target)
    if node.op == "call_module":
        return f"{_attr_path(root, node.target)}({_call_args(args, kwargs, g)})"
    if node.op == "call_method":
        return f"{_code_arg(args[0], g)}.{node.target}({_call_args(args[1:], kwargs, g)})"
    fn = node.target
    name = getattr(fn, "__name__", "")
    if getattr(operator, name, None) is fn and not kwargs:
        if name in _BINARY and len(args) == 2:
            return f"{_code_arg(args[0], g)} {_BINARY[name]} {_code_arg(args[1], g)}"
        if name in _UNARY and len(args) == 1:
            return f"{_UNARY[name]}{_code_arg(args[0], g)}"
        if name == "getitem" and len(args) == 2:
            return f"{_code_arg(args[0], g)}[{_code_arg(args[1], g)}]"
    if fn is builtins.getattr and len(args) == 2 and isinstance(args[1], str) and not kwargs:
        return f"{_code_arg(args[0], g)}.{args[1]}"
    name = g.name_of(fn, wrapped=node.meta.get("is_wrapped", False))
    if node.meta.get("is_wrapped", False) and name not in g.wrapped:
        g.wrapped.append(name)
    return f"{name}({_call_args(args, kwargs, g)})"


def _codegen(graph: Graph, root: str) -> PythonCode:
    """``forward``'s source, as torch.fx writes it: one line per node, each value set to
    None after its last use."""
    g = _Globals()
    nodes = list(graph.nodes)
    last_use: dict[Node, Node] = {}
    for node in reversed(nodes):
        for arg in node.all_input_nodes:
            last_use.setdefault(arg, node)
    dies_at: dict[Node, list[Node]] = {}
    for value, user in last_use.items():
        dies_at.setdefault(user, []).append(value)
    params: list[str] = []
    body: list[str] = []
    for node in nodes:
        if node.op == "placeholder":
            default = f" = {_code_arg(node.args[0], g)}" if node.args else ""
            params.append(f"{node.target}{default}")
            if node.name != node.target:
                body.append(f"    {node.name} = {node.target}\n")
            continue
        if node.op == "output":
            body.append(f"    return {_code_arg(node.args[0], g)}\n")
            continue
        line = f"    {node.name} = {_expr(node, root, g)}"
        dead = list(dies_at.get(node, ()))
        if not node.users:
            dead.append(node)
        if dead:
            line += ";  " + " = ".join([n.name for n in dead] + ["None"])
        body.append(line + "\n")
    head = ", ".join([root, *params])
    from ..dtypes import display_name

    wraps = "\n".join(f'{display_name}.fx._symbolic_trace.wrap("{n}")' for n in g.wrapped)
    src = f"\n{wraps}\n\ndef forward({head}):\n{''.join(body)}    "
    return PythonCode(src, g.values)
