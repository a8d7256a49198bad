"""``ShapeProp``: run a GraphModule and note each node's result as ``meta["tensor_meta"]``."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate


class TensorMetadata(NamedTuple):
    """What ShapeProp notes about a tensor result."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract(t: Tensor) -> TensorMetadata:
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, tuple(t.stride()), None, False, {})


class ShapeProp(Interpreter):
    """``ShapeProp(gm).propagate(*args)``: each node's ``meta["tensor_meta"]`` (and, on
    nested outputs, the same structure of them) and ``meta["type"]``."""

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = []

        def note(x: Any) -> Any:
            if isinstance(x, Tensor):
                found.append(True)
                return _extract(x)
            return x

        meta = map_aggregate(result, note)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        return super().run(*args)
