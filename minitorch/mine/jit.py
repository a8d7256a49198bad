"""Chapter 05's pieces in the framework: the tracer's recording, the interpreter's loop, the
passes and the fusion grouping that ``jit.trace``, ``optimize`` and ``compile`` run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..jit import fusion, interpreter, passes, tracer
from ..jit.ir import Graph, as_graph, mutated_values
from .patching import named
from .pieces import piece


@piece("05.1", "record", site="jit.trace and compile: every op recorded into the graph")
def _record(mine: Any, record: Any) -> None:
    learner = mine.wrap("05.1", "record", record)

    def on_apply(self: Any, cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        if tracer.threading.get_ident() != self.thread:
            return  # another thread's ops are not this trace's
        first = len(self.graph.nodes)
        learner(self, cls, args, kwargs, out)
        line = tracer.user_line()
        for node in self.graph.nodes[first:]:
            node.line = node.line or line

    mine.patches.replace(tracer.Tracer, "on_apply", on_apply)


def _has_blocks(graph: Any) -> bool:
    return any(node.blocks for node in graph.walk())


@piece("05.2", "run_nodes", site="running a traced or scripted graph (ScriptModule, compile)")
def _run(mine: Any, run_nodes: Any) -> None:
    learner = mine.wrap("05.2", "run_nodes", run_nodes)
    package = interpreter.run_block

    def run_block(block: Any, env: dict, attrs: Any) -> list:
        plain = all(
            node.op in ("constant", "get_attr") or isinstance(node.target, type)
            for node in block.nodes
        )
        if not plain:
            mine.package_ran("05.2", "control flow or fused nodes")
            return package(block, env, attrs)
        graph = SimpleNamespace(inputs=list(env), nodes=block.nodes, outputs=block.outputs)
        return list(learner(graph, list(env.values()), attrs))

    mine.patches.replace(interpreter, "run_block", run_block)


def _install_pass(mine: Any, exercise: str, name: str, learner_pass: Any) -> None:
    learner = mine.wrap(exercise, name, learner_pass)
    package = getattr(passes, name)

    def run(graph: Any) -> Graph:
        g = as_graph(graph, name)
        if _has_blocks(g):
            mine.package_ran(exercise, "a graph with control flow (script's If/Loop)")
            return package(g)
        out = learner(g)
        if not isinstance(out, Graph):
            raise TypeError(
                f"{name} (exercise {exercise}) returned {type(out).__name__}, not a Graph"
            )
        return out

    mine.patches.replace(passes, name, run)


@piece("05.3", "eliminate_dead_code", site="jit.optimize and compile: dead-code elimination")
def _dce(mine: Any, eliminate_dead_code: Any) -> None:
    _install_pass(mine, "05.3", "eliminate_dead_code", eliminate_dead_code)


@piece("05.4", "fold_constants", site="jit.optimize and compile: constant folding")
def _fold(mine: Any, fold_constants: Any) -> None:
    _install_pass(mine, "05.4", "fold_constants", fold_constants)


@piece(
    "05.5",
    "eliminate_common_subexpressions",
    site="jit.optimize and compile: common-subexpression elimination",
)
def _cse(mine: Any, eliminate_common_subexpressions: Any) -> None:
    _install_pass(mine, "05.5", "eliminate_common_subexpressions", eliminate_common_subexpressions)


@piece("05.6", "group_elementwise", site="fuse_elementwise and compile: which ops fuse together")
def _group(mine: Any, group_elementwise: Any) -> None:
    learner = mine.wrap("05.6", "group_elementwise", group_elementwise)
    package = fusion.group_elementwise

    def groups(graph: Graph) -> list:
        found = [list(g) for g in learner(graph)]
        mutated = mutated_values(graph)
        if not all(fusion.fusible(node, mutated) for g in found for node in g):
            # The notebook's fusible() is simpler than the fuser's: in-place inputs, kwargs
            # and int tensors can't be compiled into a kernel.
            mine.package_ran("05.6", "ops the fuser cannot compile")
            return package(graph)
        return found

    mine.patches.replace(fusion, "group_elementwise", groups)
    fuse = fusion.fuse_elementwise
    mine.patches.replace(
        fusion, "fuse_elementwise", named("05.6", "group_elementwise's groups", fuse)
    )
