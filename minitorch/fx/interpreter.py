"""``fx.Interpreter`` runs a GraphModule node by node; ``fx.Transformer`` rewrites it.

The loop is chapter 05's interpreter (``jit.interpreter.run_graph``) over FX's six ops: an
environment maps each node to its value, each node's method (``call_function``,
``call_module``, ...) computes the next one, and a subclass overrides one of them to
observe (shape propagation) or change (swap ``sigmoid`` for ``neg``) what runs.
``Transformer`` runs the same loop on Proxies, so what the methods return is recorded
into a new graph.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, _get_path, map_aggregate, map_arg
from .proxy import Proxy, patched
from .tracer import Tracer


class Interpreter:
    """Run ``module``'s graph on real values; override a method to change one kind of node."""

    def __init__(
        self, module: Any, garbage_collect_values: bool = True, graph: Graph | None = None
    ) -> None:  # noqa: E501
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.submodules = dict(module.named_modules())
        self.env: dict[Node, Any] = {}
        self.garbage_collect_values = garbage_collect_values
        self.args_iter: Iterator[Any] = iter(())
        last_use: dict[Node, Node] = {}
        for node in reversed(list(self.graph.nodes)):
            for arg in node.all_input_nodes:
                last_use.setdefault(arg, node)
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        for value, user in last_use.items():
            self.user_to_last_uses.setdefault(user, []).append(value)

    def run(
        self,
        *args: Any,
        initial_env: dict[Node, Any] | None = None,
        enable_io_processing: bool = True,
    ) -> Any:  # noqa: E501
        """Run the graph on ``args``; what its output node returns."""
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as err:
                err.add_note(f"While executing {node.format_node()}")
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node) -> Any:
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per op ---------------------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from None  # noqa: E501

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # --- helpers -----------------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        try:
            return _get_path(self.module, target)
        except AttributeError:
            raise RuntimeError(f"Node referenced nonexistent target {target}") from None

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        def load(node: Node) -> Any:
            if node not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {node}! Run Graph.lint() to "
                    "diagnose such issues"
                )
            return self.env[node]

        return map_arg(args, load)


class Transformer(Interpreter):
    """Run the graph on Proxies into a new graph: ``transform()`` returns the GraphModule
    of what the (overridden) methods recorded."""

    def __init__(self, module: Any) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module
        self.tracer._module_paths = {id(m): name for name, m in module.named_modules()}

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return Proxy(
            self.new_graph.placeholder(target, default_value=args[0])
            if args
            else self.new_graph.placeholder(target),
            self.tracer,
        )  # noqa: E501

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def transform(self) -> GraphModule:
        with patched():
            result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(
                map_aggregate(result, lambda x: x.node if isinstance(x, Proxy) else x)
            )
        return GraphModule(self.module, self.new_graph)
