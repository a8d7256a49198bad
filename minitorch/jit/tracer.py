"""``jit.trace``: run a function once and record every op it applies into a graph.

Every computation goes through ``Function.apply``, so an apply hook (see
``minitorch.function.register_apply_hook``) sees the whole program: the tracer maps each
tensor it has seen to the graph Value that holds it, and each op to a node. Tensors the
program did not receive as inputs are parameters/buffers of the module (``get_attr``
nodes) or constants (captured tensors, tensors created inside, such as ``zeros``).

What a trace cannot see is Python: an ``if`` on a tensor's value runs once, at trace time,
and only the branch taken is recorded. The tracer notices the moment a tensor becomes a
Python value (``bool(t)``, ``t.item()``, ``float(t)``, ...) and warns with a
``TracerWarning`` pointing at that line, as PyTorch does.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autograd import is_grad_enabled
from ..function import register_apply_hook
from ..hooks import RemovableHandle
from ..state import conversion_hooks
from ..tensor import Tensor
from . import recording
from .ir import Graph, Value, inline_graph
from .ops import op_name
from .probe import longer_inputs, probing

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

_CONVERSION_WORDS = {
    "bool": "a Python boolean",
    "int": "a Python integer",
    "float": "a Python float",
    "item": "a Python number",
    "tolist": "a Python list",
    "numpy": "a NumPy array",
}


class TracerWarning(Warning):
    """The trace may not generalize: a tensor's value flowed into Python."""


class TracingCheckError(RuntimeError):
    """``check_inputs`` found an input on which the trace does not match the function."""


class NotTensors(TypeError):  # noqa: N818 - PyTorch-style name of the condition
    """The traced function returned something other than tensors; ``out`` is what it
    returned (the trace ran it once), ``what`` says what that was."""

    def __init__(self, message: str, out: Any, what: str) -> None:
        super().__init__(message)
        self.out, self.what = out, what


def user_frame() -> Any:
    """The innermost stack frame outside the minitorch package (the user's code)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def user_line() -> str:
    """``"model.py:12"``: where, in the user's code, the current op was called from."""
    frame = user_frame()
    if frame is None:
        return ""
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


class Break:
    """A point where a traced tensor became a Python value (``kind``), and what it became."""

    __slots__ = ("position", "value", "kind", "result", "line")

    def __init__(self, position: int, value: Value, kind: str, result: Any, line: str) -> None:
        self.position, self.value, self.kind = position, value, kind
        self.result, self.line = result, line


class Tracer:
    """Records the ops applied in this thread into ``self.graph``.

    ``attrs`` maps ``id(tensor)`` to a name for the module's parameters and buffers, which
    become ``get_attr`` nodes; other unseen tensors become ``constant`` nodes.
    """

    def __init__(self, attrs: dict[int, tuple[str, Tensor]] | None = None) -> None:
        self.graph = Graph()
        self.attrs = attrs or {}
        self.values: dict[int, Value] = {}
        self.tensors: dict[int, Tensor] = {}  # keeps every seen tensor alive: ids stay unique
        self.breaks: list[Break] = []
        self.thread = threading.get_ident()
        self.paused = 0  # > 0: a scripted module inside the trace is running its own graph

    # --- tensors <-> values -------------------------------------------------------------
    def bind(self, t: Tensor, value: Value) -> None:
        self.values[id(t)] = value
        self.tensors[id(t)] = t

    def add_input(self, t: Tensor, name: str) -> Value:
        value = self.graph.add_input(t, name)
        self.bind(t, value)
        return value

    def value_of(self, t: Tensor) -> Value:
        """The Value holding ``t``; a new get_attr or constant node for a tensor not seen yet."""
        value = self.values.get(id(t))
        if value is not None and self.tensors[id(t)] is t:
            return value
        g = self.graph
        if id(t) in self.attrs:
            name = self.attrs[id(t)][0]
            value = g.new_value(t, f"self.{name}")
            g.create("get_attr", (name,), outputs=[value])
        else:
            value = g.new_value(t, "const")
            g.create("constant", (t,), outputs=[value])
        self.bind(t, value)
        return value

    def arg(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            return self.value_of(a)
        if isinstance(a, tuple):
            return tuple(self.arg(x) for x in a)
        if isinstance(a, list):
            return [self.arg(x) for x in a]
        return a

    # --- the hooks ----------------------------------------------------------------------
    def on_apply(self, cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        vargs = tuple(self.arg(a) for a in args)
        vkwargs = {k: self.arg(v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [self.graph.new_value(o) for o in outs]
        self.graph.create(op_name(cls), vargs, vkwargs, values, target=cls, line=user_line())
        for o, v in zip(outs, values, strict=True):
            self.bind(o, v)

    def on_conversion(self, t: Tensor, kind: str, result: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        value = self.value_of(t)
        frame = user_frame()
        line = (
            ""
            if frame is None
            else f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        )
        self.breaks.append(Break(len(self.graph.nodes), value, kind, _plain(result), line))
        message = (
            f"Converting a tensor to {_CONVERSION_WORDS.get(kind, 'a Python value')} might cause "
            "the trace to be incorrect. We can't record the data flow of Python values, so "
            "this value will be treated as a constant in the future. This means that the "
            "trace might not generalize to other inputs!"
        )
        if frame is not None:
            warnings.warn_explicit(
                message,
                TracerWarning,
                frame.f_code.co_filename,
                frame.f_lineno,
                module=frame.f_globals.get("__name__", "__main__"),
            )
        else:
            warnings.warn(message, TracerWarning, stacklevel=2)

    def inline(self, graph: Graph, inputs: Sequence[Any], attrs: dict, out: Any) -> None:
        """A scripted (or traced) module ran inside this trace: record a copy of its graph
        -- its ``If`` and ``Loop`` nodes included, so its control flow stays live, as
        PyTorch's hybrid frontend calls the scripted code -- instead of the ops the run
        took. ``attrs``: its parameters by the names its ``get_attr`` nodes use; ``out``:
        what the run returned (bound to the copy's outputs)."""
        args = [self.arg(a) if isinstance(a, Tensor) else self._constant(a) for a in inputs]
        nodes, outputs = inline_graph(self.graph, graph, args, lambda n: self.value_of(attrs[n]))
        line = user_line()
        for node in nodes:
            node.line = node.line or line
            self.graph.append(node)
        outs = out if isinstance(out, tuple) else (out,)
        for o, v in zip(outs, outputs, strict=True):
            if isinstance(o, Tensor):
                self.bind(o, v)

    def _constant(self, x: Any) -> Value:
        value = self.graph.new_value(x, "const")
        self.graph.create("constant", (x,), outputs=[value])
        return value

    def set_outputs(self, out: Any) -> None:
        if isinstance(out, (tuple, list)):
            self.graph.tuple_output = True
            items = list(out)
        else:
            items = [out]
        for item in items:
            if not isinstance(item, Tensor):
                what = type(out).__name__ if out is not item else type(item).__name__
                raise NotTensors(
                    f"trace: the traced function must return tensors (or a tuple of tensors), "
                    f"got {type(item).__name__}",
                    out,
                    f"a {what}" if item is not out else f"a {what} ({_short(item)})",
                )
        self.graph.outputs = [self.value_of(t) for t in items]


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


def _plain(x: Any) -> Any:
    return x.copy() if isinstance(x, np.ndarray) else x


def attr_table(module: Any) -> dict[int, tuple[str, Tensor]]:
    """``id(tensor) -> (dotted name, tensor)`` for a module's parameters and buffers."""
    if module is None:
        return {}
    table: dict[int, tuple[str, Tensor]] = {}
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        if t is not None:
            table.setdefault(id(t), (name, t))
    return table


def input_names(fn: Callable, count: int) -> list[str]:
    """Names for the graph inputs: the function's parameter names where it has them."""
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input{i}" for i in range(count)]


def record(
    fn: Callable, inputs: Sequence[Tensor], names: Sequence[str], attrs: dict
) -> tuple[Graph, Any, list[Break]]:
    """Run ``fn(*inputs)`` under a tracer: the graph, the eager output and the breaks."""
    tracer = Tracer(attrs)
    for t, name in zip(inputs, names, strict=True):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"trace: example inputs must be tensors, but input {name!r} is a "
                f"{type(t).__name__}; bake Python values into the function instead"
            )
        tracer.add_input(t, name)

    modes: set[bool] = {is_grad_enabled()}

    def on_apply(cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        if not tracer.paused and threading.get_ident() == tracer.thread:
            modes.add(is_grad_enabled())
            tracer.on_apply(cls, args, kwargs, out)

    def on_conversion(t: Tensor, kind: str, result: Any) -> None:
        if not tracer.paused:
            tracer.on_conversion(t, kind, result)

    apply_handle = register_apply_hook(on_apply)
    conversion_handle = RemovableHandle(conversion_hooks, on_conversion)
    recording.push(tracer)
    try:
        out = fn(*inputs)
    finally:
        recording.pop(tracer)
        apply_handle.remove()
        conversion_handle.remove()
    tracer.set_outputs(out)
    tracer.graph.grad_modes = modes  # more than one: the code switched autograd inside
    return tracer.graph, out, tracer.breaks


def trace(
    fn: Any,
    example_inputs: Any,
    check_inputs: Sequence[Any] | None = None,
    check_tolerance: float = 1e-5,
) -> Any:
    """Trace a function or Module on example inputs into a ``ScriptModule``.

    ``check_inputs``: more input tuples to re-trace on; a graph that differs from the
    first trace (a data-dependent branch) or outputs that differ from eager raise
    ``TracingCheckError``.
    """
    from ..nn import Module
    from .module import ScriptFunction, ScriptModule

    if not callable(fn):
        raise TypeError(
            f"trace: expected a function or a Module to trace, but got {type(fn).__name__} "
            f"{fn!r:.40}"
        )
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    module = fn if isinstance(fn, Module) else None
    forward = module.forward if module is not None else fn
    _check_arity(forward, len(inputs), _name_of(fn))
    names = input_names(forward, len(inputs))
    attrs = attr_table(module)
    graph, _, _ = record(fn, inputs, names, attrs)
    kind = ScriptModule if module is not None else ScriptFunction
    traced = kind(graph, {name: t for name, t in attrs.values()}, name=_name_of(fn), source=module)
    object.__setattr__(traced, "_retrace", Retrace(fn, names, attrs, inputs, _name_of(fn)))
    object.__setattr__(traced, "_function", module is None)  # (prints as jit.ScriptFunction)
    for check in check_inputs or ():
        check = check if isinstance(check, tuple) else (check,)
        _check(fn, traced, graph, check, names, attrs, check_tolerance)
    return traced


class Retrace:
    """A trace's sizes, kept live: PyTorch's tracer records ``x.size(0)`` as an op, so its
    graph runs at other input sizes; here ``x.shape[0]`` is a Python number the graph holds.
    Called at new input shapes, a traced module traces its function again: when only the
    constants differ (``view(2, -1)`` became ``view(4, -1)``), the sizes were baked in and
    the new graph runs those shapes; when the ops are the same, or differ (a branch, which
    PyTorch's trace bakes in too), the first graph runs."""

    def __init__(self, fn: Callable, names: Sequence[str], attrs: dict, inputs: tuple, name: str):
        self.fn, self.names, self.attrs, self.name = fn, list(names), attrs, name
        self.key = shapes_of(inputs)
        self.example = inputs
        self.graphs: dict[tuple, Graph] = {}
        self.warned = False

    def holds_sizes(self, traced: Graph, longer: Graph | None = None) -> bool:
        """Does the graph hold the traced sizes (so that it runs those shapes only)? The
        function is traced once more with every input one row longer (its first row
        repeated), as ``onnx.export`` checks a dynamic batch (``longer``: that trace,
        when the caller has it already)."""
        if not all(isinstance(t, Tensor) and t.dim() >= 1 for t in self.example):
            return True
        if longer is None:
            try:
                (longer,) = self.longer_traces(traced, (1,))
            except Exception:  # noqa: BLE001 - it can't run one row longer: sizes are fixed
                return True
        return _ops(longer) != _ops(traced) or _constants(longer) != _constants(traced)

    def longer_traces(self, traced: Graph, extras: Sequence[int]) -> list[Graph]:
        """The function traced again with every input ``n`` rows longer (its first row
        repeated), for each ``n`` in ``extras``: probes, which change no state."""
        graphs = []
        with probing(self.attrs, traced), warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            for n in extras:
                longer = longer_inputs(self.example, n)
                graphs.append(record(self.fn, longer, self.names, self.attrs)[0])
        return graphs

    def graph_for(self, inputs: tuple, traced: Graph) -> tuple[Graph, Any]:
        """The graph to run ``inputs`` on, and (the first time at new shapes, when the
        function was traced again) what that run returned: this call's result, so the
        function runs once per call, its side effects (BatchNorm's statistics) too."""
        key = shapes_of(inputs)
        if key == self.key:
            return traced, None
        if key in self.graphs:
            return self.graphs[key], None
        graph, out = self._again(inputs, traced, key)
        self.graphs[key] = graph
        return graph, out

    def _again(self, inputs: tuple, traced: Graph, key: tuple) -> tuple[Graph, Any]:
        from .recording import current_tracer

        outer = current_tracer()
        if outer is not None:
            outer.paused += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TracerWarning)
                graph, out, _ = record(self.fn, inputs, self.names, self.attrs)
        except Exception:  # noqa: BLE001 - it fails at these shapes: the graph says where
            return traced, None
        finally:
            if outer is not None:
                outer.paused -= 1
        if _ops(graph) != _ops(traced) or _constants(graph) == _constants(traced):
            return traced, out
        if not self.warned:
            self.warned = True
            frame = user_frame()
            message = (
                f"{self.name}: the trace read input sizes as Python numbers (x.shape, "
                f"x.size()), so its graph holds the sizes it was traced at, {self.key}; traced "
                f"again for the input shapes {key} (a saved copy runs the traced sizes only)"
            )
            if frame is None:
                warnings.warn(message, TracerWarning, stacklevel=2)
            else:
                warnings.warn_explicit(
                    message, TracerWarning, frame.f_code.co_filename, frame.f_lineno
                )
        return graph, out


def shapes_of(inputs: Sequence[Any]) -> tuple:
    return tuple(tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__ for t in inputs)


def _ops(graph: Graph) -> list[str]:
    return [n.op for n in graph.walk()]


def _constants(graph: Graph) -> list:
    """The constant arguments of every node, comparable across traces (tensors by value)."""

    def key(a: Any) -> Any:
        if isinstance(a, Value):
            return "%"
        if isinstance(a, Tensor):
            a = a.detach().numpy()
        if isinstance(a, np.ndarray):
            return ("array", a.shape, str(a.dtype), a.tobytes())
        if isinstance(a, (tuple, list)):
            return (type(a).__name__, tuple(key(x) for x in a))
        return repr(a)

    return [
        (tuple(key(a) for a in n.args), tuple((k, key(v)) for k, v in n.kwargs.items()))
        for n in graph.walk()
    ]


def _check_arity(fn: Callable, count: int, name: str) -> None:
    """The example inputs fill the function's positional parameters: say so when they don't."""
    try:
        inspect.signature(fn).bind(*range(count))
    except TypeError as err:
        raise TypeError(
            f"trace: {name} cannot be called with the {count} example input(s) given: {err}"
        ) from None
    except ValueError:  # no signature (a builtin): let the call itself tell
        pass


def _name_of(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _check(fn, traced, graph, inputs, names, attrs, tolerance) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        again, eager, _ = record(fn, inputs, names, attrs)
    first, second = [n.op for n in graph.nodes], [n.op for n in again.nodes]
    if first != second:
        at = next(
            (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), len(first)
        )
        raise TracingCheckError(
            "Graphs differed across invocations! The trace on the check inputs recorded "
            f"different ops from node {at} on: {first[at : at + 4]} vs {second[at : at + 4]}. "
            "The function probably has data-dependent control flow; script it instead "
            "(jit.script) or keep the branch out of the traced part."
        )
    got = traced(*inputs)
    got, eager = _as_tuple(got), _as_tuple(eager)
    for i, (a, b) in enumerate(zip(got, eager, strict=True)):
        if not np.allclose(a.detach().numpy(), b.detach().numpy(), rtol=tolerance, atol=tolerance):
            raise TracingCheckError(
                f"Trace had nondeterministic nodes or does not generalize: output {i} of the "
                "trace differs from the function's on the check inputs"
            )


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)
