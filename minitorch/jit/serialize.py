"""``ScriptModule.save(path)`` / ``jit.load(path)``: a graph and its tensors, without pickle.

The file is an ordinary minitorch file (``minitorch.serialization``: a JSON header and
raw tensor bytes, checksummed), holding::

    {"format": "minitorch.jit", "version": 1, "name": "forward",
     "graph": {"inputs": [...], "nodes": [...], "outputs": [...], "tuple_output": false},
     "attrs": {"fc.weight": <tensor>, ...}, "parameters": ["fc.weight", ...],
     "modules": [["", "MLP", true], ["fc", "Linear", true], ...],
     "methods": {"name": <graph>, ...}}

(``modules``, the submodule tree, ``methods``, the ``@jit.export`` methods,
``defaults``, the arguments' default values, and ``traced_shapes``, the input shapes a
traced graph is specialized to, ``null`` for a batch dim it computes from its input, are
optional: files written before them load as they did.)

Every node is stored by its op *name* and constant arguments (numbers, tuples, slices,
dtypes, tensors); loading looks each name up among minitorch's own ops
(``ops.resolve``), so a file can only ever run minitorch's ops: no code is loaded from it,
and the module's Python class is not needed (nor imported) to run it.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from .. import serialization
from ..creation import from_numpy
from ..device import as_device
from ..device import device as _device
from ..dtypes import as_dtype
from ..dtypes import dtype as _dtype
from ..nn import Parameter
from ..serialization import SerializationError
from ..tensor import Tensor
from .dynamic_batch import generalize
from .fusion import ElementwiseOp, FusedKernel
from .ir import Block, Graph, Node, Value
from .lint import GraphLintError, lint
from .ops import ELEMENTWISE, STRUCTURAL, is_ref, resolve
from .rows import REDUCTIONS

FORMAT = "minitorch.jit"
VERSION = 1


class JitLoadError(SerializationError):
    """A file that is a readable minitorch file but not a loadable ScriptModule, and why."""


class Loaded(NamedTuple):
    """What a file holds: the graph (checked), its tensors by name, the module's name, the
    submodule tree as ``(prefix, original_name, training)`` and the other methods."""

    graph: Graph
    tensors: dict
    name: str
    modules: list
    methods: dict
    defaults: dict
    traced_shapes: tuple | None


# --- save -------------------------------------------------------------------------------
def save(module: Any, path: Any) -> None:
    """Write a ScriptModule (graph, parameters, buffers, submodule tree, exported methods)
    to ``path`` (a file name, written atomically, or a binary file object)."""
    attrs = module.attr_values()
    graph, traced_shapes = _saved_graph(module)
    obj = {
        "format": FORMAT,
        "version": VERSION,
        "name": module._name,
        "graph": _encode_block(graph, top=True),
        "attrs": attrs,
        "parameters": [k for k, v in attrs.items() if isinstance(v, Parameter)],
        "modules": [
            [prefix, getattr(m, "_name", type(m).__name__), bool(m.training)]
            for prefix, m in module.named_modules()
        ],
        "methods": {k: _encode_block(g, top=True) for k, g in module.methods.items()},
        "defaults": dict(module.__dict__.get("_defaults", {})),
        "traced_shapes": traced_shapes,
    }
    serialization.save(obj, path)


def _saved_graph(module: Any) -> tuple[Graph, list | None]:
    """The graph to save and the input shapes it is specialized to (None: any shapes).

    A trace whose code read sizes as Python numbers (``x.view(x.shape[0], -1)``, conv2d's
    reshapes) holds the sizes it was traced at. Where they only move with the batch, the
    saved graph computes them from the batch it is given (``dynamic_batch``) and runs any
    batch size (its shapes are saved with ``None`` for the batch); otherwise it keeps the
    traced sizes and refuses other shapes."""
    again = module.__dict__.get("_retrace")
    if again is None:
        fixed = module._fixed_shapes()
        return module.graph, None if fixed is None else [list(s) for s in fixed]
    try:
        (one_longer,) = again.longer_traces(module.graph, (1,))
    except Exception:  # noqa: BLE001 - it can't run one row longer: sizes are fixed
        return module.graph, [list(s) for s in again.key]
    if not again.holds_sizes(module.graph, one_longer):
        return module.graph, None
    general = generalize(again, module.graph, one_longer)
    if general is None:
        return module.graph, [list(s) for s in again.key]
    return general, [[None, *s[1:]] for s in again.key]


def _encode_value(v: Value) -> list:
    return [v.name, v.type, v.dtype, None if v.shape is None else list(v.shape)]


def _encode_block(block: Block, top: bool = False) -> dict:
    out = {
        "inputs": [_encode_value(v) for v in block.inputs],
        "nodes": [_encode_node(n) for n in block.nodes],
        "outputs": [v.name for v in block.outputs],
    }
    if top:
        out["tuple_output"] = bool(getattr(block, "tuple_output", False))
    return out


def _encode_node(node: Node) -> dict:
    if node.op not in STRUCTURAL and resolve(node.op) is not node.target:
        raise SerializationError(
            f"save: node {node.op} runs {node.target!r}, which is not one of minitorch's own "
            "ops (a Function defined outside minitorch?); such a graph can't be saved, "
            "because loading it would need that Python code"
        )
    out = {
        "op": node.op,
        "args": [_encode_arg(a) for a in node.args],
        "kwargs": {k: _encode_arg(v) for k, v in node.kwargs.items()},
        "outputs": [_encode_value(v) for v in node.outputs],
        "blocks": [_encode_block(b) for b in node.blocks],
    }
    if node.op == "fused":
        out["kernel"] = _encode_kernel(node.target)
    return out


def _encode_arg(a: Any) -> Any:
    if isinstance(a, Value):
        return {"value": a.name}
    if a is None or isinstance(a, (bool, int, float, str, Tensor)):
        return a
    if isinstance(a, tuple):
        return {"tuple": [_encode_arg(x) for x in a]}
    if isinstance(a, list):
        return {"list": [_encode_arg(x) for x in a]}
    if isinstance(a, slice):
        return {"slice": [_encode_arg(a.start), _encode_arg(a.stop), _encode_arg(a.step)]}
    if a is Ellipsis:
        return {"ellipsis": True}
    if isinstance(a, np.ndarray):
        return {"array": from_numpy(np.ascontiguousarray(a))}
    if isinstance(a, (np.integer, np.floating, np.bool_)):
        return a.item()
    if isinstance(a, _dtype):
        return {"dtype": a.name}
    if isinstance(a, np.dtype):
        return {"dtype": a.name}
    if isinstance(a, _device):
        return {"device": str(a)}
    raise SerializationError(f"save: can't save the graph constant {a!r} ({type(a).__name__})")


def _encode_kernel(k: FusedKernel) -> dict:
    def arg(a: Any) -> Any:
        if is_ref(a):
            return {a[0]: a[1]}
        return {"dims": list(a)} if isinstance(a, tuple) else a  # (a reduction's dims)

    out = {
        "name": k.name,
        "inputs": [[d, list(s)] for d, s in k.inputs],
        "ops": [[op.op, [arg(a) for a in op.args]] for op in k.ops],
        "outputs": list(k.outputs),
        "shape": list(k.shape),
        "dtype": k.dtype,
    }
    if k.op_shapes is not None:
        out["op_shapes"] = [list(s) for s in k.op_shapes]
    return out


# --- load -------------------------------------------------------------------------------
def read(path: Any, map_location: Any = None) -> Loaded:
    """What ``ScriptModule.save`` wrote (``jit.load`` makes a ScriptModule of it; no Python
    class is needed)."""
    if not isinstance(path, (str, os.PathLike)) and not hasattr(path, "read"):
        raise TypeError(
            f"jit.load: f must be a file name (str or os.PathLike) or a binary file object, "
            f"but got {type(path).__name__} {path!r:.40}"
        )
    if map_location is not None:
        as_device(map_location, "jit.load(map_location=...)")
    obj = serialization.load(path, map_location=map_location)
    name = str(path) if isinstance(path, (str, os.PathLike)) else "<file object>"
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise JitLoadError(
            f"jit.load: {name!r} is a minitorch file but not a saved ScriptModule (no "
            f"'format': {FORMAT!r} entry); load plain checkpoints with minitorch.load"
        )
    if obj.get("version") != VERSION:
        raise JitLoadError(
            f"jit.load: {name!r} has ScriptModule format version {obj.get('version')!r}; "
            f"this minitorch reads version {VERSION}"
        )
    try:
        graph = _Decoder().graph(obj["graph"])
        lint(graph)
        methods = {}
        for method, enc in dict(obj.get("methods", {})).items():
            methods[str(method)] = _Decoder().graph(enc)
            lint(methods[str(method)])
        attrs = obj["attrs"]
        params = set(obj["parameters"])
        if not isinstance(attrs, dict) or not all(isinstance(t, Tensor) for t in attrs.values()):
            raise JitLoadError("'attrs' must map names to tensors")
        modules = [
            (str(prefix), str(original), bool(training))
            for prefix, original, training in obj.get("modules", [])
        ]
        defaults = {
            str(k): v
            for k, v in dict(obj.get("defaults", {})).items()
            if isinstance(v, (bool, int, float, str, type(None)))
        }
        shapes = obj.get("traced_shapes")
        traced_shapes = (
            None
            if shapes is None
            else tuple(tuple(None if n is None else int(n) for n in s) for s in shapes)
        )
    except GraphLintError as err:
        raise JitLoadError(f"jit.load: {name!r} holds a malformed graph: {err}") from None
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise JitLoadError(f"jit.load: {name!r} holds a malformed graph: {err}") from None
    for g in (graph, *methods.values()):
        _check_attrs(g, attrs, name)
    tensors = {k: Parameter(t) if k in params else t for k, t in attrs.items()}
    name = str(obj.get("name", "forward"))
    return Loaded(graph, tensors, name, modules, methods, defaults, traced_shapes)


def _check_attrs(graph: Graph, attrs: dict, name: str) -> None:
    for node in graph.walk():
        if node.op == "get_attr" and node.args[0] not in attrs:
            raise JitLoadError(
                f"jit.load: {name!r}: the graph reads {node.args[0]!r}, which the file lacks"
            )


class _Decoder:
    def __init__(self) -> None:
        self.values: dict[str, Value] = {}

    def value(self, enc: list) -> Value:
        name, type_, dtype, shape = enc
        if not isinstance(name, str) or name in self.values:
            raise ValueError(f"value name {name!r} is not a new string")
        v = Value(name, str(type_), dtype, None if shape is None else tuple(shape))
        self.values[name] = v
        return v

    def use(self, name: str) -> Value:
        if name not in self.values:
            raise ValueError(f"%{name} is used before it is defined")
        return self.values[name]

    def graph(self, enc: dict) -> Graph:
        g = Graph()
        self.block(enc, g)
        g.tuple_output = bool(enc.get("tuple_output", False))
        g._names = set(self.values)
        return g

    def block(self, enc: dict, block: Block) -> Block:
        block.inputs = [self.value(v) for v in enc["inputs"]]
        for n in enc["nodes"]:
            block.nodes.append(self.node(n))
        block.outputs = [self.use(v) for v in enc["outputs"]]
        return block

    def node(self, enc: dict) -> Node:
        op = enc["op"]
        target = resolve(op) if isinstance(op, str) else None
        if target is None:
            raise ValueError(f"unknown op {op!r}: this minitorch has no op of that name")
        args = tuple(self.arg(a) for a in enc["args"])
        kwargs = {k: self.arg(v) for k, v in enc["kwargs"].items()}
        blocks = [self.block(b, Block()) for b in enc["blocks"]]
        outputs = [self.value(v) for v in enc["outputs"]]
        if op == "fused":
            target = self.kernel(enc["kernel"])
        elif op in STRUCTURAL:
            target = None
        return Node(op, args, kwargs, outputs, blocks, target=target)

    def arg(self, a: Any) -> Any:
        if not isinstance(a, dict):
            return a
        if len(a) != 1:
            raise ValueError(f"unknown argument encoding {a!r:.60}")
        ((kind, x),) = a.items()
        if kind == "value":
            return self.use(x)
        if kind == "tuple":
            return tuple(self.arg(i) for i in x)
        if kind == "list":
            return [self.arg(i) for i in x]
        if kind == "slice":
            return slice(*(self.arg(i) for i in x))
        if kind == "ellipsis":
            return Ellipsis
        if kind == "array":
            return x.numpy()
        if kind == "dtype":
            return as_dtype(x)
        if kind == "device":
            return _device(x)
        raise ValueError(f"unknown argument kind {kind!r}")

    def kernel(self, enc: dict) -> FusedKernel:
        ops = []
        for op, args in enc["ops"]:
            if op not in ELEMENTWISE and op not in REDUCTIONS:
                raise ValueError(f"fused kernel op {op!r} is not an elementwise op")
            ops.append(ElementwiseOp(op, tuple(self.kernel_arg(a) for a in args)))
        shapes = enc.get("op_shapes")
        return FusedKernel(
            name=str(enc["name"]),
            inputs=tuple((d, tuple(s)) for d, s in enc["inputs"]),
            ops=tuple(ops),
            outputs=tuple(int(j) for j in enc["outputs"]),
            shape=tuple(enc["shape"]),
            dtype=str(enc["dtype"]),
            op_shapes=None if shapes is None else tuple(tuple(int(n) for n in s) for s in shapes),
        )

    @staticmethod
    def kernel_arg(a: Any) -> Any:
        """A kernel op's argument: a ref, a reduction's dims, or a number (or bool)."""
        if not isinstance(a, dict):
            return a
        ((kind, value),) = a.items()
        if kind == "dims":
            return tuple(int(d) for d in value)
        if kind not in ("input", "op"):
            raise ValueError(f"unknown fused kernel argument {a!r}")
        return (kind, int(value))
