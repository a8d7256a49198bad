"""``Function.apply``: the one choke point every tensor operation goes through.

Each op is a ``Function`` subclass whose ``forward`` computes on raw backend arrays (numpy
or cupy) and whose ``backward``, right next to it, computes the input gradients. An op
*declares* what it is (``kind``): an ordinary op makes fresh outputs, a ``"view"`` maps
its input's Layout to a new one over the same storage, an ``"inplace"`` op writes into its
first argument, a ``"foreach"`` op runs over lists of tensors (an optimizer step), and a
``"composite"`` is written with other ops (a loss), and a ``"random"`` op draws a new tensor
from a generator (``rand``). There is exactly one ``apply``, and it handles every kind.

``apply`` runs a stack of *layers*, the way PyTorch's dispatcher stacks its keys and
JAX's ``bind`` walks its interpreters. This module holds the bottom of the stack
(``compute``: check devices, run the kernel on the backend, wrap the results as tensors)
and the mechanism; later chapters register their own layer on top when their package is
imported: autograd's recording (chapter 02), autocast (chapter 04), the tracer (chapter
05). A layer is a small object (``Layer``) that gets the call, may change it or look at
it, and passes it on with ``self.below(...)``. This module imports no chapter.

Below ``compute`` sits the backend seam (``minitorch.backend``): the input's backend may
provide its own kernel for an op (chapter 07); otherwise the op's ``forward`` runs.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from . import backend
from .backend import _registered as _kernels_registered
from .hooks import RemovableHandle
from .shape import broadcast_shapes
from .state import dispatch_files
from .tensor import Tensor


class Context:
    """Scratch space an op's forward leaves for its backward (the ``ctx`` argument).

    ``save_for_backward(*arrays)`` keeps values for backward; in backward,
    ``ctx.saved_tensors`` gives them back as Tensors. ``needs_input_grad[i]`` says whether
    argument ``i`` needs a gradient, so forward can skip saving and backward can skip
    computing what nobody needs. Any other attribute (``ctx.dim = dim``) is fine too.

    An op may instead keep its ``forward`` pure, arrays in and arrays out, and fill the
    context in a separate ``setup_context(ctx, inputs, output)`` (PyTorch 2's style): then
    a backend can swap the forward for a faster kernel without knowing what backward needs.
    """

    __slots__ = ("saved", "needs_input_grad", "inputs", "raw", "__dict__")

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


KINDS = ("op", "view", "inplace", "foreach", "set", "composite", "random")


class Function:
    """Base class of all ops. Subclasses define ``forward`` (and, if differentiable,
    ``backward``, which returns one gradient, a Tensor or None, per positional argument).

    Two ways to write ``forward``:

    - ``forward(ctx, *arrays, **params)``, saving what backward needs on ``ctx``;
    - pure ``forward(*arrays, **params)`` plus ``setup_context(ctx, inputs, output)``,
      where ``inputs`` are forward's positional arguments and ``output`` what it returned
      (keyword parameters, if forward takes any, are passed to both by name). Only a pure
      forward can be swapped for a backend's kernel (``Backend.register_kernel``).
    """

    #: The op's name in error messages (defaults to the lower-cased class name).
    name: ClassVar[str] = ""
    #: What the op is: one of ``KINDS`` (see the module docstring). ``apply`` reads it.
    kind: ClassVar[str] = "op"
    #: True for elementwise ops whose tensor inputs broadcast against each other.
    broadcasting: ClassVar[bool] = False
    #: False for ops whose outputs never carry a gradient (comparisons, argmax, ...).
    differentiable: ClassVar[bool] = True
    #: What the op asks of its tensors' dtypes, checked by ``compute``: "floating" (softmax:
    #: no integer or bool input), "same" (the matmul family: all tensors of one dtype, not
    #: bool, as PyTorch's BLAS ops: float32 with float64 is refused, not promoted),
    #: "numeric" (sub: no bool tensor), or None (anything; most ops promote types).
    dtypes: ClassVar[str | None] = None
    #: Set for ops written in the pure style: ``setup_context(ctx, inputs, output)``.
    setup_context: ClassVar[Callable | None] = None
    #: True: ``forward`` takes and returns Tensors, not arrays (PyTorch's
    #: ``torch.autograd.Function``, which ``minitorch.autograd.Function`` is).
    tensors_in: ClassVar[bool] = False
    #: For an op that is also a formula of other ops (LayerNorm, GELU): that formula, a
    #: function of the op's arguments written with ops. Eager runs the op itself, one
    #: forward and one backward; while a layer that reads ops one by one is on the stack
    #: (``Layer.reads_parts``: apply hooks and the tracer, autocast) the op runs as its
    #: parts, so those layers see the ops they know (PyTorch's decompositions).
    decomposition: ClassVar[Callable | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__.lower()
        if cls.kind not in KINDS:
            raise TypeError(f"{cls.__name__}: kind must be one of {KINDS}, got {cls.kind!r}")
        if "apply" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} overrides Function.apply: there is one apply; declare the "
                f"op's kind instead (one of {KINDS})"
            )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        raise RuntimeError("this op has no backward: it is not differentiable")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op through the layer stack; the bottom layer computes it."""
        return _top(cls, args, kwargs, None)


class ViewFunction(Function):
    """An op that copies nothing: ``forward`` maps the input's Layout to the output's Layout.

    The result shares the input's storage, so writing through either is seen by both.
    """

    kind = "view"


# --- the layer stack -------------------------------------------------------------------------
class Layer:
    """One chapter's step of ``Function.apply``.

    A layer is called as ``layer(op, args, kwargs, ctx)`` with the op (a Function class),
    its arguments, and the context forward will fill (None until autograd makes one). It
    returns the op's outputs, and gets them by passing the call on with
    ``self.below(op, args, kwargs, ctx)``, changed or not: autocast casts ``args``,
    autograd makes the ``ctx`` a graph node and connects the outputs, the tracer records
    the call. Layers run in ``order``, lowest first (outermost).
    """

    #: Where the layer sits: lower runs first. 10 autocast, 20 observers, 30 autograd.
    order: ClassVar[int] = 50
    #: True for a layer that reads ops one by one (by name, or as a graph): while it is on
    #: the stack, an op with a ``decomposition`` runs as its parts (``_Decompose``).
    reads_parts: ClassVar[bool] = False
    #: The rest of the stack under this layer (set when the stack is built).
    below: Callable[[type, tuple, dict, Any], Any]

    def __call__(self, op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
        return self.below(op, args, kwargs, ctx)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} order={self.order}>"

    #: How many users want the layer on the stack (``engage``/``disengage``).
    _users: int = 0

    def engage(self) -> None:
        """One more user of this layer: the first one puts it on the stack. For a layer
        with work only now and then (autocast inside its regions, observers while a hook
        is registered), so that ordinary ops don't pay for it the rest of the time."""
        with _lock:
            self._users += 1
            if self._users == 1:
                register_layer(self)

    def disengage(self) -> None:
        """One user fewer: the last one takes the layer off the stack."""
        with _lock:
            self._users -= 1
            if self._users == 0:
                _LayerHandle(self).remove()


_layers: list[Layer] = []  # registered and switched on, in order
_lock = threading.RLock()


def register_layer(layer: Layer) -> RemovableHandle:
    """Put ``layer`` on the stack (in its ``order``); ``.remove()`` on the handle takes it off.

    A layer with nothing to do most of the time (autocast outside an autocast region)
    should be on the stack only while it has work: see ``Layer.engage``.
    """
    if not isinstance(layer, Layer):
        raise TypeError(f"register_layer: expected a Layer, got {type(layer).__name__}")
    with _lock:
        if any(existing is layer for existing in _layers):
            raise RuntimeError(f"register_layer: {layer!r} is on the stack already")
        _layers.append(layer)
        _layers.sort(key=lambda item: item.order)
        _rebuild()
    # anomaly mode's forward traces start below the layers' frames
    dispatch_files.add(os.path.abspath(inspect.getfile(type(layer))))
    return _LayerHandle(layer)


class _LayerHandle(RemovableHandle):
    def __init__(self, layer: Layer) -> None:
        self.layer = layer

    def remove(self) -> None:
        with _lock:
            if any(existing is self.layer for existing in _layers):
                _layers.remove(self.layer)
                _rebuild()


def layers() -> tuple[Layer, ...]:
    """The layers on the stack now, outermost first."""
    return tuple(_layers)


def _rebuild() -> None:
    """Chain the layers: each one's ``below`` is the next, the last one's is ``compute``;
    on top of them ``_Decompose`` while a layer that reads ops one by one is there."""
    global _top
    below = compute
    chain = list(_layers)
    if any(layer.reads_parts for layer in chain):
        chain.insert(0, _decompose)
    for layer in reversed(chain):
        layer.below = below
        below = layer.__call__  # (a bound method: the quickest thing to call)
    _top = below


class _Decompose(Layer):
    """Runs an op that declares a ``decomposition`` as that formula of other ops, each of
    which comes through ``apply`` in its turn; every other op goes on down the stack."""

    order = 0

    def __call__(self, op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
        if op.decomposition is not None:
            return op.decomposition(*args, **kwargs)
        return self.below(op, args, kwargs, ctx)


_decompose = _Decompose()


# --- the bottom of the stack: compute on the backend ---------------------------------------
def _forward(op: type[Function], ctx: Any, raw: list, kwargs: dict, n: int) -> Any:
    """Call the op's kernel: a backend's registered kernel for the device, or ``forward``;
    a pure forward without ``ctx``, the classic style with it. A given ``ctx`` keeps the
    arrays forward was given and returned (``inputs``, ``raw``): a pure op's
    ``setup_context`` reads them, and saved values are matched against them."""
    if op.tensors_in:
        return _forward_on_tensors(op, ctx, raw, kwargs, n)
    forward = kernel_for(op, raw) if _kernels_registered else op.forward
    if op.setup_context is not None:
        out = forward(*raw, **kwargs)
    else:
        out = forward(ctx if ctx is not None else Context((False,) * n), *raw, **kwargs)
    if ctx is not None:
        ctx.inputs, ctx.raw = raw, out
    return out


def _forward_on_tensors(op: type[Function], ctx: Any, raw: list, kwargs: dict, n: int) -> Any:
    """``forward`` of an op that computes on Tensors: it gets the arrays as Tensors that
    record nothing (as PyTorch runs a custom Function's forward: its inside is not part of
    the graph), and what it returns or saves goes back to arrays, so that autograd knows a
    saved input or output for the tensor it is."""

    def unwrap(x: Any) -> Any:
        return x._data if isinstance(x, Tensor) else x

    args = [Tensor._from_array(a) if hasattr(a, "shape") and hasattr(a, "dtype") else a
            for a in raw]  # fmt: skip
    if op.setup_context is not None:
        result = op.forward(*args, **kwargs)
        if ctx is not None:  # (PyTorch 2's style: setup_context sees Tensors too)
            op.setup_context(ctx, tuple(args), result, **kwargs)
    else:
        result = op.forward(ctx if ctx is not None else Context((False,) * n), *args, **kwargs)
    out = tuple(unwrap(o) for o in result) if isinstance(result, tuple) else unwrap(result)
    if ctx is not None:
        ctx.saved = tuple(unwrap(v) for v in ctx.saved)
        ctx.inputs, ctx.raw = raw, out
    return out


def kernel_for(op: type[Function], raw: list) -> Callable:
    """The code that computes ``op`` on its inputs' device: a kernel the device's backend
    registered for it, or (by default) the op's ``forward``."""
    for a in raw:
        if hasattr(a, "dtype") and hasattr(a, "shape"):
            kernel = backend.kernel_for(op, backend.of_array(a).type)
            return op.forward if kernel is None else kernel
    return op.forward


def compute(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """The bottom of the stack: run ``op`` on its arguments' backend arrays and wrap the
    results as tensors.

    An ordinary op takes tensors and makes fresh contiguous tensors; each other kind of op
    has its own way of turning tensors into the arrays its forward takes and its results
    back into tensors (``_COMPUTE``). Bad input is named here: devices that differ, dtypes
    the op does not compute in (``dtypes``), shapes that don't broadcast, and a first
    operand that is no tensor (``exp([1.0])``).
    """
    if op.kind != "op":
        return _COMPUTE[op.kind](op, args, kwargs, ctx)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if len(tensors) > 1:
        check_same_device(op.name, tensors)
    try:
        if op.dtypes is not None:
            check_dtypes(op.name, op.dtypes, args)
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        try:
            out = _forward(op, ctx, raw, kwargs, len(args))
        except (ValueError, TypeError, AttributeError):
            if args and not isinstance(args[0], Tensor):
                _check_operand(args[0])
            raise
        if isinstance(out, tuple):
            return tuple(Tensor._from_array(o) for o in out)
        return Tensor._from_array(out)
    except (ValueError, TypeError, AttributeError) as err:
        if op.broadcasting:  # explain a shape mismatch in terms of broadcasting
            _check_operands(op.name, args)
            broadcast_shapes(*(t.shape for t in tensors), op=op.name)
        if isinstance(err, AttributeError):
            raise
        raise RuntimeError(f"{op.name}: {err} ({describe_inputs(args)})") from err


_top: Callable = compute  # the stack: its outermost layer (just compute, with no layers)


def _compute_view(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """A view: forward maps the base's Layout to the view's; the storage is shared."""
    base, *rest = args
    layout = op.forward(ctx if ctx is not None else Context(), base.layout, *rest, **kwargs)
    out = base._view(*layout)
    out._base = base if base._base is None else base._base
    return out


def _compute_inplace(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """``forward(ctx, out, *arrays)`` writes into the first argument's memory; the storage's
    version counter goes up (so a value saved for backward that this overwrote is caught)."""
    target, *rest = args
    if not isinstance(target, Tensor):
        raise TypeError(f"{op.name}: expected a Tensor to write into, got {type(target)}")
    tensors = [target] + [a for a in rest if isinstance(a, Tensor)]
    if len(tensors) > 1:
        check_same_device(op.name, tensors)
    check_no_overlap(target, op.name)
    raw = [a._data if isinstance(a, Tensor) else a for a in args]
    try:
        _forward(op, ctx, raw, kwargs, len(args))
    except (ValueError, TypeError) as err:
        raise RuntimeError(f"{op.name}: {err} ({describe_inputs(args)})") from err
    target._storage.version += 1
    return target


def _compute_foreach(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """``forward(ctx, arrays, *args)`` over the first argument's list of tensors; list
    arguments are matched element by element, scalars shared. An in-place one (``inplace``
    True) counts a write on every tensor of its first list and returns None."""
    first, *rest = args
    tensors = tensor_list(op.name, first, "self")
    raw = [[t._data for t in tensors]]
    for a in rest:
        if isinstance(a, (list, tuple)):
            if len(a) != len(tensors):
                raise RuntimeError(
                    f"{op.name}: tensor lists must have the same length, got "
                    f"{len(tensors)} and {len(a)}"
                )
            if a and isinstance(a[0], Tensor):
                a = tensor_list(op.name, a, "other")
                for t, o in zip(tensors, a, strict=True):
                    check_same_device(op.name, [t, o])
                a = [t._data for t in a]
        raw.append(a)
    try:
        out = op.forward(Context(), *raw, **kwargs)
    except (ValueError, TypeError) as err:
        raise RuntimeError(f"{op.name}: {err}") from err
    if getattr(op, "inplace", False):
        for t in tensors:
            t._storage.version += 1
        return None
    return [Tensor._from_array(o) for o in out]


def _compute_set(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """``t.set_(source)``: t looks at source's storage and layout from now on."""
    target, source = args
    if not isinstance(target, Tensor) or not isinstance(source, Tensor):
        raise TypeError(
            f"{op.name}: expected two Tensors, got {type(target).__name__} and "
            f"{type(source).__name__}"
        )
    target._storage, target._data = source._storage, source._data
    target._strides, target._offset = source._strides, source._offset
    return target


def _compute_composite(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """An op written with other ops (``forward`` takes and returns tensors): each of them
    goes through ``apply`` in its turn."""
    return op.forward(*args, **kwargs)


def _compute_random(op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
    """A draw from a generator (``rand``, ``randn``, ...): forward makes the new tensor. It
    goes through ``apply`` so that a tracer records it as a node that draws again on every
    call of the graph, as eager code does, instead of baking in one draw."""
    return op.forward(*args, **kwargs)


_COMPUTE = {
    "random": _compute_random,
    "view": _compute_view,
    "inplace": _compute_inplace,
    "foreach": _compute_foreach,
    "set": _compute_set,
    "composite": _compute_composite,
}


def check_no_overlap(t: Tensor, op: str) -> None:
    """Refuse to write into a tensor whose elements share memory (after ``expand``)."""
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True)):
        raise RuntimeError(
            f"{op}: more than one element of the written-to tensor (shape {t.shape}, strides "
            f"{t.stride()}) refers to a single memory location, e.g. after expand(); "
            "clone() the tensor before writing to it"
        )


def tensor_list(op: str, tensors: Any, what: str) -> list:
    """A foreach op's list argument, checked: a list or tuple of tensors."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a list of tensors as {what}, got {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: element {i} of {what} is a {type(t).__name__}, not a Tensor")
    return list(tensors)


# --- observers: look at every op -------------------------------------------------------------
class _Observers(Layer):
    """Calls each registered ``hook(function, args, kwargs, output)`` after the op ran."""

    order = 20
    reads_parts = True  # (a hook sees the ops an op with a decomposition is made of)

    def __init__(self) -> None:
        self.hooks: dict = {}

    def __call__(self, op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
        out = self.below(op, args, kwargs, ctx)
        if op.kind != "composite":  # its own ops are seen one by one
            for hook in list(self.hooks.values()):
                hook(op, args, kwargs, out)
        return out


_observers = _Observers()


class _ObserverHandle(RemovableHandle):
    def remove(self) -> None:
        if self.id in self._hooks:  # (removing twice disengages once)
            super().remove()
            _observers.disengage()


def register_apply_hook(hook: Any) -> RemovableHandle:
    """Call ``hook(function, args, kwargs, output)`` after every op (a layer that only looks).

    Every computation on tensor data goes through ``apply``, so an apply hook sees all of
    it: ops, in-place writes, optimizer updates and gradient accumulation (a composite
    op, such as a loss, is seen as the ops it is made of). Returns a handle with
    ``.remove()``; while no hook is registered, the layer is off the stack.
    """
    handle = _ObserverHandle(_observers.hooks, hook)
    _observers.engage()
    return handle


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
    if rule == "same" and tensors:  # the matmul family, as PyTorch: one dtype, not bool
        if any(t.dtype.name == "bool" for t in tensors) or len({t.dtype for t in tensors}) > 1:
            dtypes = " and ".join(t.dtype.name for t in tensors)
            shapes = " and ".join(str(tuple(t.shape)) for t in tensors)
            raise RuntimeError(
                f"{op}: expected operands of the same dtype (and not bool), but got {dtypes} "
                f"(shapes {shapes}); convert one with .to(dtype), or run the op under autocast"
            )


def _check_operand(a: Any) -> None:
    """An op's first operand, after its forward failed: a TypeError saying what it was when
    it is no tensor or number (``apply`` adds the op and the inputs)."""
    if isinstance(a, (int, float, bool, complex)) or hasattr(a, "dtype"):
        return  # a number, or an array: not what went wrong
    raise TypeError(f"unsupported operand type {type(a).__name__} ({a!r:.40}); expected a Tensor")


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
