"""``OnnxBuilder``: collects the ONNX nodes, initializers and names while a graph converts.

A converter (see ``symbolic.py``) never touches protobufs itself: it asks the builder for
the ONNX name of an IR Value (``b.name(v)``), for a constant (``b.const(array)``), and
emits nodes (``b.emit("Add", [a, c], [out])``). ``b.model()`` assembles the ModelProto.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..jit.ir import Node, Value
from ..tensor import Tensor


class OnnxExportError(RuntimeError):
    """The graph cannot be written as ONNX; the message names the op and the node."""


class UnsupportedOperatorError(OnnxExportError):
    """An op of the graph has no ONNX mapping."""


def where(node: Node) -> str:
    """``node %3 = foo(%2) (from model.py:12)``: the node and its source line, for messages."""
    line = f" (from {node.line})" if node.line else ""
    return f"node `{str(node).strip()}`{line}"


def np_dtype(value: Value) -> np.dtype:
    """The numpy dtype of a tensor Value (``float32`` where the trace did not record one)."""
    if value.dtype is None:
        return np.dtype(np.float32)
    if value.dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(value.dtype)


class OnnxBuilder:
    """The ONNX graph under construction, for one opset version."""

    def __init__(self, onnx: Any, opset: int) -> None:
        self.onnx = onnx  # the onnx package, imported lazily by export()
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._names: dict[Value, str] = {}
        self._taken: set[str] = set()
        self._scalars: dict[tuple, str] = {}

    # --- names --------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A name no ONNX value of this graph has yet, based on ``hint``."""
        name, i = hint, 0
        while name in self._taken:
            i += 1
            name = f"{hint}_{i}"
        self._taken.add(name)
        return name

    def bind(self, value: Value, name: str | None = None) -> str:
        """Give an IR Value its ONNX name (its IR name unless ``name`` says otherwise)."""
        self._names[value] = self.fresh(name or value.name)
        return self._names[value]

    def alias(self, value: Value, name: str) -> None:
        """Let ``value`` be held by the existing ONNX name ``name`` (an initializer)."""
        self._names[value] = name

    def name(self, value: Value) -> str:
        """The ONNX name holding ``value`` (bound when its defining node converted)."""
        if value not in self._names:
            self.bind(value)
        return self._names[value]

    def out(self, node: Node, i: int = 0) -> str:
        return self.name(node.outputs[i])

    # --- constants ----------------------------------------------------------------------
    def const(self, array: Any, hint: str = "const") -> str:
        """An initializer holding ``array`` (a numpy array, Tensor or Python number)."""
        if isinstance(array, Tensor):
            array = array.detach().cpu().numpy()
        name = self.fresh(hint)
        array = np.asarray(array)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def ints(self, values: Sequence[int], hint: str = "shape") -> str:
        """An int64 1-d initializer (shapes, axes, pads): the form ONNX wants them in."""
        return self.scalar_like(tuple(int(v) for v in values), np.int64, hint)

    def scalar_like(self, value: Any, dtype: Any, hint: str = "scalar") -> str:
        """A constant of ``dtype`` (shared between the nodes that use the same one)."""
        key = (value, np.dtype(dtype).str)
        if key not in self._scalars:
            self._scalars[key] = self.const(np.asarray(value, dtype=dtype), hint)
        return self._scalars[key]

    def arg(self, a: Any, dtype: Any) -> str:
        """An argument as an ONNX name: a Value's name, else a ``dtype`` constant."""
        if isinstance(a, Value):
            return self.cast(a, dtype)
        if isinstance(a, (Tensor, np.ndarray)):
            return self.const(np.asarray(a if isinstance(a, np.ndarray) else a.numpy(), dtype))
        return self.scalar_like(a, dtype)

    def cast(self, value: Value, dtype: Any) -> str:
        """``value`` converted to ``dtype`` (a Cast node only where the dtypes differ)."""
        name = self.name(value)
        if np_dtype(value) == np.dtype(dtype):
            return name
        (out,) = self.emit(
            "Cast", [name], 1, hint=f"{name}_as_{np.dtype(dtype).name}", to=self.type_of(dtype)
        )
        return out

    def type_of(self, dtype: Any) -> int:
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    # --- nodes --------------------------------------------------------------------------
    def emit(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[str] | int,
        hint: str = "t",
        **attrs: Any,
    ) -> list[str]:
        """Append an ONNX node; ``outputs`` is a list of names or a count of fresh ones."""
        if isinstance(outputs, int):
            outputs = [self.fresh(f"{hint}_{op_type}") for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(
            self.onnx.helper.make_node(
                op_type, list(inputs), list(outputs), name=f"{op_type}_{len(self.nodes)}", **attrs
            )
        )
        return list(outputs)

    # --- the model ----------------------------------------------------------------------
    def value_info(self, value: Value, name: str, symbolic: dict[int, str] | None = None) -> Any:
        """The declared type of a graph input or output; ``symbolic`` names the dims whose
        size is left open (``{0: "batch"}``)."""
        dims: list[Any] = list(value.shape or [])
        for axis, dim_name in (symbolic or {}).items():
            dims[axis] = dim_name
        return self.onnx.helper.make_tensor_value_info(name, self.type_of(np_dtype(value)), dims)

    def model(
        self,
        inputs: list[tuple[Value, str]],
        outputs: list[tuple[Value, str]],
        name: str,
        dynamic_axes: dict[str, dict[int, str]] | None = None,
    ):
        helper = self.onnx.helper
        dynamic = dynamic_axes or {}
        graph = helper.make_graph(
            self.nodes,
            name,
            [self.value_info(v, n, dynamic.get(n)) for v, n in inputs],
            [self.value_info(v, n, dynamic.get(n)) for v, n in outputs],
            initializer=self.initializers,
        )
        return helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", self.opset)],
            producer_name="minitorch",
        )
