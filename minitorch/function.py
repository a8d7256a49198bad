"""``Function.apply``: the one choke point every tensor operation goes through.

Each op is a ``Function`` subclass with a ``forward`` that computes on raw backend
arrays (numpy or cupy) and a ``backward`` right next to it that computes the input
gradients from the output gradient, written with minitorch ops (so it is differentiable
too). Later chapters add their layer here, in ``apply``, and nowhere else.

Chapter 02's layer: when grad mode is on and some input requires grad, ``apply`` turns the
op's ``ctx`` into a node of the backward graph. The node is the outputs' ``grad_fn``; its
``next_functions`` point at the nodes that made the inputs (or at ``AccumulateGrad`` for
leaves), and it keeps what forward saved, with the version each saved tensor had.
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar, NamedTuple

from . import tensor as _tensor
from .autograd import anomaly as _anomaly
from .autograd import grad_mode as _grad_mode
from .shape import broadcast_shapes


class Layout(NamedTuple):
    """How a tensor reads its storage: element ``i`` sits at ``offset + sum(i_k * strides[k])``."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


class Context:
    """Scratch space an op's forward leaves for its backward (the ``ctx`` argument).

    ``save_for_backward(*arrays)`` keeps values for backward; in backward,
    ``ctx.saved_tensors`` gives them back as Tensors. ``needs_input_grad[i]`` says whether
    argument ``i`` needs a gradient, so forward can skip saving and backward can skip
    computing what nobody needs. Any other attribute (``ctx.dim = dim``) is fine too.
    """

    __slots__ = ("saved", "needs_input_grad", "__dict__")

    #: Outputs that ``mark_non_differentiable`` excluded from the graph (raw arrays).
    non_differentiable: tuple = ()

    def __init__(self, needs_input_grad: tuple[bool, ...] = ()) -> None:
        self.saved: tuple = ()
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *values: Any) -> None:
        """Keep arrays (inputs, outputs or intermediates) for backward."""
        self.saved = values

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Declare outputs (e.g. indices) that never get a gradient and don't require grad."""
        self.non_differentiable = outputs

    @property
    def saved_tensors(self) -> tuple:
        return self.saved


class Node(Context):
    """A node of the backward graph, i.e. a ``grad_fn``: the ctx of one recorded op.

    Each Function gets its own subclass, named like PyTorch's (``Mul`` records a
    ``MulBackward``), whose ``_function`` is the Function whose ``backward`` it runs.
    """

    __slots__ = (
        "next_functions",
        "_input_pos",
        "_input_meta",
        "_output_meta",
        "_packed",
        "__weakref__",
    )

    _function: ClassVar[Any] = None
    # Rarely used state lives in the instance __dict__, with these class-level defaults.
    _freed: bool = False
    _pre_hooks: dict | None = None  # output_nr -> {key: hook} (hooks of non-leaf tensors)
    _retained: dict | None = None  # output_nr -> weakref to a tensor that called retain_grad
    _trace: list | None = None  # forward stack, kept in anomaly mode

    def __init__(self, needs_input_grad: tuple[bool, ...] = ()) -> None:
        self.saved = ()
        self.needs_input_grad = needs_input_grad
        self._packed = None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def saved_tensors(self) -> tuple:
        """The saved values as Tensors connected to the graph, checked for in-place changes."""
        packed = self._packed
        if packed is None:  # still inside forward: the raw arrays
            return self.saved
        if self._freed:
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        return tuple(self._unpack(item) for item in packed)

    def _unpack(self, item: tuple) -> Any:
        kind = item[0]
        if kind == SAVED_VALUE:
            return item[1]
        Tensor = _tensor.Tensor
        if kind == SAVED_CONSTANT:
            return Tensor._from_array(item[1])
        if kind == SAVED_INPUT:
            _, t, version = item
            if t._storage.version != version:
                raise RuntimeError(_modified_message(t._data, t._storage.version, version, self))
            return t
        _, storage, version, data, output_nr = item  # SAVED_OUTPUT
        if storage.version != version:
            raise RuntimeError(_modified_message(data, storage.version, version, self))
        # A fresh tensor for the output (the node can't hold the output itself: a cycle).
        t = Tensor._alias(storage, data)
        t._requires_grad = True
        t.grad_fn = self
        if output_nr:
            t._output_nr = output_nr
        return t

    def _release(self) -> None:
        """Free the saved values (after a backward without ``retain_graph``)."""
        self._packed = ()
        self.saved = ()
        self._freed = True


class AccumulateGrad(Node):
    """The graph node of a leaf that requires grad: adds the incoming gradient to ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__()
        self.variable = variable
        self.next_functions = ()
        self._output_meta = ((None, None),)  # one output: the leaf's gradient
        self._packed = ()


SAVED_VALUE, SAVED_CONSTANT, SAVED_INPUT, SAVED_OUTPUT = range(4)

FREED_GRAPH_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _modified_message(data: Any, version: int, expected: int, node: Node) -> str:
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{data.dtype.name} {tuple(data.shape)}] is at version {version}; "
        f"expected version {expected} instead. It was saved for backward by {node.name()}. "
        "Hint: compute the new value out of place (y = y + 1 instead of y.add_(1), or "
        ".clone() it) so the saved value stays as forward saw it."
    )


class Function:
    """Base class of all ops. Subclasses define ``forward(ctx, *arrays, **params)``.

    A differentiable op also defines ``backward(ctx, *grad_outputs)``, which returns one
    gradient (a Tensor, or None) per positional argument of forward.
    """

    #: The op's name in error messages (defaults to the lower-cased class name).
    name: ClassVar[str] = ""
    #: True for elementwise ops whose tensor inputs broadcast against each other.
    broadcasting: ClassVar[bool] = False
    #: False for ops whose outputs never carry a gradient (comparisons, argmax, ...).
    differentiable: ClassVar[bool] = True
    #: The graph-node class this op records (``MulBackward`` for ``Mul``).
    _node_class: ClassVar[type[Node]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__.lower()
        cls._node_class = type(
            f"{cls.__name__}Backward",
            (Node,),
            {"__slots__": (), "_function": cls, "__module__": cls.__module__},
        )

    @staticmethod
    def forward(ctx: Context, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        raise RuntimeError("this op has no backward: it is not differentiable")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op: check devices, compute on the backend, wrap the results as tensors,
        and (when grad mode is on and an input requires grad) record a graph node."""
        Tensor = _tensor.Tensor
        tensors = [a for a in args if isinstance(a, Tensor)]
        if len(tensors) > 1:
            check_same_device(cls.name, tensors)
        node = None
        if _grad_mode._state.enabled and cls.differentiable:
            for t in tensors:
                if t._requires_grad:
                    node = _new_node(cls, args)
                    break
        ctx = node if node is not None else Context((False,) * len(args))
        try:
            out, raw = cls._compute(ctx, args, kwargs)
        except (ValueError, TypeError) as err:
            if cls.broadcasting:  # explain a shape mismatch in terms of broadcasting
                broadcast_shapes(*(t.shape for t in tensors), op=cls.name)
            raise RuntimeError(f"{cls.name}: {err} ({describe_inputs(args)})") from err
        if node is not None:
            _connect(node, tensors, out, raw)
        return out

    @classmethod
    def _compute(cls, ctx: Context, args: tuple, kwargs: dict) -> tuple[Any, Any]:
        """Default: raw arrays in, fresh contiguous tensors out. Returns (tensors, arrays)."""
        Tensor = _tensor.Tensor
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        out = cls.forward(ctx, *raw, **kwargs)
        if isinstance(out, tuple):
            return tuple(Tensor._from_array(o) for o in out), out
        return Tensor._from_array(out), out


class ViewFunction(Function):
    """An op that copies nothing: ``forward`` maps the input's Layout to the output's Layout.

    The result shares the input's storage, so writing through either is seen by both.
    """

    @classmethod
    def _compute(cls, ctx: Context, args: tuple, kwargs: dict) -> tuple[Any, Any]:
        base, *rest = args
        layout = cls.forward(ctx, base.layout, *rest, **kwargs)
        out = base._view(*layout)
        out._base = base if base._base is None else base._base
        return out, None


def _new_node(cls: type[Function], args: tuple) -> Node:
    """The node for one call of ``cls``: one edge per tensor argument, pointing at the
    node that produced it (its ``grad_fn``), at its ``AccumulateGrad`` (a leaf that
    requires grad), or at nothing."""
    Tensor = _tensor.Tensor
    needs, edges, positions, meta = [], [], [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(i)
            data = a._data
            meta.append((data.shape, data.dtype))
            if a._requires_grad:
                needs.append(True)
                fn = a.grad_fn
                edges.append((fn, a._output_nr) if fn is not None else (a._accumulator(), 0))
            else:
                needs.append(False)
                edges.append((None, 0))
        else:
            needs.append(False)
    node = cls._node_class(tuple(needs))
    node.next_functions = tuple(edges)
    node._input_pos = tuple(positions)
    node._input_meta = tuple(meta)
    if _anomaly._state.enabled:
        node._trace = _anomaly.forward_trace()
    return node


def _connect(node: Node, tensors: list, out: Any, raw: Any) -> None:
    """After forward: make the node the outputs' grad_fn and pack what forward saved."""
    outs = out if isinstance(out, tuple) else (out,)
    raws = raw if isinstance(raw, tuple) else (raw,)
    skip = node.non_differentiable
    meta = []
    for i, o in enumerate(outs):
        data = o._data
        meta.append((data.shape, data.dtype))
        if data.dtype.kind != "f" or (skip and any(raws[i] is s for s in skip)):
            continue  # integer/bool outputs and marked ones carry no gradient
        o._requires_grad = True
        o.grad_fn = node
        if i:
            o._output_nr = i
    node._output_meta = tuple(meta)
    saved = node.saved
    if not saved:
        node._packed = ()
        return
    packed = []
    for s in saved:
        packed.append(_pack(s, tensors, outs, raws))
    node._packed = tuple(packed)
    node.saved = ()


def _pack(value: Any, tensors: list, outs: tuple, raws: tuple) -> tuple:
    """Find the tensor a saved array belongs to (by identity), with its storage version."""
    if value is None or isinstance(value, (int, float, complex, str)):
        return (SAVED_VALUE, value)
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        return (SAVED_INPUT, value, value._storage.version)
    for t in tensors:
        if value is t._data:
            return (SAVED_INPUT, t, t._storage.version)
    for k, r in enumerate(raws):
        if value is r:
            o = outs[k]
            return (SAVED_OUTPUT, o._storage, o._storage.version, o._data, k)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return (SAVED_CONSTANT, value)  # an intermediate array: a constant for backward
    return (SAVED_VALUE, value)


def record_inplace(
    cls: type[Function], target: Any, inputs: tuple, needs: tuple, ctx_attrs: dict
) -> None:
    """Rebase ``target``'s history after an in-place write: ``target.grad_fn`` becomes a
    node of ``cls`` whose inputs are ``inputs`` (``target`` itself stands for its value
    before the write). Used by ``copy_`` / ``__setitem__``."""
    Tensor = _tensor.Tensor
    edges, positions, meta = [], [], []
    for i, (a, need) in enumerate(zip(inputs, needs, strict=True)):
        if not isinstance(a, Tensor):
            continue
        positions.append(i)
        meta.append((a._data.shape, a._data.dtype))
        if need and a._requires_grad:
            fn = a.grad_fn
            edges.append((fn, a._output_nr) if fn is not None else (a._accumulator(), 0))
        else:
            edges.append((None, 0))
    node = cls._node_class(tuple(needs))
    node.next_functions = tuple(edges)
    node._input_pos = tuple(positions)
    node._input_meta = tuple(meta)
    node._output_meta = ((target._data.shape, target._data.dtype),)
    node._packed = ()
    node.__dict__.update(ctx_attrs)
    if _anomaly._state.enabled:
        node._trace = _anomaly.forward_trace()
    target.grad_fn = node
    target._requires_grad = True
    target._output_nr = 0


def leaf_accumulator(t: Any) -> AccumulateGrad:
    """The one AccumulateGrad node of leaf ``t`` (the tensor holds it only weakly)."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is None or acc.variable is not t:  # (a copied tensor may carry another's ref)
        acc = AccumulateGrad(t)
        t._acc_ref = weakref.ref(acc)
    return acc


def check_same_device(op: str, tensors: list) -> None:
    """Raise a clear error when an op's tensors live on different devices."""
    first = tensors[0]._storage.device
    for t in tensors[1:]:
        if t._storage.device is not first and t.device != first:
            raise RuntimeError(
                f"{op}: expected all tensors on the same device, but found {first} and "
                f"{t.device}; move one with .to('{first}') or .to('{t.device}')"
            )


def describe_inputs(args: tuple) -> str:
    """``inputs: Tensor(shape=(2, 3), dtype=float32, device=cpu), 2.0`` for error messages."""
    parts = []
    for a in args:
        if isinstance(a, _tensor.Tensor):
            parts.append(f"Tensor(shape={a.shape}, dtype={a.dtype.name}, device={a.device})")
        else:
            parts.append(repr(a) if len(repr(a)) < 40 else type(a).__name__)
    return "inputs: " + ", ".join(parts)
