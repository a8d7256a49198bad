"""The IR: a ``Graph`` of ``Node``s over typed ``Value``s, like TorchScript's and FX's.

A ``Value`` is one SSA value: defined exactly once (a graph input, or an output of one
node), with a type (``Tensor`` with dtype and shape where known, or ``int``/``float``/
``bool``/``str``). A ``Node`` is one operation: its ``op`` name, its ``args``/``kwargs``
(each either a ``Value`` or a plain constant such as ``2.0``, ``(0, 2)`` or ``None``), its
output Values, and, for control flow (``If``, ``Loop``), sub-``Block``s. A ``Block`` is a
list of nodes with its own inputs and outputs; a ``Graph`` is the outermost block.

Printing a graph gives TorchScript's ``.graph`` form::

    graph(%x : float32[4, 8]):
      %fc.weight : float32[16, 8] = get_attr["fc.weight"]()
      %1 : float32[4, 16] = linear(%x, %fc.weight, %fc.bias)
      return (%1)

and ``python_print.python_code(graph)`` (a ScriptModule's ``.code``) a Python-like form.
``lint(graph)`` checks that a graph is well formed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..checks import describe as describe_value
from ..dtypes import dtype as _dtype
from .ops import is_pure as _is_pure


class Value:
    """One SSA value: a name, a type and (for tensors) dtype and shape where known."""

    __slots__ = ("name", "type", "dtype", "shape", "node")

    def __init__(
        self,
        name: str,
        type: str = "Tensor",  # noqa: A002 - the IR's word for it
        dtype: str | None = None,
        shape: tuple[int, ...] | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.dtype = dtype
        self.shape = None if shape is None else tuple(int(n) for n in shape)
        self.node: Node | None = None  # the node that defines it (None: a block input)

    def type_str(self) -> str:
        """``float32[4, 8]`` for a tensor of known dtype and shape, else the type name."""
        if self.type != "Tensor" or self.dtype is None:
            return self.type
        dims = "?" if self.shape is None else ", ".join(str(n) for n in self.shape)
        return f"{self.dtype}[{dims}]"

    def __repr__(self) -> str:
        return f"%{self.name}"


class Node:
    """One operation: ``outputs = op(*args, **kwargs)``, maybe with sub-blocks."""

    __slots__ = ("op", "args", "kwargs", "outputs", "blocks", "target", "line")

    def __init__(
        self,
        op: str,
        args: tuple = (),
        kwargs: dict | None = None,
        outputs: list[Value] | None = None,
        blocks: list[Block] | None = None,
        target: Any = None,
        line: str = "",
    ) -> None:
        self.op = op
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.outputs = list(outputs or [])
        self.blocks = list(blocks or [])
        self.target = target  # what runs it: a Function class or a Python function
        self.line = line  # where it came from in the source ("model.py:12"), if known
        for v in self.outputs:
            v.node = self

    @property
    def inputs(self) -> list[Value]:
        """The Values this node reads, in argument order (nested tuples/lists included)."""
        return [v for v in _walk(self.args) if isinstance(v, Value)] + [
            v for v in _walk(tuple(self.kwargs.values())) if isinstance(v, Value)
        ]

    @property
    def attrs(self) -> dict[str, Any]:
        """The constant (non-Value) arguments, by position (``"arg1"``) or keyword."""
        out = {f"arg{i}": a for i, a in enumerate(self.args) if not isinstance(a, Value)}
        out.update({k: v for k, v in self.kwargs.items() if not isinstance(v, Value)})
        return out

    def replace_input(self, old: Value, new: Value) -> None:
        """Make every use of ``old`` in this node's arguments a use of ``new``."""
        self.args = _replace(self.args, old, new)
        self.kwargs = {k: _replace((v,), old, new)[0] for k, v in self.kwargs.items()}

    def __repr__(self) -> str:
        return format_node(self, "").strip()


class Block:
    """A list of nodes with inputs (parameters) and outputs (what it returns)."""

    def __init__(self, inputs: list[Value] | None = None) -> None:
        self.inputs: list[Value] = list(inputs or [])
        self.nodes: list[Node] = []
        self.outputs: list[Value] = []

    def append(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def walk(self) -> Iterator[Node]:
        """Every node, including those of sub-blocks (a node comes before its blocks' nodes)."""
        for node in self.nodes:
            yield node
            for block in node.blocks:
                yield from block.walk()


class Graph(Block):
    """The outermost block: a whole program, its inputs, its outputs.

    ``graph.create(op, args, ...)`` appends a node and makes its output Values with fresh
    names; ``copy()`` gives an independent graph (passes transform copies).
    """

    #: True when the program returns a tuple (even of one value), False for a single value.
    tuple_output: bool = False
    #: The grad modes the ops were recorded in (a trace sets it; more than one: the code
    #: switched autograd off or on inside).
    grad_modes: frozenset = frozenset()

    def __init__(self, inputs: list[Value] | None = None) -> None:
        super().__init__(inputs)
        self._counter = itertools.count()
        self._names: set[str] = {v.name for v in self.inputs}

    # --- building ------------------------------------------------------------------------
    def fresh_name(self, hint: str | None = None) -> str:
        """A name no Value of this graph has yet: ``hint``, ``hint.1``, ... or ``0``, ``1``."""
        if hint is not None and hint not in self._names:
            self._names.add(hint)
            return hint
        while True:
            name = str(next(self._counter)) if hint is None else f"{hint}.{next(self._counter)}"
            if name not in self._names:
                self._names.add(name)
                return name

    def new_value(self, like: Any = None, name: str | None = None, type: str | None = None):  # noqa: A002
        """A fresh Value typed like ``like`` (a Tensor, a Python scalar) or ``type``."""
        value = Value(self.fresh_name(name), **describe(like))
        if type is not None:
            value.type = type
        return value

    def add_input(self, like: Any = None, name: str | None = None) -> Value:
        value = self.new_value(like, name)
        self.inputs.append(value)
        return value

    def create(
        self,
        op: str,
        args: tuple = (),
        kwargs: dict | None = None,
        outputs: list[Value] | None = None,
        target: Any = None,
        block: Block | None = None,
        line: str = "",
    ) -> Node:
        node = Node(op, args, kwargs, outputs, target=target, line=line)
        (block or self).append(node)
        return node

    def copy(self) -> Graph:
        """An independent copy (new Values and Nodes; constants and targets shared)."""
        mapping: dict[Value, Value] = {}

        def value(v: Value) -> Value:
            if v not in mapping:
                new = Value(v.name, v.type, v.dtype, v.shape)
                mapping[v] = new
            return mapping[v]

        def copy_block(src: Block, dst: Block) -> None:
            dst.inputs = [value(v) for v in src.inputs]
            for node in src.nodes:
                new = Node(
                    node.op,
                    _map_values(node.args, value),
                    {k: _map_values((v,), value)[0] for k, v in node.kwargs.items()},
                    [value(v) for v in node.outputs],
                    target=node.target,
                    line=node.line,
                )
                for b in node.blocks:
                    nb = Block()
                    copy_block(b, nb)
                    new.blocks.append(nb)
                dst.nodes.append(new)
            dst.outputs = [value(v) for v in src.outputs]

        g = Graph()
        copy_block(self, g)
        g.tuple_output = self.tuple_output
        g._names = set(self._names)
        g._counter = itertools.count(_next_number(self._names))
        return g

    # --- reading --------------------------------------------------------------------------
    def users(self) -> dict[Value, list[Node]]:
        """For each Value, the nodes that read it (in every block)."""
        uses: dict[Value, list[Node]] = {}
        for node in self.walk():
            for v in node.inputs:
                uses.setdefault(v, []).append(node)
        return uses

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.walk():
            counts[node.op] = counts.get(node.op, 0) + 1
        return counts

    def __str__(self) -> str:
        head = ",\n      ".join(f"%{v.name} : {v.type_str()}" for v in self.inputs)
        body = "".join(format_node(n, "  ") for n in self.nodes)
        ret = ", ".join(f"%{v.name}" for v in self.outputs)
        return f"graph({head}):\n{body}  return ({ret})\n"

    def __repr__(self) -> str:
        return str(self)


# --- helpers ---------------------------------------------------------------------------
def describe(x: Any) -> dict:
    """The Value type fields for an example object: a Tensor, a Python scalar, or None."""
    from ..tensor import Tensor

    if isinstance(x, Tensor):
        return {"type": "Tensor", "dtype": x.dtype.name, "shape": tuple(x.shape)}
    if isinstance(x, bool):
        return {"type": "bool"}
    if isinstance(x, int):
        return {"type": "int"}
    if isinstance(x, float):
        return {"type": "float"}
    if isinstance(x, str):
        return {"type": "str"}
    return {"type": "Tensor"}


def _walk(items: tuple | list) -> Iterator[Any]:
    for item in items:
        if isinstance(item, (tuple, list)):
            yield from _walk(item)
        else:
            yield item


def _replace(items: tuple, old: Value, new: Value) -> tuple:
    return _map_values(items, lambda v: new if v is old else v)


def _map_values(items: tuple, fn: Any) -> tuple:
    out = []
    for item in items:
        if isinstance(item, Value):
            out.append(fn(item))
        elif isinstance(item, tuple):
            out.append(_map_values(item, fn))
        elif isinstance(item, list):
            out.append(list(_map_values(tuple(item), fn)))
        else:
            out.append(item)
    return tuple(out)


def _next_number(names: set[str]) -> int:
    numbers = [int(n.rsplit(".", 1)[-1]) for n in names if n.rsplit(".", 1)[-1].isdigit()]
    return max(numbers, default=-1) + 1


def format_arg(a: Any) -> str:
    """How an argument prints: ``%x`` for a Value, a short form for constants."""
    from ..tensor import Tensor

    if isinstance(a, Value):
        return f"%{a.name}"
    if isinstance(a, Tensor):
        return f"<tensor {a.dtype.name}{list(a.shape)}>"
    if isinstance(a, np.ndarray):
        return f"<array {a.dtype}{list(a.shape)}>"
    if isinstance(a, _dtype):
        return f"minitorch.{a.name}"
    if isinstance(a, tuple):
        inner = ", ".join(format_arg(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(format_arg(x) for x in a) + "]"
    if isinstance(a, slice):
        return f"{format_arg(a.start)}:{format_arg(a.stop)}" + (
            f":{format_arg(a.step)}" if a.step is not None else ""
        )
    if a is None:
        return "None"
    if a is Ellipsis:
        return "..."
    return repr(a)


def format_node(node: Node, indent: str) -> str:
    """One node (and its blocks) in TorchScript's ``.graph`` style."""
    outs = ", ".join(f"%{v.name} : {v.type_str()}" for v in node.outputs)
    args = [format_arg(a) for a in node.args]
    args += [f"{k}={format_arg(v)}" for k, v in node.kwargs.items()]
    lhs = f"{outs} = " if outs else ""
    text = f"{indent}{lhs}{node.op}({', '.join(args)})\n"
    for i, block in enumerate(node.blocks):
        params = ", ".join(f"%{v.name}" for v in block.inputs)
        text += f"{indent}  block{i}({params}):\n"
        text += "".join(format_node(n, indent + "    ") for n in block.nodes)
        rets = ", ".join(f"%{v.name}" for v in block.outputs)
        text += f"{indent}    -> ({rets})\n"
    return text


def inline_graph(
    dst: Graph, src: Graph, inputs: list[Any], attr: Any
) -> tuple[list[Node], list[Value]]:
    """A copy of ``src``'s nodes to put into ``dst`` (its sub-blocks included): fresh names,
    ``src``'s inputs replaced by ``inputs`` (Values of ``dst``), each ``get_attr`` node by
    the Value ``attr(name)`` gives. Returns the top-level nodes to append, and the Values
    that stand for ``src``'s outputs."""
    g = src.copy()
    mapping: dict[Value, Any] = dict(zip(g.inputs, inputs, strict=True))
    for block in [g, *(b for n in g.walk() for b in n.blocks)]:
        kept = []
        for node in block.nodes:
            if node.op == "get_attr":
                mapping[node.outputs[0]] = attr(node.args[0])
            else:
                kept.append(node)
        block.nodes = kept
    for node in g.walk():
        for v in node.outputs + [x for b in node.blocks for x in b.inputs]:
            v.name = dst.fresh_name()

    def remap(v: Value) -> Any:
        return mapping.get(v, v)

    for node in g.walk():
        node.args = _map_values(node.args, remap)
        node.kwargs = {k: _map_values((x,), remap)[0] for k, x in node.kwargs.items()}
        for b in node.blocks:
            b.outputs = [remap(v) for v in b.outputs]
    return g.nodes, [remap(v) for v in g.outputs]


def mutated_values(graph: Graph) -> set[Value]:
    """Values that an in-place node writes to (and the values those nodes produce)."""
    out: set[Value] = set()
    for node in graph.walk():
        if not _is_pure(node) and node.args and isinstance(node.args[0], Value):
            out.add(node.args[0])
            out.update(node.outputs)
    return out


def as_graph(graph: Any, op: str) -> Graph:
    """A pass's argument, checked: a Graph (a traced or scripted module's is ``.graph``)."""
    if not isinstance(graph, Graph):
        hint = " (pass module.graph)" if hasattr(graph, "graph") else ""
        raise TypeError(f"{op}: expected a jit Graph{hint}, but got {describe_value(graph)}")
    return graph
