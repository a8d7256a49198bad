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


@piece("05.7", "first_failed_guard", site="minitorch.compile: which guard fails, and why")
def _guards(mine: Any, first_failed_guard: Any) -> None:
    """``minitorch.compile`` checks the learner's guard in place of its own on grad mode and
    on each positional argument (a tensor's type, dims, sizes, dtype and requires_grad; a
    Python value's type and value); its other guards (autocast, a tensor's device and
    strides, keywords, the module's flags, the globals the code reads, captured constants)
    stay the package's and run after it."""
    import copy
    import importlib

    from ..autograd import is_grad_enabled
    from ..jit.read_guards import Guard
    from ..tensor import Tensor

    learner = mine.wrap("05.7", "first_failed_guard", first_failed_guard)
    compiled = importlib.import_module("minitorch.jit.compile")  # (jit.compile: the function)
    package = compiled.CompiledFunction._guards

    def _guards(self: Any, args: tuple, kwargs: dict, graph: Any, reads: Any = None) -> list:
        guards = package(self, args, kwargs, graph, reads)
        names = self._input_names(len(args))
        entries, replaced = [], {f"is_grad_enabled() == {is_grad_enabled()}"}
        for name, a in zip(names, args, strict=True):
            if isinstance(a, Tensor):
                shape = tuple(a.shape)
                entries.append(
                    {"name": name, "kind": "tensor", "shape": shape, "dtype": a.dtype.name,
                     "requires_grad": a.requires_grad}
                )  # fmt: skip
                replaced |= {
                    f"{name} is a Tensor",
                    f"{name}.shape == {shape}",
                    f"{name}.dtype == {a.dtype.name}",
                    f"{name}.requires_grad == {a.requires_grad}",
                }
            else:
                entries.append({"name": name, "kind": "value", "value": copy.deepcopy(a)})
                replaced.add(f"{name} == {a!r}")
        spec = {"grad_enabled": is_grad_enabled(), "args": entries}

        def check(call_args: tuple, call_kwargs: dict) -> str | None:
            if len(call_args) != len(entries):
                return f"{len(call_args)} positional arguments, traced with {len(entries)}"
            problem = learner(spec, list(call_args), is_grad_enabled())
            return None if problem is None else str(problem)

        kept = [g for g in guards if g.description not in replaced]
        return [Guard("your first_failed_guard (05.7)", check), *kept]

    mine.patches.replace(compiled.CompiledFunction, "_guards", _guards)
