"""``fx.Node``: one operation of an FX graph, and the value it produces.

An FX node *is* its value: ``args`` and ``kwargs`` hold other Nodes (or constants), and
each node keeps ``users``, the nodes that read it, up to date as arguments change, so
``replace_all_uses_with`` is one walk over ``users``. ``op`` is one of six kinds:

- ``placeholder``: an input of ``forward`` (``target``: its parameter name);
- ``get_attr``: a parameter, buffer or constant of the module (``target``: its dotted path);
- ``call_function``: ``target(*args, **kwargs)`` for a free function (``torch.relu``,
  ``operator.add``);
- ``call_method``: ``args[0].target(*args[1:], **kwargs)`` (``"view"``);
- ``call_module``: the submodule at path ``target`` called on ``args``;
- ``output``: what ``forward`` returns (``args[0]``).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import Any

from ..checks import describe

#: Type names torch.fx's signatures use: what a node's target and arguments may be.
Target = Any
Argument = Any

OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

#: Functions that change state: eliminate_dead_code keeps their nodes even when unused.
_SIDE_EFFECTS = {print, operator.setitem, operator.iadd, operator.imul, operator.isub}


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """``fn`` applied to every leaf of nested tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        out = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*out) if hasattr(a, "_fields") else out  # a namedtuple stays one
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """``fn`` applied to every Node inside ``a`` (other leaves kept as they are)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _nodes_in(a: Any) -> list[Node]:
    found: dict[Node, None] = {}
    map_arg(a, lambda n: found.setdefault(n))
    return list(found)


class Node:
    """One node of an FX ``Graph``; create nodes with the graph's methods, not directly."""

    def __init__(
        self,
        graph: Any,
        name: str,
        op: str,
        target: Any,
        args: tuple,
        kwargs: dict,
        return_type: Any = None,
    ) -> None:
        if op not in OPS:
            raise ValueError(f"fx.Node: op must be one of {', '.join(OPS)}, but got {op!r}")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(
            target, str
        ):
            raise TypeError(
                f"fx.Node: a {op} node's target must be a str, but got {describe(target)}"
            )
        if op == "call_function" and not callable(target):
            raise TypeError(
                f"fx.Node: a call_function node's target must be callable, but got "
                f"{describe(target)}"
            )
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.type = return_type
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # --- arguments and uses ---------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args_kwargs(self._args, dict(value))

    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = dict.fromkeys(_nodes_in((args, kwargs)))
        for new in self._input_nodes:
            new.users.setdefault(self)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The Nodes this node reads, in the order its arguments name them."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Any) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Any) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Every use of ``old_input`` in this node's arguments becomes ``new_input``."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list[Node]:
        """Make every user of this node (for which ``delete_user_cb`` says yes) read
        ``replace_with`` instead; returns the users changed."""
        if propagate_meta:
            replace_with.meta.update(self.meta)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # --- place in the graph ---------------------------------------------------------------
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def is_impure(self) -> bool:
        """Must the node stay even when nothing reads it (an input, the output, a function
        with a side effect such as ``print``)? As in torch.fx, a ``call_method`` never is:
        an unused in-place ``x.add_(1)`` goes too."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _SIDE_EFFECTS
        if self.op == "call_module":
            module = self.graph.owning_module
            sub = _get_path(module, self.target) if module is not None else None
            return bool(getattr(sub, "_is_impure", False))
        return False

    # --- printing -------------------------------------------------------------------------
    def format_node(self) -> str:
        """The node as ``print(graph)`` shows it (torch.fx's format)."""
        if self.op == "output":
            return f"return {_format(self.args[0], mark='')}"
        head = (
            f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={_target_name(self)}]"
        )
        if self.op in ("placeholder", "get_attr"):
            return head
        kwargs = ", ".join(f"{k}: {_format(v)}" for k, v in self.kwargs.items())
        return f"{head}(args = {_format(self.args)}, kwargs = {{{kwargs}}})"

    def __repr__(self) -> str:
        return self.name


def _format(a: Any, mark: str = "%") -> str:
    if isinstance(a, Node):
        return f"{mark}{a.name}"
    if isinstance(a, tuple):
        inner = ", ".join(_format(x, mark) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_format(x, mark) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format(v, mark)}" for k, v in a.items()) + "}"
    return str(a)


def _target_name(node: Node) -> str:
    if node.op == "call_function":
        return qualified_name(node.target)
    return str(node.target)


def qualified_name(fn: Any) -> str:
    """How a function target prints: ``torch.relu``, ``operator.add``, ``builtins.getattr``."""
    from ..dtypes import display_name

    name = getattr(fn, "__name__", repr(fn))
    if getattr(builtins, name, None) is fn:
        return f"builtins.{name}"
    if getattr(operator, name, None) is fn:
        return f"operator.{name}"
    if getattr(math, name, None) is fn:
        return f"math.{name}"
    import minitorch
    from minitorch.nn import functional

    if getattr(minitorch, name, None) is fn:
        return f"{display_name}.{name}"
    if getattr(functional, name, None) is fn:
        return f"{display_name}.nn.functional.{name}"
    return f"{getattr(fn, '__module__', '') or ''}.{name}".lstrip(".")


def _get_path(root: Any, path: str) -> Any:
    obj = root
    for part in path.split(".") if path else ():
        obj = getattr(obj, part)
    return obj
