"""``fx.symbolic_trace``: run ``forward`` on Proxies and keep the graph they record.

Unlike ``jit.trace`` (chapter 05), which runs the program on real tensors and records the
ops ``Function.apply`` saw, a symbolic trace runs it on values that have no data: it sees
the program's own calls -- ``self.linear(x)``, ``torch.relu``, ``x.view`` -- not the ops
beneath them, and a branch on a value cannot be taken at all.

While tracing, ``Module.__call__`` asks ``Tracer.call_module``: a leaf module (one of
``minitorch.nn``'s own layers) becomes one ``call_module`` node; any other module is traced
through. A parameter or buffer read becomes a ``get_attr`` node, another tensor a
``_tensor_constant`` attribute of the root.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..checks import describe
from ..tensor import Tensor
from .graph import Graph
from .node import Node, map_aggregate
from .proxy import Proxy, TraceError, patched


class Tracer:
    """Turns a module's or function's ``forward`` into a ``Graph`` (``torch.fx.Tracer``)."""

    def __init__(self, autowrap_functions: tuple = (), param_shapes_constant: bool = False) -> None:
        self.graph = Graph(tracer_cls=type(self))
        self.root: Any = None
        self._attr_names: dict[int, str] = {}
        self._module_paths: dict[int, str] = {}
        self._constants = 0

    # --- what becomes a node -------------------------------------------------------------
    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        """Is ``m`` one node (minitorch.nn's own layers), not traced through?"""
        from ..nn import Sequential

        module = type(m).__module__ or ""
        return module.startswith(("minitorch.nn", "minitorch.ao.nn")) and not isinstance(
            m, Sequential
        )

    def path_of_module(self, mod: Any) -> str:
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Any, forward: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        return attr_val

    def create_arg(self, a: Any) -> Any:
        """A node argument for ``a``: Proxies become their nodes, tensors ``get_attr`` nodes."""

        def leaf(x: Any) -> Any:
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                return self._tensor_node(x)
            if isinstance(x, Node) or x is None or isinstance(x, (int, float, bool, str, complex)):
                return x
            return x

        return map_aggregate(a, leaf)

    def _tensor_node(self, t: Tensor) -> Node:
        name = self._attr_names.get(id(t))
        if name is None:
            name = f"_tensor_constant{self._constants}"
            self._constants += 1
            setattr(self.root, name, t)
            self._attr_names[id(t)] = name
        return self.create_node("get_attr", name, (), {})

    def create_node(
        self,
        kind: str,
        target: Any,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:  # noqa: E501
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Any,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Proxy:  # noqa: E501
        node = self.create_node(
            kind, target, self.create_arg(args), self.create_arg(kwargs), name, type_expr
        )
        return self.proxy(node)

    # --- the trace -----------------------------------------------------------------------
    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run ``root``'s ``forward`` (or ``root`` itself, a function) on Proxies."""
        from ..nn import Module

        if isinstance(root, Module):
            self.root, fn = root, type(root).forward
            bound = (root,)
        elif callable(root):
            self.root, fn, bound = Module(), root, ()
        else:
            raise TypeError(
                f"symbolic_trace: expected a Module or a function, but got {describe(root)}"
            )
        self.graph = Graph(tracer_cls=type(self))
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._attr_names = {
            id(t): name
            for name, t in [*self.root.named_parameters(), *self.root.named_buffers()]
            if t is not None
        }
        args = self._placeholders(fn, bool(bound), concrete_args or {})
        original_call = Module.__call__
        tracer = self

        def module_call(mod: Any, *a: Any, **k: Any) -> Any:
            return tracer.call_module(mod, lambda *a2, **k2: original_call(mod, *a2, **k2), a, k)

        with patched():
            Module.__call__ = module_call
            try:
                out = fn(*bound, *args)
            finally:
                Module.__call__ = original_call
        self.graph.output(self.create_arg(out))
        return self.graph

    def _placeholders(self, fn: Callable, skip_self: bool, concrete: dict[str, Any]) -> list[Any]:
        params = list(inspect.signature(fn).parameters.values())[int(skip_self) :]
        out = []
        for p in params:
            if p.name in concrete:
                out.append(concrete[p.name])
            elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TraceError(
                    f"symbolic_trace: forward's {p} is not supported; give it named parameters"
                )
            else:
                default = () if p.default is p.empty else (p.default,)
                node = self.graph.create_node("placeholder", p.name, default, {})
                out.append(self.proxy(node))
        return out


def symbolic_trace(root: Any, concrete_args: dict[str, Any] | None = None) -> Any:
    """A ``GraphModule`` of ``root`` (a Module or a function), traced with Proxies."""
    from .graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if not inspect.isfunction(root) else root.__name__
    return GraphModule(tracer.root, graph, name)


class GraphAppendingTracer(Tracer):
    """A tracer that appends what Proxies record to an existing ``graph`` (for rewriting one
    graph into another with Proxies)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        from ..nn import Module

        self.root = Module()
