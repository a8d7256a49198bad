"""``minitorch.onnx.export``: trace a model, convert its graph to ONNX, write the file.

The pipeline, each step a piece of chapter 05:

1. trace (``jit.trace``'s recorder) in eval mode, without autograd, on the example inputs;
2. fold constants (``jit.passes``), then raise conv/batch-norm patterns (``patterns.py``)
   and drop what became dead;
3. convert node by node (``symbolic.py``): parameters and buffers become initializers
   under their dotted names, like ``torch.onnx.export``'s;
4. check the model with ``onnx.checker`` and write it atomically.

A trace has static shapes. ``dynamic_axes`` (as ``torch.onnx.export``'s) leaves chosen dims
of the inputs and outputs open, e.g. the batch: the model is traced a second time with
those input dims one larger, and the two conversions must be the same graph; where they
differ (a ``view`` baked the batch size into a Reshape) the export is refused, naming the
dims, instead of writing a file that fails at another size.

What ONNX cannot hold is refused with a message naming the op and the node: an op with no
mapping, an in-place op, and Python control flow on tensor values (an ``if`` on a tensor,
or a scripted ``If``/``Loop`` on one), which a trace would silently bake in.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..autograd import no_grad
from ..checks import as_number, describe
from ..hooks import RemovableHandle
from ..jit.ir import Graph, Node, Value
from ..jit.passes import fold_constants
from ..jit.tracer import TracerWarning, attr_table, input_names, record
from ..ops import cat
from ..state import conversion_hooks
from ..tensor import Tensor
from .builder import OnnxBuilder, OnnxExportError, UnsupportedOperatorError, where
from .patterns import raise_layers
from .symbolic import CONVERTERS, bind_args

#: The ONNX opsets the converters are written for (axes-as-input reductions from 18 on).
MIN_OPSET = 13

_TENSOR_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tensor.py")
_PACKAGE = os.path.dirname(_TENSOR_PY) + os.sep


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError as err:
        raise ImportError(
            "onnx.export needs the onnx package: pip install 'minitorch[onnx]' "
            "(or pip install onnx onnxruntime)"
        ) from err
    return onnx


def export(
    model: Callable,
    example_inputs: Any,
    path: str | os.PathLike,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int = 17,
    dynamic_axes: Mapping[str, Mapping[int, str] | Sequence[int]] | None = None,
) -> Any:
    """Write ``model`` (a Module or a function of tensors) as an ONNX file at ``path``.

    The graph is traced on ``example_inputs`` (a tensor or a tuple of tensors), so its
    shapes are theirs, except the dims ``dynamic_axes`` leaves open: ``{"input": {0:
    "batch"}, "output": {0: "batch"}}`` (or a list of axes, named ``<name>_dynamic_axes_<k>``
    as PyTorch names them). A Module is exported in eval mode (as PyTorch does) and left in
    the mode it was in. Returns the ``onnx.ModelProto`` that was written.
    """
    if not callable(model):
        raise TypeError(
            f"onnx.export: model must be a Module or a function of tensors, but got "
            f"{type(model).__name__} {model!r:.40}"
        )
    onnx = _import_onnx()
    as_number(opset_version, "onnx.export", "opset_version", integer=True)
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset_version <= newest:
        raise ValueError(
            f"onnx.export: opset_version must be between {MIN_OPSET} and {newest} "
            f"(this onnx package's newest), got {opset_version}"
        )
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"onnx.export: example_inputs must be a Tensor or a tuple of Tensors, but input "
                f"{i} is {describe(t)}"
            )
    _check_names(input_names, "input_names")
    _check_names(output_names, "output_names")
    _check_destination(path)
    builder, ins, outs = _convert(onnx, model, inputs, input_names, output_names, opset_version)
    dynamic = _dynamic_axes(dynamic_axes, ins, outs)
    if dynamic:
        grown = _grown_inputs(inputs, [dynamic.get(name, {}) for _, name in ins])
        try:
            again = _convert(onnx, model, grown, input_names, output_names, opset_version)[0]
        except OnnxExportError:
            raise
        except Exception as err:  # the model itself fixes the size (a view(4, -1))
            raise OnnxExportError(
                f"onnx.export: the graph depends on the size of the dynamic dims {dynamic}: "
                f"the model fails with those input dims one larger ({type(err).__name__}: "
                f"{err}), so it cannot be exported with them dynamic; leave them static"
            ) from err
        _check_shape_free(builder, again, dynamic)
    name = getattr(model, "__name__", type(model).__name__)
    proto = builder.model(ins, outs, name, dynamic)
    onnx.checker.check_model(proto)
    _write_atomically(proto.SerializeToString(), path)
    return proto


# --- tracing ------------------------------------------------------------------------------
def trace_for_export(model: Callable, inputs: tuple) -> tuple[Graph, dict[str, Tensor]]:
    """The traced graph (eval mode, no autograd) and the tensors its get_attr nodes read."""
    from ..jit.module import ScriptModule
    from ..nn import Module

    if isinstance(model, ScriptModule):
        _refuse_tensor_control_flow(model.graph)
    module = model if isinstance(model, Module) else None
    forward = model.forward if module is not None else model
    names = input_names(forward, len(inputs))
    table = attr_table(module)
    with _eval_mode(module), no_grad(), _refuse_python_conversions():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)  # refused above, more clearly
            graph, _, _ = record(model, inputs, names, table)
    _refuse_tensor_control_flow(graph)  # (a scripted submodule records its If and Loop)
    return graph, {name: t for name, t in table.values()}


@contextmanager
def _eval_mode(module: Any):
    if module is None:
        yield
        return
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


@contextmanager
def _refuse_python_conversions():
    """Raise when the traced code itself turns a tensor into Python data (``if t > 0:``,
    ``t.item()``): an ONNX graph has no Python, so the export would bake in this branch.
    Conversions inside minitorch (argument checks, such as embedding's range check) pass."""

    def hook(t: Tensor, kind: str, result: Any) -> None:
        frame = sys._getframe(1)
        while frame is not None and os.path.abspath(frame.f_code.co_filename) in (
            _TENSOR_PY,
            os.path.abspath(__file__),
        ):
            frame = frame.f_back
        if frame is None or os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
            return
        line = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        raise OnnxExportError(
            f"onnx.export: the traced code converts a tensor to a Python value ({kind}) at "
            f"{line}. ONNX graphs hold no Python control flow, so the file would bake in "
            "the branch this trace took. Compute it with tensor ops (minitorch.where, "
            "masks) or keep it outside the exported function."
        )

    handle = RemovableHandle(conversion_hooks, hook)
    try:
        yield
    finally:
        handle.remove()


def _refuse_tensor_control_flow(graph: Graph) -> None:
    """A scripted If/Loop deciding on a tensor's value cannot become a static graph."""
    for node in graph.walk():
        if node.op in ("If", "Loop"):
            decides = node.args[:1] if node.op == "If" else node.args[:2]
            if any(isinstance(a, Value) and a.type == "Tensor" for a in decides):
                raise OnnxExportError(
                    f"onnx.export: scripted control flow on a tensor value ({node.op}) has "
                    f"no ONNX mapping here; {where(node)}. Export the eager module instead "
                    "(with the branch written as tensor ops), or trace it."
                )


# --- conversion ---------------------------------------------------------------------------
def convert_nodes(
    b: OnnxBuilder, graph: Graph, attrs: dict[str, Tensor], outputs: dict[Value, str]
) -> None:
    """Convert every node; a node's result gets its output name if it is a graph output."""
    taken: set[Value] = set(graph.inputs)
    for node in graph.nodes:
        if node.op in ("get_attr", "constant"):
            data = attrs[node.args[0]] if node.op == "get_attr" else node.args[0]
            hint = node.args[0] if node.op == "get_attr" else "const"
            b.alias(node.outputs[0], b.const(data, hint))
            continue
        for v in node.outputs:
            if v in outputs and v not in taken:
                b.bind(v, outputs[v])
                taken.add(v)
        convert_node(b, node)


def convert_node(b: OnnxBuilder, node: Node) -> None:
    """The ONNX nodes for one IR node, or an error naming it."""
    from ..ops.inplace import InplaceFunction

    if node.blocks or node.op.startswith("prim."):
        raise OnnxExportError(
            f"onnx.export: {node.op!r} is a Python-only construct with no ONNX mapping; "
            f"{where(node)}"
        )
    if isinstance(node.target, type) and issubclass(node.target, InplaceFunction):
        raise UnsupportedOperatorError(
            f"onnx.export: the in-place op {node.op!r} has no ONNX mapping (ONNX values are "
            f"immutable); {where(node)}. Is the model in training mode, or writing a buffer?"
        )
    converter = CONVERTERS.get(node.op)
    if converter is None:
        raise UnsupportedOperatorError(
            f"onnx.export: no ONNX mapping for op {node.op!r}; {where(node)}. "
            f"Supported ops: {', '.join(sorted(CONVERTERS))}"
        )
    converter(b, node, bind_args(node))


def _convert(
    onnx: Any,
    model: Callable,
    inputs: tuple,
    input_names: Sequence[str] | None,
    output_names: Sequence[str] | None,
    opset_version: int,
) -> tuple[OnnxBuilder, list[tuple[Value, str]], list[tuple[Value, str]]]:
    """Trace ``model`` on ``inputs`` and convert the graph: the builder holding the ONNX
    nodes and initializers, and the named graph inputs and outputs."""
    graph, attrs = trace_for_export(model, inputs)
    graph = raise_layers(fold_constants(graph))
    builder = OnnxBuilder(onnx, opset_version)
    ins = _name_ends(builder, graph.inputs, input_names, "input")
    for value, name in ins:
        builder.bind(value, name)
    outs = _name_ends(builder, graph.outputs, output_names, "output")
    convert_nodes(builder, graph, attrs, dict(outs))
    outs = [(v, _output_name(builder, v, name)) for v, name in outs]
    return builder, ins, outs


def _dynamic_axes(
    given: Mapping[str, Any] | None,
    ins: list[tuple[Value, str]],
    outs: list[tuple[Value, str]],
) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` checked and normalised to ``{name: {axis: dim name}}``."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise TypeError(
            "onnx.export: dynamic_axes must be a dict from input/output names to axes, "
            f"got {type(given).__name__}"
        )
    ndims = {name: len(v.shape or ()) for v, name in ins + outs}
    found: dict[str, dict[int, str]] = {}
    for name, axes in given.items():
        if name not in ndims:
            raise ValueError(
                f"onnx.export: dynamic_axes names {name!r}, which is not an input or output "
                f"(they are {sorted(ndims)}); name them with input_names/output_names"
            )
        if isinstance(axes, Mapping):
            pairs = list(axes.items())
        elif isinstance(axes, (list, tuple)):
            pairs = [(a, f"{name}_dynamic_axes_{k + 1}") for k, a in enumerate(axes)]
        else:
            raise TypeError(
                f"onnx.export: dynamic_axes[{name!r}] must be a dict {{axis: name}} or a list "
                f"of axes, got {type(axes).__name__}"
            )
        found[name] = {}
        for axis, dim_name in pairs:
            n = ndims[name]
            if type(axis) is not int or not -n <= axis < n:
                raise ValueError(
                    f"onnx.export: dynamic_axes[{name!r}] has axis {axis!r}, but {name!r} "
                    f"has {n} dims"
                )
            if not isinstance(dim_name, str) or not dim_name:
                raise TypeError(
                    f"onnx.export: dynamic_axes[{name!r}][{axis}] must name the dim with a "
                    f"non-empty str, got {dim_name!r}"
                )
            found[name][axis % n] = dim_name
    return found


def _grown_inputs(inputs: tuple, axes: list[dict[int, str]]) -> tuple:
    """The example inputs with every dynamic dim one larger (its first slice repeated)."""
    grown = []
    for x, dims in zip(inputs, axes, strict=True):
        for axis in dims:
            if x.shape[axis] == 0:
                raise ValueError(
                    f"onnx.export: input dim {axis} is dynamic but 0 in the example input; "
                    "give an example of size 1 or more"
                )
            first = x[(slice(None),) * axis + (slice(0, 1),)]
            x = cat([x, first], axis)
        grown.append(x)
    return tuple(grown)


def _check_shape_free(first: OnnxBuilder, second: OnnxBuilder, dynamic: dict) -> None:
    """The two conversions (the example's sizes, and dynamic dims one larger) must agree
    node for node and constant for constant; else a size was baked into the graph."""

    def content(b: OnnxBuilder) -> tuple[list[bytes], list[bytes]]:
        return [n.SerializeToString() for n in b.nodes], [
            t.SerializeToString() for t in b.initializers
        ]

    (nodes, constants), (nodes2, constants2) = content(first), content(second)
    if nodes == nodes2 and constants == constants2:
        return
    pairs = zip(first.nodes, nodes, nodes2, strict=False)
    a = next((node for node, x, y in pairs if x != y), None)  # None: a constant differs
    where_ = f" (ONNX node {a.op_type} {a.name!r})" if a is not None else ""
    raise OnnxExportError(
        f"onnx.export: the graph depends on the size of the dynamic dims {dynamic}{where_}: "
        "tracing with those dims one larger gave a different graph, so a size is baked in: "
        "a view/reshape/squeeze exports as a Reshape to the traced shape (only a flatten "
        "of the leading dims stays a Flatten), and a size read in Python is a constant. "
        "Flatten with x.flatten(1), or leave that dim static."
    )


def _name_ends(
    b: OnnxBuilder, values: list[Value], names: Sequence[str] | None, default: str
) -> list[tuple[Value, str]]:
    """Pair the graph's inputs or outputs with their names (given, or ``input0``...)."""
    if names is not None and len(names) != len(values):
        raise ValueError(
            f"onnx.export: {len(names)} {default}_names given for {len(values)} {default}s"
        )
    if names is None:
        names = [default] if len(values) == 1 else [f"{default}{i}" for i in range(len(values))]
    return list(zip(values, names, strict=True))


def _output_name(b: OnnxBuilder, value: Value, name: str) -> str:
    """The name an output is written under: an Identity where the value already has
    another name (a graph input, an initializer, or an output listed twice)."""
    current = b.name(value)
    if current == name:
        return name
    return b.emit("Identity", [current], [b.fresh(name)])[0]


def _check_names(names: Any, what: str) -> None:
    if names is None:
        return
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise TypeError(f"onnx.export: {what} must be a list of str, but got {describe(names)}")
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"onnx.export: {what}[{i}] must be a str, but got {describe(name)}")


def _check_destination(path: Any) -> None:
    """Where the file goes: a file name (not a directory) or a binary file object."""
    if hasattr(path, "write"):
        return
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"onnx.export: f must be a file name or a binary file object, but got {describe(path)}"
        )
    if os.path.isdir(path):
        raise IsADirectoryError(
            f"onnx.export: {os.fspath(path)!r} is a directory; give a file name in it"
        )


def _write_atomically(data: bytes, path: Any) -> None:
    if hasattr(path, "write"):  # a file object (io.BytesIO, an open file), as PyTorch takes
        path.write(data)
        return
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".onnx-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
