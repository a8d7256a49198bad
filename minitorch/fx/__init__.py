"""``minitorch.fx``: symbolic tracing into a graph you can rewrite (``torch.fx``).

``symbolic_trace(model)`` runs ``forward`` on ``Proxy`` values and returns a
``GraphModule``: its ``graph`` lists the program's calls as ``Node``s (``placeholder``,
``get_attr``, ``call_function``, ``call_method``, ``call_module``, ``output``); a pass edits
them (``replace_all_uses_with``, ``inserting_after``, ``erase_node``,
``eliminate_dead_code``), ``recompile()`` turns the graph back into ``forward``'s Python
code, and ``Interpreter``/``Transformer`` run or rewrite it node by node.

Why a graph of its own, next to chapter 05's IR (``minitorch.jit.ir``)? The two answer
different questions. Chapter 05's graph is a compiler's: SSA ``Value``s apart from the
``Node``s that define them (a node may have several outputs), sub-blocks for ``If`` and
``Loop``, and ops at ``Function.apply``'s level, so it can be fused, saved and run without
Python. FX's graph is a Python program's: a node *is* its value and keeps its users, it
is an ordered list a loop may edit in place, and its nodes are the source's own calls
(``self.conv(x)``, ``torch.relu``) with live Python targets, printed back as Python.
Putting FX's node-is-value and user lists onto chapter 05's Node/Value split would make
either API read worse. What they share is the idea (record, rewrite, run: chapter 05's
sections 2, 5 and 6) and the shape of the code: ``Interpreter.run`` is chapter 05's
``run_graph`` loop, ``eliminate_dead_code`` its DCE, ``lint`` its lint, and
``GraphModule.code`` its ``python_print``.
"""

from . import _symbolic_trace, passes, subgraph_rewriter
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy, TraceError, wrap
from .tracer import Tracer, symbolic_trace

__all__ = [
    "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "TraceError", "Tracer",
    "Transformer", "_symbolic_trace", "map_arg", "passes", "subgraph_rewriter",
    "symbolic_trace", "wrap",
]  # fmt: skip
