"""``ScriptModule``: a graph plus the parameters and buffers it reads, callable like a Module.

A traced or scripted module keeps the *same* Parameter objects as the original (training
one trains the other, as in PyTorch), arranged in the original's tree of submodules (each
a ``ScriptModule`` with its ``original_name``, as ``torch.jit.trace`` gives), so
``traced.fc1.weight``, ``named_modules()``, ``state_dict()`` and optimizers work on it. A
loaded one owns its tensors. Calling it runs the graph with the interpreter
(``interpreter.run_graph``); called while another trace records, it records a call of its
own graph, control flow included (PyTorch's hybrid of scripting and tracing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..nn import Module, Parameter
from ..tensor import Tensor
from .interpreter import run_graph
from .ir import Graph
from .python_print import python_code
from .read_guards import read_guards
from .recording import current_tracer
from .serialize import read
from .serialize import save as _save

_PYTHON_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


class ScriptModule(Module):
    """A compiled program: ``.graph`` (the IR), ``.code``, ``save(path)``, and ``__call__``.

    ``source``: the Module it was made from (its submodule tree, names and training flags
    are mirrored). ``methods``: other compiled methods (``@jit.export``), by name.
    """

    def __init__(
        self,
        graph: Graph | None,
        attrs: Mapping[str, Tensor] | None = None,
        name: str = "forward",
        source: Module | None = None,
        methods: Mapping[str, Graph] | None = None,
        scripted: bool = False,
    ):
        super().__init__()
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_scripted", scripted)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_methods", dict(methods or {}))
        if source is not None:
            self._mirror(source)
        for dotted, t in (attrs or {}).items():
            owner, leaf = self._owner(dotted)
            if isinstance(t, Parameter):
                owner.register_parameter(leaf, t)
            else:
                owner.register_buffer(leaf, t)

    def _mirror(self, source: Module) -> None:
        """The source's submodules (each a graph-less ScriptModule), its own parameters and
        buffers (the same objects) and its training flag."""
        object.__setattr__(self, "training", source.training)
        for name, p in source._parameters.items():
            if p is not None:
                self.register_parameter(name, p)
        for name, b in source._buffers.items():
            if b is not None:
                self.register_buffer(name, b, persistent=name not in source._non_persistent)
        for name, child in source._modules.items():
            if isinstance(child, ScriptModule):  # already compiled: kept, callable as it is
                self.add_module(name, child)
            elif child is not None:
                sub = ScriptModule(None, name=type(child).__name__, scripted=self._scripted)
                sub._mirror(child)
                self.add_module(name, sub)

    def _owner(self, dotted: str) -> tuple[Module, str]:
        """The (created on demand) submodule that holds ``dotted``, and the leaf name."""
        *path, leaf = dotted.split(".")
        module: Module = self
        for part in path:
            child = module._modules.get(part)
            if child is None:
                child = ScriptModule(None, name=part, scripted=self._scripted)
                module.add_module(part, child)
            module = child
        return module, leaf

    @property
    def original_name(self) -> str:
        """The name of the class (or function) it was compiled from, as PyTorch's."""
        return self._name

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            raise RuntimeError(
                f"{self._name}: a submodule of a traced (or loaded) module has no graph of its "
                "own; the parent's graph holds its ops"
            )
        return self._graph

    @property
    def code(self) -> str:
        return python_code(self.graph)

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
        object.__setattr__(self, "_flags", _training_flags(self))

    def _fresh(self) -> None:
        """Script again if what the graph was compiled from has changed: a global, closure
        variable or attribute its code read, or the ``training`` flag of this module or a
        submodule (``scripted.eval()``: TorchScript reads ``self.training`` when called)."""
        reads = self.__dict__.get("_reads")
        if reads is None:
            return  # (loaded from a file: no source to read)
        source, guards, again = reads
        flags = _training_flags(self)
        if flags == self._flags and all(g.check((), {}) is None for g in guards):
            return
        saved = _training_flags(source) if isinstance(source, Module) else None
        try:
            if saved is not None:
                _set_training_flags(source, flags)
            fresh = again(source)
        finally:
            if saved is not None:
                _set_training_flags(source, saved)
        object.__setattr__(self, "_graph", fresh._graph)
        object.__setattr__(self, "_methods", fresh._methods)
        object.__setattr__(self, "_reads", fresh.__dict__["_reads"])
        object.__setattr__(self, "_flags", flags)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._graph is None:
            raise RuntimeError(
                f"Trace submodules cannot be called. ({self._name!r} is a submodule of a "
                "traced module: call the traced module, or trace this submodule on its own)"
            )
        self._fresh()
        return self._call(self._graph, self._name, inputs, kwargs)

    def _call(self, graph: Graph, name: str, inputs: tuple, kwargs: dict) -> Any:
        defaults = self.__dict__.get("_defaults", {})
        inputs = _bind(graph, name, inputs, kwargs, defaults)
        _check_inputs(graph, name, inputs, defaults)
        attrs = self.attr_values()
        again = self.__dict__.get("_retrace")  # (a trace made in this process)
        out = None
        if again is not None and graph is self._graph:
            graph, out = again.graph_for(inputs, graph)
        fixed = self._fixed_shapes(inputs) if graph is self._graph else None
        if fixed is not None:
            any_batch = any(s is not None and None in s for s in fixed)
            batch_note = " (N: any batch size, the same for every input)" if any_batch else ""
            raise RuntimeError(
                f"{name}: this traced module holds the input sizes it was traced at, "
                f"{_show_fixed(fixed)}{batch_note} "
                "(its code read them as Python numbers, x.shape or x.size()), so it can't run "
                f"inputs of shapes {_shapes(inputs)}; trace it at these shapes (or script it)"
            )
        tracer = current_tracer()
        if out is None:
            if tracer is None or tracer.paused:
                return run_graph(graph, inputs, attrs)
            tracer.paused += 1
            try:
                out = run_graph(graph, inputs, attrs)
            finally:
                tracer.paused -= 1
        if tracer is not None and not tracer.paused:
            tracer.inline(graph, inputs, attrs, out)
        return out

    def _fixed_shapes(self, inputs: tuple | None = None) -> tuple | None:
        """The input shapes this graph is specialized to, when it is one that can't trace
        again (loaded from a file, or optimized or frozen from a trace) and ``inputs`` (if
        given) have other shapes; else None."""
        state = self.__dict__
        if "_retrace" in state:
            return None  # (traces again at new shapes instead)
        derived = state.get("_derived")  # (the trace it was made from, and its graph)
        if "_fixed" not in state:
            if derived is None:
                return None
            if inputs is not None and _shapes(inputs) == derived[0].key:
                return None  # (the traced shapes: no need to find out yet)
            fixed = derived[0].key if derived[0].holds_sizes(derived[1]) else None
            object.__setattr__(self, "_fixed", fixed)
        fixed = state["_fixed"]
        if fixed is None or (inputs is not None and _fits(_shapes(inputs), fixed)):
            return None
        return fixed

    def _derive(self, out: ScriptModule) -> ScriptModule:
        """``out`` (this graph optimized or frozen) keeps what this one knows of its sizes."""
        state = self.__dict__
        object.__setattr__(out, "_scripted", self._scripted)
        if "_retrace" in state:
            object.__setattr__(out, "_derived", (state["_retrace"], self._graph))
        elif "_derived" in state:
            object.__setattr__(out, "_derived", state["_derived"])
        elif "_fixed" in state:
            object.__setattr__(out, "_fixed", state["_fixed"])
        return out

    def __getattr__(self, name: str) -> Any:
        methods = self.__dict__.get("_methods")
        if methods and name in methods:
            graph = methods[name]
            return lambda *inputs, **kwargs: self._call(graph, name, inputs, kwargs)
        return super().__getattr__(name)

    @property
    def methods(self) -> dict[str, Graph]:
        """The graphs of the methods compiled besides ``forward`` (``@jit.export``)."""
        return dict(self._methods)

    def with_graph(self, graph: Graph) -> ScriptModule:
        """A ScriptModule running ``graph`` on this one's (shared) parameters and buffers."""
        out = type(self)(graph, name=self._name, methods=self._methods)
        out._mirror(self)
        return self._derive(out)

    def save(self, f: Any) -> None:
        """Write the graph and its tensors to a path or a binary file object (no pickle;
        see ``jit.load``)."""
        _save(self, f)

    def extra_repr(self) -> str:
        return f"original_name={self._name}"

    def __repr__(self) -> str:
        """As PyTorch prints a traced or scripted module: a traced one under its original
        class's name, a scripted (or loaded) one as ``RecursiveScriptModule``;
        ``original_name=`` on a line of its own when it has submodules."""
        if self.__dict__.get("_function"):
            from .. import dtypes

            name = f"{dtypes.display_name}.jit.ScriptFunction"  # (torch's repr names it twice)
            return f"<{dtypes.display_name}.jit.{name} object at {hex(id(self))}>"
        name = "RecursiveScriptModule" if self._scripted else self._name
        children = [
            f"  ({name}): " + repr(child).replace("\n", "\n  ")
            for name, child in self._modules.items()
        ]
        if not children:
            return f"{name}({self.extra_repr()})"
        return f"{name}(\n  {self.extra_repr()}\n" + "\n".join(children) + "\n)"


class ScriptFunction(ScriptModule):
    """A scripted or traced plain function (``jit.script(f)``, ``jit.trace(f, x)``): what
    PyTorch returns as ``torch.jit.ScriptFunction``. It runs, prints and saves as a
    ``ScriptModule`` without parameters (here it is one, so every pass takes it)."""


def _shapes(inputs: tuple) -> tuple:
    return tuple(tuple(a.shape) if isinstance(a, Tensor) else None for a in inputs)


def _show_fixed(fixed: tuple) -> str:
    """``((N, 3, 4, 4),)`` for saved shapes whose batch dim (None) is any size N."""
    return str(tuple(None if s is None else tuple("N" if n is None else n for n in s)
                     for s in fixed)).replace("'N'", "N")  # fmt: skip


def _fits(shapes: tuple, fixed: tuple) -> bool:
    """Do input shapes fit the ones a graph is specialized to? ``None`` in a saved shape is
    a batch dim the graph computes from its input: any size, the same for every input."""
    if len(shapes) != len(fixed):
        return False
    batches = set()
    for got, want in zip(shapes, fixed, strict=True):
        if got is None or want is None or len(got) != len(want):
            if got != want:
                return False
            continue
        for n, w in zip(got, want, strict=True):
            if w is not None and n != w:
                return False
        batches.update(n for n, w in zip(got, want, strict=True) if w is None)
    return len(batches) <= 1


def _training_flags(module: Module) -> tuple:
    return tuple((prefix, m.training) for prefix, m in module.named_modules())


def _set_training_flags(module: Module, flags: tuple) -> None:
    wanted = dict(flags)
    for prefix, m in module.named_modules():
        if prefix in wanted:
            object.__setattr__(m, "training", wanted[prefix])


def _bind(graph: Graph, name: str, inputs: tuple, kwargs: dict, defaults: dict) -> tuple:
    """The arguments in the graph's order: keywords by name, missing ones from the
    function's defaults (as TorchScript binds a call)."""
    names = [v.name for v in graph.inputs]
    if not kwargs and len(inputs) >= len(names):
        return inputs
    values = list(inputs)
    kwargs = dict(kwargs)
    for n in names[: len(values)]:
        if n in kwargs:
            raise TypeError(f"{name}() got multiple values for argument '{n}'")
    for n in names[len(values) :]:
        if n in kwargs:
            values.append(kwargs.pop(n))
        elif n in defaults:
            values.append(defaults[n])
        else:
            raise TypeError(
                f"{name}() is missing value for argument '{n}': it takes {len(names)} inputs "
                f"({', '.join(names)}), but {len(inputs)} were given"
            )
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return tuple(values)


def _check_inputs(graph: Graph, name: str, inputs: tuple, defaults: dict) -> None:
    """The number and kinds of the arguments, as TorchScript checks them before running
    (None where the default is None: an Optional)."""
    expected = graph.inputs
    if len(inputs) != len(expected):
        names = ", ".join(v.name for v in expected)
        raise TypeError(
            f"{name}: this ScriptModule takes {len(expected)} inputs ({names}), but "
            f"{len(inputs)} were given"
        )
    for v, a in zip(expected, inputs, strict=True):
        if a is None and v.name in defaults and defaults[v.name] is None:
            continue
        if v.type == "Tensor":
            ok = isinstance(a, Tensor)
        elif v.type in _PYTHON_TYPES:
            ok = isinstance(a, _PYTHON_TYPES[v.type])
            ok = ok and not (isinstance(a, bool) and v.type != "bool")
        else:
            ok = True
        if not ok:
            raise TypeError(
                f"{name}() Expected a value of type '{v.type}' for argument '{v.name}' but "
                f"instead found type '{type(a).__name__}'."
            )


def save(m: Any, f: Any) -> None:
    """``jit.save(m, f)``: write a ScriptModule to a path or a binary file object (a JSON
    header and raw tensor bytes: no pickle)."""
    if not isinstance(m, ScriptModule):
        raise TypeError(
            f"jit.save: expected a ScriptModule (from jit.script or jit.trace), but got "
            f"{type(m).__name__}; save a plain Module's weights with "
            "minitorch.save(model.state_dict(), f)"
        )
    _save(m, f)


def load(f: Any, map_location: Any = None) -> ScriptModule:
    """Load a ScriptModule saved with ``jit.save`` (or ``ScriptModule.save``) from a path
    or a binary file object; no Python class is needed and nothing is unpickled."""
    loaded = read(f, map_location)
    module = ScriptModule(loaded.graph, name=loaded.name, methods=loaded.methods, scripted=True)
    object.__setattr__(module, "_defaults", loaded.defaults)
    object.__setattr__(module, "_fixed", loaded.traced_shapes)
    for prefix, original_name, training in loaded.modules:  # parents come first
        if prefix == "":
            object.__setattr__(module, "training", training)
            continue
        parent, leaf = module._owner(prefix)
        child = ScriptModule(None, name=original_name, scripted=True)
        object.__setattr__(child, "training", training)
        parent.add_module(leaf, child)
    for dotted, t in loaded.tensors.items():
        owner, leaf = module._owner(dotted)
        if isinstance(t, Parameter):
            owner.register_parameter(leaf, t)
        else:
            owner.register_buffer(leaf, t)
    return module
