"""``Function.apply``: the one choke point every tensor operation goes through.

Each op is a ``Function`` subclass with a ``forward`` that computes on raw backend
arrays (numpy or cupy) and a ``backward`` right next to it that computes the input
gradients from the output gradient, written with minitorch ops (so it is differentiable
too). Later chapters add their layer here, in ``apply``, and nowhere else.

Chapter 02's layer: when grad mode is on and some input requires grad, ``apply`` turns the
op's ``ctx`` into a node of the backward graph. The node is the outputs' ``grad_fn``; its
``next_functions`` point at the nodes that made the inputs (or at ``AccumulateGrad`` for
leaves), and it keeps what forward saved as ``SavedTensor``s, with the version each had.

Below ``apply`` sits the backend seam (``minitorch.backend``): the input's backend may
provide its own kernel for the op; otherwise ``forward`` runs. After each op, the
observers registered with ``register_apply_hook`` see it (chapter 05's tracer is one).
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar, NamedTuple

from . import backend
from .backend import _registered as _kernels_registered
from .dtypes import is_floating
from .hooks import RemovableHandle
from .shape import broadcast_shapes
from .state import anomaly as _anomaly
from .state import apply_hooks as _apply_hooks
from .state import autocast as _autocast
from .state import forward_trace
from .state import grad as _grad
from .tensor import Tensor


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

    When ``apply`` records the op, each saved array becomes a ``SavedTensor`` that
    remembers the version of the tensor it belongs to::

        class Exp(Function):
            def forward(ctx, a):
                out = np.exp(a)
                ctx.save_for_backward(out)      # packed as SavedTensor(output 0, version 0)
                return out

            def backward(ctx, grad):
                (out,) = ctx.saved_tensors      # unpacked: checks out's version is still 0
                return grad * out

        y = x.exp(); y.add_(1); y.sum().backward()   # RuntimeError: y was modified in place
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
        return tuple(s.unpack(self) if type(s) is SavedTensor else s for s in packed)

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


class SavedTensor:
    """A value saved for backward (PyTorch's SavedVariable): packed once when forward
    returns, unpacked each time backward reads ``ctx.saved_tensors``.

    It remembers which tensor the array belongs to (an input, an output, or neither: an
    intermediate, kept as a constant) and that tensor's storage version. ``unpack`` refuses
    a tensor that was written in place since: the value backward needs is gone.
    """

    __slots__ = ("tensor", "storage", "array", "version", "output_nr")

    def __init__(
        self,
        tensor: Any = None,
        storage: Any = None,
        array: Any = None,
        version: int = 0,
        output_nr: int = 0,
    ) -> None:
        self.tensor = tensor  # an input: kept as it is
        self.storage = storage  # an output: its storage (the node can't hold the output)
        self.array = array
        self.version = version
        self.output_nr = output_nr

    @staticmethod
    def pack(value: Any, inputs: list, outputs: tuple, raws: tuple) -> Any:
        """Find the tensor a saved array belongs to (by identity), with its storage version."""
        if value is None or isinstance(value, (int, float, complex, str)):
            return value
        if isinstance(value, Tensor):
            return SavedTensor(tensor=value, version=value._storage.version)
        for t in inputs:
            if value is t._data:
                return SavedTensor(tensor=t, version=t._storage.version)
        for k, r in enumerate(raws):
            if value is r:
                o = outputs[k]
                storage = o._storage
                return SavedTensor(None, storage, o._data, storage.version, k)
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return SavedTensor(array=value)  # an intermediate array: a constant for backward
        return value

    def unpack(self, node: Node) -> Tensor:
        """The saved tensor, after checking that nothing wrote to it since it was saved."""
        t = self.tensor
        if t is not None:
            if t._storage.version != self.version:
                raise RuntimeError(_modified_message(t._data, t._storage.version, self, node))
            return t
        storage = self.storage
        if storage is None:
            return Tensor._from_array(self.array)
        if storage.version != self.version:
            raise RuntimeError(_modified_message(self.array, storage.version, self, node))
        # A fresh tensor for the output, pointing back at the node that made it.
        t = Tensor._alias(storage, self.array)
        t._requires_grad = True
        t.grad_fn = node
        if self.output_nr:
            t._output_nr = self.output_nr
        return t


FREED_GRAPH_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _modified_message(data: Any, version: int, saved: SavedTensor, node: Node) -> str:
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{data.dtype.name} {tuple(data.shape)}] is at version {version}; "
        f"expected version {saved.version} instead. It was saved for backward by {node.name()}. "
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
    #: What the op asks of its tensors' dtypes, checked by ``_compute``: "floating" (softmax:
    #: no integer or bool input), "same kind" (matmul: no bool, not integers with floats
    #: and no float16/bfloat16 with another dtype, which PyTorch's BLAS ops refuse; float32
    #: with float64 promotes), "numeric" (sub: no bool tensor), or None (anything; most
    #: ops promote types).
    dtypes: ClassVar[str | None] = None
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
        if _autocast.dtypes:  # chapter 04: cast the inputs as the op's autocast category says
            args = autocast_inputs(cls.name, args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        if len(tensors) > 1:
            check_same_device(cls.name, tensors)
        node = None
        if _grad.enabled and cls.differentiable:
            for t in tensors:
                if t._requires_grad:
                    node = _new_node(cls, args)
                    break
        ctx = node if node is not None else Context((False,) * len(args))
        try:
            out, raw = cls._compute(ctx, args, kwargs)
        except (ValueError, TypeError, AttributeError) as err:
            if cls.broadcasting:  # explain a shape mismatch in terms of broadcasting
                _check_operands(cls.name, args)
                broadcast_shapes(*(t.shape for t in tensors), op=cls.name)
            if isinstance(err, AttributeError):
                raise
            raise RuntimeError(f"{cls.name}: {err} ({describe_inputs(args)})") from err
        if node is not None:
            _connect(node, tensors, out, raw)
        if _apply_hooks:
            _notify(cls, args, kwargs, out)
        return out

    @classmethod
    def _compute(cls, ctx: Context, args: tuple, kwargs: dict) -> tuple[Any, Any]:
        """Default: raw arrays in, fresh contiguous tensors out. Returns (tensors, arrays).

        Bad input is named here: dtypes the op does not compute in (``dtypes``), and a first
        operand that is no tensor (``exp([1.0])``), which ``apply`` reports with the op."""
        if cls.dtypes is not None:
            check_dtypes(cls.name, cls.dtypes, args)
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        forward = cls._kernel(args) if _kernels_registered else cls.forward
        try:
            out = forward(ctx, *raw, **kwargs)
            if isinstance(out, tuple):
                return tuple(Tensor._from_array(o) for o in out), out
            return Tensor._from_array(out), out
        except (ValueError, TypeError, AttributeError):
            if args and not isinstance(args[0], Tensor):
                _check_operand(args[0])
            raise

    @classmethod
    def _kernel(cls, args: tuple) -> Any:
        """The code that computes this op on its inputs' device: a kernel the device's
        backend registered for it, or (by default) ``forward``."""
        if _kernels_registered:
            for a in args:
                if isinstance(a, Tensor):
                    kernel = backend.kernel_for(cls, a._storage.device.type)
                    return cls.forward if kernel is None else kernel
        return cls.forward


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


def autocast_inputs(op: str, args: tuple) -> tuple:
    """``args`` with their tensors cast as the autocast policy says for op ``op`` (chapter 04).

    ``apply`` calls it for every op while autocast is on; the losses, composites that
    PyTorch's dispatcher treats as single ops, call it for themselves.
    """
    if not _autocast.dtypes:
        return args
    from .amp.autocast_mode import cast_inputs  # the policy builds on the ops: imported late

    return cast_inputs(op, args)


def _check_operands(op: str, args: tuple) -> None:
    """An elementwise op takes tensors and numbers: say so when given anything else."""
    for a in args:
        if not isinstance(a, (Tensor, int, float, bool, complex)) and not hasattr(a, "dtype"):
            raise TypeError(
                f"{op}: unsupported operand type {type(a).__name__} ({a!r:.40}); "
                "expected a Tensor or a number"
            )


def check_dtypes(op: str, rule: str, args: tuple) -> None:
    """Refuse dtypes the op does not compute in (``Function.dtypes`` says which)."""
    first = None
    for a in args:  # the common case first, quickly: all one float dtype
        if isinstance(a, Tensor):
            d = a._data.dtype
            if first is None:
                first = d
            elif d is not first:
                break
    else:
        if first is None or first.kind == "f":
            return
    tensors = [a for a in args if isinstance(a, Tensor)]
    if rule == "numeric":
        for t in tensors:
            if t.dtype.name == "bool":
                raise RuntimeError(
                    f"{op}: not supported with a bool tensor (shape {t.shape}); use ~ or "
                    "logical_not to invert a mask, or convert it with .int() or .float()"
                )
    if "floating" in rule:
        for t in tensors:
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"{op}: expected a floating point tensor, but got dtype {t.dtype.name} "
                    f"(shape {t.shape}); convert it with .float() first"
                )
    if rule == "same kind" and tensors:
        kinds = [t.dtype.is_floating_point for t in tensors]
        dtypes_seen = {t.dtype for t in tensors}
        half = any(t.dtype.is_floating_point and t.dtype.itemsize == 2 for t in tensors)
        if (
            any(t.dtype.name == "bool" for t in tensors)
            or len(set(kinds)) > 1
            or (half and len(dtypes_seen) > 1)  # float16 with float32: autocast was meant
        ):
            dtypes = " and ".join(t.dtype.name for t in tensors)
            shapes = " and ".join(str(t.shape) for t in tensors)
            raise RuntimeError(
                f"{op}: expected operands of the same dtype kind (floating or integer, not bool; "
                f"float16/bfloat16 only with themselves), but got {dtypes} (shapes {shapes}); "
                "convert one with .to(dtype), or run the op under autocast"
            )


def _check_operand(a: Any) -> None:
    """An op's first operand, after its forward failed: a TypeError saying what it was when
    it is no tensor or number (``apply`` adds the op and the inputs)."""
    if isinstance(a, (int, float, bool, complex)) or hasattr(a, "dtype"):
        return  # a number, or an array: not what went wrong
    raise TypeError(f"unsupported operand type {type(a).__name__} ({a!r:.40}); expected a Tensor")


def register_apply_hook(hook: Any) -> RemovableHandle:
    """Call ``hook(function, args, kwargs, output)`` after every ``Function.apply``.

    Every computation on tensor data goes through ``apply``, so an apply hook sees all of
    it: ops, in-place writes, optimizer updates and gradient accumulation. Chapter 05's
    tracer records a program this way. Returns a handle with ``.remove()``.
    """
    return RemovableHandle(_apply_hooks, hook)


def _notify(cls: type[Function], args: tuple, kwargs: dict, out: Any) -> None:
    for hook in list(_apply_hooks.values()):
        hook(cls, args, kwargs, out)


def _new_node(cls: type[Function], args: tuple) -> Node:
    """The node for one call of ``cls``: one edge per tensor argument, pointing at the
    node that produced it (its ``grad_fn``), at its ``AccumulateGrad`` (a leaf that
    requires grad), or at nothing."""
    needs, edges, positions, meta = [], [], [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(i)
            data = a._data
            meta.append((data.shape, data.dtype))
            if a._requires_grad:
                needs.append(True)
                fn = a.grad_fn  # (gradient_edge, inlined: this runs for every recorded op)
                edges.append((fn, a._output_nr) if fn is not None else (leaf_accumulator(a), 0))
            else:
                needs.append(False)
                edges.append((None, 0))
        else:
            needs.append(False)
    node = cls._node_class(tuple(needs))
    node.next_functions = tuple(edges)
    node._input_pos = tuple(positions)
    node._input_meta = tuple(meta)
    if _anomaly.enabled:
        node._trace = forward_trace()
    return node


def gradient_edge(t: Tensor) -> tuple[Node, int]:
    """Where the gradient of ``t`` flows: (its grad_fn, which output) or its AccumulateGrad."""
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else (leaf_accumulator(t), 0)


def _connect(node: Node, tensors: list, out: Any, raw: Any) -> None:
    """After forward: make the node the outputs' grad_fn and pack what forward saved."""
    outs = out if isinstance(out, tuple) else (out,)
    raws = raw if isinstance(raw, tuple) else (raw,)
    skip = node.non_differentiable
    meta = []
    for i, o in enumerate(outs):
        data = o._data
        meta.append((data.shape, data.dtype))
        dt = data.dtype
        if (dt.kind != "f" and not is_floating(dt)) or (skip and any(raws[i] is s for s in skip)):
            continue  # integer/bool outputs and marked ones carry no gradient
        o._requires_grad = True
        o.grad_fn = node
        if i or o._output_nr:  # (an in-place op's target may have been output 1 before)
            o._output_nr = i
    node._output_meta = tuple(meta)
    saved = node.saved
    node._packed = tuple(SavedTensor.pack(s, tensors, outs, raws) for s in saved) if saved else ()
    node.saved = ()


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
        if isinstance(a, Tensor):
            parts.append(f"Tensor(shape={a.shape}, dtype={a.dtype.name}, device={a.device})")
        elif isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            parts.append(f"[{len(a)} tensors]")
        else:
            parts.append(repr(a) if len(repr(a)) < 40 else type(a).__name__)
    return "inputs: " + ", ".join(parts)
