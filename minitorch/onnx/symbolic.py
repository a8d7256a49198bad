"""One converter per op: how a node of a traced graph is written as ONNX operators.

``CONVERTERS[op](b, node, p)`` emits the ONNX nodes for ``node`` through the builder ``b``;
``p`` holds the node's arguments by parameter name (``p["dim"]``), bound against the op's
``forward`` signature. Shapes in a trace are static, so shape arguments (``Reshape``,
``Expand``) are written as constants from the Values' recorded shapes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..jit.ir import Node, Value
from .builder import OnnxBuilder, OnnxExportError, np_dtype, where

Converter = Callable[[OnnxBuilder, Node, dict], None]
CONVERTERS: dict[str, Converter] = {}


def converts(*ops: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op in ops:
            CONVERTERS[op] = fn
        return fn

    return register


def bind_args(node: Node) -> dict[str, Any]:
    """The node's arguments by the op's parameter names, defaults filled in."""
    target = node.target
    if not isinstance(target, type):
        return {"args": node.args, **node.kwargs}
    signature = inspect.signature(target.forward)
    if getattr(target, "setup_context", None) is None:  # forward(ctx, ...): None for ctx
        bound = signature.bind(None, *node.args, **node.kwargs)
    else:  # a pure forward(*arrays)
        bound = signature.bind(*node.args, **node.kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _out_dtype(node: Node) -> np.dtype:
    return np_dtype(node.outputs[0])


# --- elementwise --------------------------------------------------------------------------
_BINARY = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
    "maximum": "Max", "minimum": "Min",
}  # fmt: skip
_UNARY = {
    "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "tanh": "Tanh",
    "sigmoid": "Sigmoid", "relu": "Relu", "erf": "Erf", "sign": "Sign", "clone": "Identity",
    "logical_not": "Not",
}  # fmt: skip
_COMPARE = {
    "eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual",
    "logical_and": "And", "logical_or": "Or",
}  # fmt: skip


@converts(*_BINARY)
def _binary(b: OnnxBuilder, node: Node, p: dict) -> None:
    """Arithmetic: both operands in the result's dtype (Python scalars become constants)."""
    dtype = _out_dtype(node)
    a, c = p["a"], p["b"]
    b.emit(_BINARY[node.op], [b.arg(a, dtype), b.arg(c, dtype)], [b.out(node)])


@converts(*_UNARY)
def _unary(b: OnnxBuilder, node: Node, p: dict) -> None:
    b.emit(_UNARY[node.op], [b.arg(node.args[0], _out_dtype(node))], [b.out(node)])


def _common_dtype(*args: Any) -> np.dtype:
    """The dtype two compared operands meet in (a float scalar lifts an integer tensor)."""
    tensors = [np_dtype(a) for a in args if isinstance(a, Value)]
    dtype = np.result_type(*tensors) if tensors else np.dtype(np.float32)
    if any(isinstance(a, float) for a in args) and dtype.kind in "iub":
        dtype = np.dtype(np.float32)
    return dtype


@converts(*_COMPARE, "ne")
def _compare(b: OnnxBuilder, node: Node, p: dict) -> None:
    a, c = p["a"], p["b"]
    dtype = np.dtype(bool) if node.op.startswith("logical") else _common_dtype(a, c)
    inputs = [b.arg(a, dtype), b.arg(c, dtype)]
    if node.op == "ne":
        (equal,) = b.emit("Equal", inputs, 1)
        b.emit("Not", [equal], [b.out(node)])
    else:
        b.emit(_COMPARE[node.op], inputs, [b.out(node)])


_BITWISE = {"bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor", "bitwise_not": "Not"}


@converts(*_BITWISE)
def _bitwise(b: OnnxBuilder, node: Node, p: dict) -> None:
    """On bools ONNX's logical ops; on integers its Bitwise* ops (opset 18 on)."""
    dtype = _out_dtype(node)
    name = _BITWISE[node.op]
    if dtype != np.dtype(bool):
        if b.opset < 18:
            raise OnnxExportError(
                f"onnx.export: {node.op} on {dtype} tensors needs opset 18 (Bitwise{name}); "
                f"export with opset_version=18 or later (this export uses {b.opset})"
            )
        name = f"Bitwise{name}"
    b.emit(name, [b.arg(a, dtype) for a in node.args], [b.out(node)])


@converts("where")
def _where(b: OnnxBuilder, node: Node, p: dict) -> None:
    dtype = _out_dtype(node)
    cond = b.arg(p["condition"], np.dtype(bool))
    b.emit("Where", [cond, b.arg(p["a"], dtype), b.arg(p["b"], dtype)], [b.out(node)])


@converts("to")
def _to(b: OnnxBuilder, node: Node, p: dict) -> None:
    b.emit("Cast", [b.name(p["a"])], [b.out(node)], to=b.type_of(_out_dtype(node)))


# --- activations and matrix products ------------------------------------------------------
@converts("softmax", "log_softmax")
def _softmax(b: OnnxBuilder, node: Node, p: dict) -> None:
    op = "Softmax" if node.op == "softmax" else "LogSoftmax"
    b.emit(op, [b.arg(p["x"], _out_dtype(node))], [b.out(node)], axis=int(p["dim"]))


@converts("matmul")
def _matmul(b: OnnxBuilder, node: Node, p: dict) -> None:
    dtype = _out_dtype(node)
    b.emit("MatMul", [b.arg(p["a"], dtype), b.arg(p["b"], dtype)], [b.out(node)])


@converts("linear")
def _linear(b: OnnxBuilder, node: Node, p: dict) -> None:
    """``x @ W.T + b``: one Gemm for a 2-d input, else MatMul with the transposed weight."""
    x, weight, bias = p["x"], p["weight"], p["bias"]
    inputs = [b.name(x), b.name(weight)] + ([b.name(bias)] if bias is not None else [])
    if x.shape is not None and len(x.shape) == 2:
        b.emit("Gemm", inputs, [b.out(node)], transB=1)
        return
    (w_t,) = b.emit("Transpose", [inputs[1]], 1, perm=[1, 0])
    if bias is None:
        b.emit("MatMul", [inputs[0], w_t], [b.out(node)])
    else:
        (product,) = b.emit("MatMul", [inputs[0], w_t], 1)
        b.emit("Add", [product, inputs[2]], [b.out(node)])


# --- shapes -------------------------------------------------------------------------------
def _flatten_axis(src: tuple[int, ...], dst: tuple[int, ...]) -> int | None:
    """The ``k`` for which ONNX's ``Flatten(axis=k)`` turns ``src`` into 2-d ``dst``."""
    if len(dst) != 2 or len(src) <= 2:
        return None
    for k in range(1, len(src)):
        if int(np.prod(src[:k])) == dst[0] and int(np.prod(src[k:])) == dst[1]:
            return k
    return None


def reshape(b: OnnxBuilder, x: str, shape: tuple[int, ...], out: str | None = None) -> str:
    """A Reshape to a static ``shape`` (``allowzero`` where a dim is 0)."""
    outputs: list[str] | int = [out] if out else 1
    zero = 1 if 0 in shape else None
    return b.emit("Reshape", [x, b.ints(shape)], outputs, allowzero=zero)[0]


@converts("view", "squeeze", "unsqueeze")
def _view(b: OnnxBuilder, node: Node, p: dict) -> None:
    """Every view that only regroups dims is a Reshape (a Flatten where it is one)."""
    x, out = node.args[0], node.outputs[0]
    if x.shape == out.shape:  # a view that changes nothing (flatten of a 2-d input)
        b.alias(out, b.name(x))
        return
    axis = _flatten_axis(x.shape or (), out.shape or ())
    if node.op == "view" and axis is not None:
        b.emit("Flatten", [b.name(x)], [b.out(node)], axis=axis)
    else:
        reshape(b, b.name(x), out.shape, b.out(node))


@converts("permute")
def _permute(b: OnnxBuilder, node: Node, p: dict) -> None:
    b.emit("Transpose", [b.name(p["x"])], [b.out(node)], perm=[int(d) for d in p["dims"]])


@converts("expand")
def _expand(b: OnnxBuilder, node: Node, p: dict) -> None:
    b.emit("Expand", [b.name(p["x"]), b.ints(node.outputs[0].shape)], [b.out(node)])


@converts("cat", "stack")
def _join(b: OnnxBuilder, node: Node, p: dict) -> None:
    dtype, dim = _out_dtype(node), int(p["dim"])
    parts = [b.arg(a, dtype) for a in p["arrays"]]
    if node.op == "stack":
        parts = [b.emit("Unsqueeze", [x, b.ints([dim], "axes")], 1)[0] for x in parts]
    b.emit("Concat", parts, [b.out(node)], axis=dim)


@converts("getitem")
def _slice(b: OnnxBuilder, node: Node, p: dict) -> None:
    """Basic indexing: one Slice over the sliced dims, then a Reshape that drops the dims an
    integer picked and adds the ``None`` dims."""
    from ..ops.views import expand_ellipsis

    x = p["x"]
    index = p["index"] if isinstance(p["index"], tuple) else (p["index"],)
    starts, ends, axes, steps = [], [], [], []
    dim = 0
    for item in expand_ellipsis(index, len(x.shape)):
        if item is None:
            continue
        size = x.shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if (start, stop, step) != (0, size, 1):
                stop = stop if stop >= 0 else -(2**63)  # a negative step running past 0
                starts.append(start), ends.append(stop), axes.append(dim), steps.append(step)
        else:
            i = int(item) % size
            starts.append(i), ends.append(i + 1), axes.append(dim), steps.append(1)
        dim += 1
    name = b.name(x)
    if axes:
        ins = [b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)]
        (name,) = b.emit("Slice", [name, *ins], 1)
    reshape(b, name, node.outputs[0].shape, b.out(node))


@converts("index")
def _gather(b: OnnxBuilder, node: Node, p: dict) -> None:
    """``t[idx]`` with one integer index tensor (after full slices): a Gather, as embedding."""
    index = p["index"] if isinstance(p["index"], tuple) else (p["index"],)
    *leading, picked = index
    if any(item != slice(None) for item in leading) or isinstance(picked, (slice, type(None))):
        raise OnnxExportError(
            f"onnx.export: advanced index {index!r} is not supported: only one integer index "
            f"tensor along a dim (as embedding's weight[indices]) maps to Gather; {where(node)}"
        )
    if isinstance(picked, Value):
        if np_dtype(picked).kind not in "iu":
            raise OnnxExportError(
                f"onnx.export: indexing with a {picked.dtype} tensor has a data-dependent "
                f"shape; only integer indices map to Gather; {where(node)}"
            )
        indices = b.name(picked)
    else:
        indices = b.const(np.asarray(picked, dtype=np.int64), "indices")
    b.emit("Gather", [b.name(p["a"]), indices], [b.out(node)], axis=len(leading))


# --- reductions ---------------------------------------------------------------------------
def _dims(dim: Any) -> tuple[int, ...] | None:
    if dim is None:
        return None
    return (int(dim),) if isinstance(dim, int) else tuple(int(d) for d in dim)


def reduce(
    b: OnnxBuilder, op: str, x: str, dims: tuple | None, keepdim: bool, out: str | None = None
) -> str:
    """An ONNX reduction: axes as an input from opset 18 on (ReduceSum from 13 on)."""
    outputs: list[str] | int = [out] if out else 1
    keep = int(bool(keepdim))
    if dims is None:
        return b.emit(op, [x], outputs, keepdims=keep)[0]
    if op == "ReduceSum" or b.opset >= 18:
        return b.emit(op, [x, b.ints(dims, "axes")], outputs, keepdims=keep)[0]
    return b.emit(op, [x], outputs, axes=list(dims), keepdims=keep)[0]


@converts("sum", "mean")
def _sum_mean(b: OnnxBuilder, node: Node, p: dict) -> None:
    op = "ReduceSum" if node.op == "sum" else "ReduceMean"
    x = b.arg(p["a"], _out_dtype(node))
    reduce(b, op, x, _dims(p["dim"]), p["keepdim"], b.out(node))


@converts("max", "min")
def _extreme(b: OnnxBuilder, node: Node, p: dict) -> None:
    """Whole-tensor max/min, or ``(values, indices)`` along one dim (ArgMax for the indices)."""
    op = "ReduceMax" if node.op == "max" else "ReduceMin"
    x, dim = b.name(p["a"]), p["dim"]
    reduce(b, op, x, _dims(dim), p["keepdim"], b.out(node, 0))
    if dim is not None and len(node.outputs) > 1:
        arg = "ArgMax" if node.op == "max" else "ArgMin"
        b.emit(arg, [x], [b.out(node, 1)], axis=int(dim), keepdims=int(bool(p["keepdim"])))


@converts("argmax", "argmin")
def _argextreme(b: OnnxBuilder, node: Node, p: dict) -> None:
    op = "ArgMax" if node.op == "argmax" else "ArgMin"
    x, dim, keep = b.name(p["a"]), p["dim"], int(bool(p["keepdim"]))
    if dim is None:  # over all elements: flatten first
        x = reshape(b, x, (-1,))
        dim, keep = 0, 0
    (index,) = b.emit(op, [x], 1, axis=int(dim), keepdims=keep)
    reshape(b, index, node.outputs[0].shape, b.out(node))


# --- convolution and pooling --------------------------------------------------------------
@converts("max_pool2d")
def _max_pool(b: OnnxBuilder, node: Node, p: dict) -> None:
    kernel = [int(k) for k in p["kernel"]]
    b.emit("MaxPool", [b.name(p["x"])], [b.out(node)], kernel_shape=kernel, strides=kernel)


@converts("unfold")
def _unfold(b: OnnxBuilder, node: Node, p: dict) -> None:
    """im2col as one Gather: each column picks its window's pixels from the flat image.

    (A convolution built on unfold becomes a real Conv before this runs, see patterns.py;
    this is what is left, such as overlapping max pooling.)"""
    x = p["x"]
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = p["kernel"], p["stride"], p["dilation"]
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    rows = np.arange(kh)[:, None, None, None] * dh + np.arange(oh)[None, None, :, None] * sh
    cols = np.arange(kw)[None, :, None, None] * dw + np.arange(ow)[None, None, None, :] * sw
    pixels = (rows * w + cols).reshape(kh * kw, oh * ow).astype(np.int64)
    flat = reshape(b, b.name(x), (n, c, h * w))
    (picked,) = b.emit("Gather", [flat, b.const(pixels, "im2col_index")], 1, axis=2)
    reshape(b, picked, node.outputs[0].shape, b.out(node))


# --- ONNX ops the pattern pass already formed (patterns.py) -------------------------------
@converts("Conv", "BatchNormalization")
def _raised(b: OnnxBuilder, node: Node, p: dict) -> None:
    inputs = [b.arg(a, np_dtype(node.outputs[0])) if a is not None else "" for a in node.args]
    while inputs and inputs[-1] == "":
        inputs.pop()
    b.emit(node.op, inputs, [b.out(node)], **node.kwargs)
