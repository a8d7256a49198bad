"""``ScriptModule``: a graph plus the parameters and buffers it reads, callable like a Module.

A traced or scripted module keeps the *same* Parameter objects as the original (training
one trains the other, as in PyTorch), arranged under the same dotted names, so
``named_parameters()``, ``state_dict()`` and optimizers work on it. A loaded one owns its
tensors. Calling it runs the graph with the interpreter (``interpreter.run_graph``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..nn import Module, Parameter
from ..tensor import Tensor
from .codegen import python_code
from .interpreter import run_graph
from .ir import Graph
from .read_guards import read_guards
from .serialize import read, save


class ScriptModule(Module):
    """A compiled program: ``.graph`` (the IR), ``.code``, ``save(path)``, and ``__call__``."""

    def __init__(
        self, graph: Graph, attrs: Mapping[str, Tensor] | None = None, name: str = "forward"
    ):
        super().__init__()
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_name", name)
        for dotted, t in (attrs or {}).items():
            owner, leaf = self._owner(dotted)
            if isinstance(t, Parameter):
                owner.register_parameter(leaf, t)
            else:
                owner.register_buffer(leaf, t)

    def _owner(self, dotted: str) -> tuple[Module, str]:
        """The (created on demand) submodule that holds ``dotted``, and the leaf name."""
        *path, leaf = dotted.split(".")
        module: Module = self
        for part in path:
            child = module._modules.get(part)
            if child is None:
                child = Module()
                module.add_module(part, child)
            module = child
        return module, leaf

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def code(self) -> str:
        return python_code(self._graph)

    def attr_values(self) -> dict[str, Tensor]:
        """What ``get_attr`` nodes read: every parameter and buffer by dotted name."""
        values = dict(self.named_parameters())
        values.update((k, v) for k, v in self.named_buffers() if v is not None)
        return values

    def _watch_reads(self, source: Any, fn: Any, again: Callable[[Any], ScriptModule]) -> None:
        """Script again (``again(source)``) when a global, closure variable or attribute that
        ``source``'s code read at script time has changed since: the graph holds what it read
        then, and a stale value must not be used (TorchScript reads such values when it is
        called)."""
        module = source if isinstance(source, Module) else None
        object.__setattr__(self, "_reads", (source, read_guards(fn, module), again))

    def _fresh(self) -> None:
        reads = self.__dict__.get("_reads")
        if reads is None:
            return  # (loaded from a file: no source to read)
        source, guards, again = reads
        for guard in guards:
            if guard.check((), {}) is not None:
                fresh = again(source)
                object.__setattr__(self, "_graph", fresh._graph)
                object.__setattr__(self, "_reads", fresh.__dict__["_reads"])
                return

    def forward(self, *inputs: Any) -> Any:
        self._fresh()
        expected = self._graph.inputs
        if len(inputs) != len(expected):
            names = ", ".join(v.name for v in expected)
            raise TypeError(
                f"{self._name}: this ScriptModule takes {len(expected)} inputs ({names}), but "
                f"{len(inputs)} were given"
            )
        return run_graph(self._graph, inputs, self.attr_values())

    def with_graph(self, graph: Graph) -> ScriptModule:
        """A ScriptModule running ``graph`` on this one's (shared) parameters and buffers."""
        return ScriptModule(graph, self.attr_values(), self._name)

    def save(self, path: Any) -> None:
        """Write the graph and its tensors to ``path`` (no pickle; see ``jit.load``)."""
        save(self, path)

    def extra_repr(self) -> str:
        return f"name={self._name!r}, nodes={len(self._graph.nodes)}"


def load(path: Any, map_location: Any = None) -> ScriptModule:
    """Load a ScriptModule saved with ``ScriptModule.save``; no Python class is needed."""
    graph, tensors, name = read(path, map_location)
    return ScriptModule(graph, tensors, name=name)
