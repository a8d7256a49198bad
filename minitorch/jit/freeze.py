"""``jit.freeze`` and ``jit.optimize_for_inference``: a ScriptModule for inference only.

Freezing copies the module's parameters and buffers into its graph as constants (its
``get_attr`` nodes become ``constant`` nodes), so the passes can fold what depends on the
weights alone (a transpose, a scale) ahead of time, as ``torch.jit.freeze`` does. The
frozen module has no parameters: training the original no longer changes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .ir import Graph
from .module import ScriptModule
from .passes import optimize


def _frozen_graph(graph: Graph, values: dict, keep: set[str]) -> Graph:
    g = graph.copy()
    for node in g.walk():
        if node.op == "get_attr" and node.args[0] not in keep:
            node.op, node.args, node.target = (
                "constant",
                (values[node.args[0]].detach().clone(),),
                None,
            )
    return g


def freeze(
    mod: Any, preserved_attrs: Sequence[str] | None = None, optimize_numerics: bool = True
) -> ScriptModule:
    """A copy of ``mod`` (a traced or scripted module in eval mode) with its parameters and
    buffers inlined as constants and its graph optimized. ``preserved_attrs``: parameters or
    buffers (dotted names) to keep as attributes of the frozen module."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use jit.script or jit.trace to "
            f"script your 'nn.Module' (got {type(mod).__name__})."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    values = mod.attr_values()
    keep = set(preserved_attrs or ())
    unknown = sorted(k for k in keep if k not in values and k not in mod.methods)
    if unknown:
        raise RuntimeError(
            f"jit.freeze: preserved_attrs {unknown} are neither parameters, buffers nor "
            f"methods of {mod.original_name} (it has {sorted(values)[:8]})"
        )

    def frozen(graph: Graph) -> Graph:
        g = _frozen_graph(graph, values, keep)
        return optimize(g) if optimize_numerics else g

    out = ScriptModule(
        frozen(mod.graph),
        {k: v for k, v in values.items() if k in keep},
        name=mod.original_name,
        methods={k: frozen(g) for k, g in mod.methods.items()},
    )
    object.__setattr__(out, "training", False)
    object.__setattr__(out, "_frozen", True)
    return mod._derive(out)


def optimize_for_inference(mod: Any, other_methods: Sequence[str] | None = None) -> ScriptModule:
    """Freeze ``mod`` (putting it in eval mode first, as PyTorch does) unless it is frozen
    already, and optimize its graph for running: folding, dead code, CSE, fusion."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use jit.script or "
            f"jit.trace to script your 'nn.Module' (got {type(mod).__name__})."
        )
    if not mod.__dict__.get("_frozen", False):
        mod = freeze(mod.eval(), preserved_attrs=other_methods)
    return mod
