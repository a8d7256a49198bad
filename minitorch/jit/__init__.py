"""``minitorch.jit``: an IR, tracing and scripting into it, passes over it, and running,
saving and loading it without the Python source (chapter 05)."""

from .compile import CompiledFunction, Guard
from .compile import compile as compile  # noqa: A004 - torch.compile's name
from .freeze import freeze, optimize_for_inference
from .fusion import ElementwiseOp, FusedKernel, fuse_elementwise, group_elementwise
from .interpreter import InterpreterError, run_graph
from .ir import Block, Graph, Node, Value
from .lint import GraphLintError, lint
from .module import ScriptFunction, ScriptModule, load, save
from .passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    optimize,
)
from .script import ScriptError, export, script
from .serialize import JitLoadError
from .tracer import TracerWarning, TracingCheckError, trace
