"""Probes of a traced function: runs at other sizes, to see what moves with them, that
leave no trace of having run."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .ir import Graph


def longer_inputs(example: tuple, extra: int) -> tuple:
    """The example inputs with ``extra`` more rows (their first row repeated)."""
    from ..ops import cat

    return tuple(cat([t.detach(), t.detach()[:1].expand(extra, *t.shape[1:])]) for t in example)


class probing:  # noqa: N801 - a context manager, used like a function
    """Runs of a traced function that are probes, not calls (at other sizes, to see what
    moves): autograd records nothing, and the generator and every tensor the trace read as
    a buffer or a constant (BatchNorm's statistics, also where a plain function closes
    over the module) are put back as they were."""

    def __init__(self, attrs: dict, graph: Graph) -> None:
        from ..nn import Parameter

        seen = {id(t): t for _, t in attrs.values() if not isinstance(t, Parameter)}
        for node in graph.walk():
            if node.op == "constant" and isinstance(node.args[0], Tensor):
                seen.setdefault(id(node.args[0]), node.args[0])
        self.tensors = list(seen.values())

    def __enter__(self) -> None:
        from .. import random
        from ..autograd import no_grad

        self.state = random.default_generator.get_state()
        self.saved = [t.detach().clone() for t in self.tensors]
        self.no_grad = no_grad()
        self.no_grad.__enter__()

    def __exit__(self, *exc: Any) -> None:
        from .. import random

        self.no_grad.__exit__(*exc)
        random.default_generator.set_state(self.state)
        for t, saved in zip(self.tensors, self.saved, strict=True):
            if t.shape == saved.shape:
                t.detach().copy_(saved)
