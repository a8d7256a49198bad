"""The backward graph, as ``torch.autograd.graph``: its nodes and what they keep.

A ``Node`` is one recorded op (a ``grad_fn``), of a class named as PyTorch names it
(``node_class``: ``MulBackward0``); ``next_functions`` are its edges, to the nodes that
made its inputs or to a leaf's ``AccumulateGrad``; a ``SavedTensor`` is a value forward
saved, checked against in-place changes when backward unpacks it. Recording the graph
while ops run is the layer of ``history.py``; walking it backward is ``engine.py``.
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar

from ..function import Context, Function
from ..tensor import Tensor


class Node(Context):
    """A node of the backward graph, i.e. a ``grad_fn``: the ctx of one recorded op.

    Each Function gets its own subclass, named like PyTorch's (``Mul`` records a
    ``MulBackward0``, a Function of your own ``MyFnBackward``: see ``node_class``), whose
    ``_function`` is the Function whose ``backward`` it runs.
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
    #: The order of the op's arguments on ``next_functions``, where PyTorch's node lists
    #: them in another one (its ``addmm`` takes the bias first); None: the op's own order.
    _edge_order: ClassVar[tuple[int, ...] | None] = None
    # Rarely used state lives in the instance __dict__, with these class-level defaults.
    _freed: bool = False
    _pre_hooks: dict | None = None  # output_nr -> {key: hook} (hooks of non-leaf tensors)
    _retained: dict | None = None  # output_nr -> weakref to a tensor that called retain_grad
    _trace: list | None = None  # forward stack, kept in anomaly mode

    def __init__(self, needs_input_grad: tuple[bool, ...] = ()) -> None:
        self.saved = ()
        self.needs_input_grad = needs_input_grad
        self.raw = self.inputs = None
        self._packed = None

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        where = ""
        if getattr(self._function, "tensors_in", False):  # a custom autograd.Function's node
            from ..dtypes import display_name

            where = f"{display_name}.autograd.function."
        return f"<{where}{type(self).__name__} object at {hex(id(self))}>"

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
        for t in inputs:  # (the op's arguments: tensors, and maybe numbers)
            if isinstance(t, Tensor) and value is t._data:
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


def gradient_edge(t: Tensor) -> tuple[Node, int]:
    """Where the gradient of ``t`` flows: (its grad_fn, which output) or its AccumulateGrad."""
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else (leaf_accumulator(t), 0)


def leaf_accumulator(t: Any) -> AccumulateGrad:
    """The one AccumulateGrad node of leaf ``t`` (the tensor holds it only weakly)."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is None or acc.variable is not t:  # (a copied tensor may carry another's ref)
        acc = AccumulateGrad(t)
        t._acc_ref = weakref.ref(acc)
    return acc


_NODE_CLASSES: dict[type, Any] = {}  # op -> the class of the nodes it records (or _Overloads)


def node_class(op: type[Function]) -> Any:
    """The graph-node class an op records, made on first use, named as PyTorch names it.

    A Function of your own records ``<Name>Backward`` (``MyReLU`` records
    ``MyReLUBackward``); the package's ops record PyTorch's names, which number the
    overloads of an op: ``Mul`` records ``MulBackward0``. An op whose name in PyTorch is
    another one declares ``grad_fn_name``: a string (``"AddmmBackward0"``), or a function
    of the op's arguments where PyTorch's name depends on them (``x.sum()`` records
    ``SumBackward0``, ``x.sum(1)`` ``SumBackward1``); then the result is an ``_Overloads``,
    which makes one class per name. An op may also declare ``records_as``, the op whose
    node it records (``add_`` records an ``AddBackward0``, as in PyTorch).
    """
    cls = _NODE_CLASSES.get(op)
    if cls is None:
        target = op.__dict__.get("records_as") or op
        if target is not op:
            cls = node_class(target)
        else:
            name = getattr(op, "grad_fn_name", None)
            if callable(name):
                cls = _Overloads(op, name)
            else:
                cls = _make_node_class(op, name or default_node_name(op))
        _NODE_CLASSES[op] = cls
    return cls


def default_node_name(op: type[Function]) -> str:
    """``MulBackward0`` for an op of the package (PyTorch's first overload), and
    ``MyFnBackward`` for a Function defined anywhere else, as PyTorch names them."""
    if op.__module__.startswith("minitorch.") and not op.__module__.startswith("minitorch.mine"):
        return f"{op.__name__}Backward0"
    return f"{op.__name__}Backward"


def _make_node_class(op: type[Function], name: str) -> type[Node]:
    """A Node subclass called ``name`` that runs ``op``'s backward; ``grad_fn_edges`` on
    the op (name -> argument positions) orders its edges as PyTorch's node does."""
    order = getattr(op, "grad_fn_edges", {}).get(name)
    attrs = {"__slots__": (), "_function": op, "__module__": op.__module__, "_edge_order": order}
    return type(name, (Node,), attrs)


class _Overloads:
    """The node classes of an op whose name depends on its arguments, one per name."""

    def __init__(self, op: type[Function], name_of: Any) -> None:
        self.op, self.name_of, self.classes = op, name_of, {}

    def pick(self, args: tuple) -> type[Node]:
        name = self.name_of(*args)
        cls = self.classes.get(name)
        if cls is None:
            cls = self.classes[name] = _make_node_class(self.op, name)
        return cls
