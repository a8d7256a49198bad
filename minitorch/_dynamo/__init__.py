"""``minitorch._dynamo``: ``torch._dynamo.explain`` over ``minitorch.compile`` (chapter 05).

``explain(fn)(*args)`` compiles ``fn``, runs it once on ``args`` and reports what the
compile did, in the shape of PyTorch's ``ExplainOutput``: the graphs the run went through
(chapter 05's graphs, cut at each graph break), how many breaks and why, and the ops of
each graph. A graph break here is where a tensor became a Python value (``if x.sum() >
0``, ``x.item()``), as in PyTorch; the ops counted are the ``Function`` ops a graph holds
(PyTorch counts its FX graph's ``call_function`` nodes, so a ``x.sum()`` method call it
leaves out is counted here).
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ..jit.compile import CompiledFunction, Piece
from ..jit.compile import compile as _compile

#: ``torch._dynamo.config``: settings programs assign (accepted; minitorch's compile reads
#: ``cache_size_limit`` from its own argument).
config = SimpleNamespace(suppress_errors=False, cache_size_limit=8, verbose=False)

_REASONS = {
    "bool": "generic_jump TensorVariable()",
    "item": "Tensor.item",
    "int": "Tensor to a Python int",
    "float": "Tensor to a Python float",
    "tolist": "Tensor.tolist",
    "numpy": "Tensor.numpy",
}


@dataclass
class GraphCompileReason:
    """Why a graph ended: ``reason``, and where in the user's code (``user_stack``)."""

    reason: str
    user_stack: list[traceback.FrameSummary]
    graph_break: bool = True


@dataclass
class ExplainOutput:
    """What ``explain(fn)(*args)`` returns (PyTorch's fields; prints as PyTorch's does)."""

    graphs: list[Any]
    graph_count: int
    graph_break_count: int
    break_reasons: list[GraphCompileReason]
    op_count: int
    ops_per_graph: list[list[str]] | None = None
    out_guards: list[Any] | None = field(default=None)
    compile_times: str | None = None

    def __str__(self) -> str:
        out = f"Graph Count: {self.graph_count}\n"
        out += f"Graph Break Count: {self.graph_break_count}\n"
        out += f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for i, reason in enumerate(self.break_reasons):
            out += f"  Break Reason {i + 1}:\n    Reason: {reason.reason}\n    User Stack:\n"
            out += "".join(f"      {frame}\n" for frame in reason.user_stack)
        if self.ops_per_graph is not None:
            out += "Ops per Graph:\n"
            for i, ops in enumerate(self.ops_per_graph):
                out += f"  Ops {i + 1}:\n" + "".join(f"    {op}\n" for op in ops)
        if self.out_guards is not None:
            out += "Out Guards:\n"
            for i, guard in enumerate(self.out_guards):
                out += f"  Guard {i + 1}:\n    {guard}\n"
        if self.compile_times is not None:
            out += f"Compile Times: {self.compile_times}\n"
        return out


def _frame(line: str, name: str) -> list[traceback.FrameSummary]:
    filename, _, lineno = line.rpartition(":")
    if not lineno.isdigit():
        return []
    return [traceback.FrameSummary(filename, int(lineno), name, lookup_line=False)]


def _path(compiled: CompiledFunction) -> list[Piece]:
    """The pieces the one call ran through, first to last."""
    if not compiled.entries:
        return []
    pieces = [compiled.entries[0].root]
    while pieces[-1].children:
        pieces.append(next(iter(pieces[-1].children.values())))
    return pieces


def explain(f: Callable, *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(fn)(*args, **kwargs)``: compile ``fn``, run it once, and say how it was
    captured (an ``ExplainOutput``). The older ``explain(fn, *args)`` form runs at once."""

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = _compile(f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled(*args, **kwargs)
        name = getattr(compiled.forward, "__name__", type(f).__name__)
        pieces = _path(compiled)
        ops = [[op for op in p.ops if op not in ("get_attr", "constant")] for p in pieces]
        reasons = [
            GraphCompileReason(
                _REASONS.get(p.break_.kind, p.break_.kind), _frame(p.break_.line, name)
            )
            for p in pieces
            if p.break_ is not None
        ]
        if compiled.eager_reason is not None:
            reasons.append(GraphCompileReason(compiled.eager_reason, [], graph_break=False))
        return ExplainOutput(
            graphs=[p.graph for p in pieces],
            graph_count=len(pieces),
            graph_break_count=len(pieces) - 1 if pieces else 0,
            break_reasons=reasons,
            op_count=sum(len(o) for o in ops),
            ops_per_graph=ops,
        )

    if extra_args or extra_kwargs:
        warnings.warn(
            "explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.",
            FutureWarning,
            stacklevel=2,
        )
        return inner(*extra_args, **extra_kwargs)
    return inner


def reset() -> None:
    """``torch._dynamo.reset``: minitorch keeps each compiled function's cache on the
    function itself, so there is no global cache to clear."""


__all__ = ["ExplainOutput", "GraphCompileReason", "config", "explain", "reset"]
