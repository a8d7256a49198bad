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

from ..function import register_apply_hook
from ..hooks import RemovableHandle
from ..state import conversion_hooks
from ..tensor import Tensor
from .ir import Graph, Value
from .ops import op_name

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

    def set_outputs(self, out: Any) -> None:
        if isinstance(out, (tuple, list)):
            self.graph.tuple_output = True
            items = list(out)
        else:
            items = [out]
        for item in items:
            if not isinstance(item, Tensor):
                raise TypeError(
                    f"trace: the traced function must return tensors (or a tuple of tensors), "
                    f"got {type(item).__name__}"
                )
        self.graph.outputs = [self.value_of(t) for t in items]


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
    apply_handle = register_apply_hook(tracer.on_apply)
    conversion_handle = RemovableHandle(conversion_hooks, tracer.on_conversion)
    try:
        out = fn(*inputs)
    finally:
        apply_handle.remove()
        conversion_handle.remove()
    tracer.set_outputs(out)
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
    from .module import ScriptModule

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
    traced = ScriptModule(graph, {name: t for name, t in attrs.values()}, name=_name_of(fn))
    for check in check_inputs or ():
        check = check if isinstance(check, tuple) else (check,)
        _check(fn, traced, graph, check, names, attrs, check_tolerance)
    return traced


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
