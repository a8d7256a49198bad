"""``fx.GraphModule``: a Module whose ``forward`` is the code its ``graph`` prints as.

It copies from ``root`` the submodules, parameters and buffers the graph's ``call_module``
and ``get_attr`` nodes name; ``recompile()`` writes ``forward`` again from the graph (call
it after editing the graph), and ``.code`` is that source.
"""

from __future__ import annotations

import copy
from typing import Any

from ..nn import Module, Parameter
from ..tensor import Tensor
from .graph import Graph
from .node import _get_path


def _copy_attr(src: Any, dst: Module, path: str) -> None:
    """``dst.<path> = src.<path>`` (the same object; a tensor that is not a Parameter is a
    buffer), creating empty Modules for the missing parents."""
    *parents, last = path.split(".")
    for part in parents:
        src = getattr(src, part)
        if part not in dict(dst.named_children()):
            dst.add_module(part, Module())
        dst = getattr(dst, part)
    value = getattr(src, last)
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        dst.register_buffer(last, value)  # (a traced constant too, as torch.fx does)
    else:
        setattr(dst, last, value)


class GraphModule(Module):
    """A Module built from a ``Graph``: ``gm(x)`` runs the graph's code."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each GraphModule gets its own class, so that recompile() can set its forward
        if cls is GraphModule or "_generated" not in cls.__dict__:
            name = kwargs.get("class_name", args[2] if len(args) > 2 else "GraphModule")
            cls = type(
                name if isinstance(name, str) else "GraphModule", (cls,), {"_generated": True}
            )
        return super().__new__(cls)

    def __init__(self, root: Any, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        targets = [n.target for n in graph.nodes if n.op in ("call_module", "get_attr")]
        for target in dict.fromkeys(targets):
            if isinstance(root, Module):
                try:
                    _copy_attr(root, self, target)
                except AttributeError:
                    raise RuntimeError(
                        f"GraphModule: node target {target!r} is not an attribute of "
                        f"{type(root).__name__}"
                    ) from None
            elif isinstance(root, dict):
                if target not in root:
                    raise RuntimeError(f"GraphModule: node target {target!r} is not in root's dict")
                *parents, last = target.split(".")
                holder: Module = self
                for part in parents:
                    if part not in dict(holder.named_children()):
                        holder.add_module(part, Module())
                    holder = getattr(holder, part)
                setattr(holder, last, root[target])
            else:
                raise TypeError("GraphModule: root must be a Module or a dict")
        self.graph = graph

    def __deepcopy__(self, memo: dict) -> GraphModule:
        """A GraphModule of its own class (so that its recompile() leaves this one alone)
        over deep copies of the graph and of what the graph names."""
        holder = Module()
        for name, child in self.named_children():
            holder.add_module(name, copy.deepcopy(child, memo))
        for name, p in self.named_parameters(recurse=False):
            setattr(holder, name, copy.deepcopy(p, memo))
        for name, b in self.named_buffers(recurse=False):
            holder.register_buffer(name, copy.deepcopy(b, memo))
        for name, value in self.__dict__.items():
            if isinstance(value, Tensor):  # a traced constant (``_tensor_constant0``)
                object.__setattr__(holder, name, copy.deepcopy(value, memo))
        res = GraphModule(holder, copy.deepcopy(self.graph, memo), type(self).__name__)
        res.train(self.training)
        memo[id(self)] = res
        return res

    @property
    def graph(self) -> Graph:
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        return self.__dict__["_code"]

    def recompile(self) -> Any:
        """Write ``forward`` again from ``self.graph``; returns the generated code."""
        python = self.graph.python_code("self")
        namespace = dict(python.globals)
        exec(compile(python.src, f"<eval_with_key>.{type(self).__name__}", "exec"), namespace)  # noqa: S102 - code generated from the graph
        self.__dict__["_code"] = python.src
        type(self).forward = namespace["forward"]
        return python

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class with its generated ``forward`` (torch.fx's layout)."""
        body = self.code.strip("\n").rstrip().splitlines()
        lines = [f"class {type(self).__name__}(torch.nn.Module):", f"    {body[0]}"]
        lines.append("        # No stacktrace found for following nodes")
        lines += [f"    {line}" for line in body[1:]]
        text = "\n".join(lines) + "\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__repr__(), self.code, reminder])

    def add_submodule(self, target: str, m: Module) -> bool:
        *parents, last = target.split(".")
        holder: Module = self
        for part in parents:
            if part not in dict(holder.named_children()):
                holder.add_module(part, Module())
            holder = getattr(holder, part)
        holder.add_module(last, m)
        return True

    def get_submodule(self, target: str) -> Any:
        return _get_path(self, target)

    def delete_submodule(self, target: str) -> bool:
        *parents, last = target.split(".")
        try:
            holder = _get_path(self, ".".join(parents))
            delattr(holder, last)
        except AttributeError:
            return False
        return True

    def delete_all_unused_submodules(self) -> None:
        used = {n.target for n in self.graph.nodes if n.op == "call_module"}
        for name, _ in list(self.named_modules()):
            if name and not any(u == name or u.startswith(name + ".") for u in used):
                self.delete_submodule(name)
