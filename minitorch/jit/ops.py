"""Which ops a graph may contain, and what runs each one.

Three kinds, all looked up by the op's name (a saved graph holds only names, and loading
resolves them here, so a file can never make minitorch run code it chose):

- **Function ops** (``mul``, ``linear``, ``max_pool2d``, ...): a ``Function`` subclass of
  minitorch; the interpreter runs ``cls.apply(*args)``. Traced graphs are made of these.
- **Library calls** (``F.gelu``, ``minitorch.cat``, ``Tensor.flatten``): public functions of
  ``minitorch``'s functional API and ``nn.functional``, and Tensor methods. Scripted
  graphs use them for calls that are not a single Function.
- **Primitives**: ``get_attr`` (a parameter or buffer of the module), ``constant``, the
  control-flow nodes ``If`` and ``Loop``, ``fused`` (see ``fusion.py``) and ``prim.*``
  (Python's operators on ints, floats and bools, tuples, formatting, ``raise``).
"""

from __future__ import annotations

import inspect
import operator
from typing import Any

from ..function import Function
from ..ops.inplace import InplaceFunction
from ..ops.registry import elementwise, lookup

#: Ops that are not Functions or library calls: the interpreter handles them itself.
STRUCTURAL = frozenset({"get_attr", "constant", "If", "Loop", "fused"})

#: Elementwise Function ops that the fusion pass may merge (float in, same shape out): the
#: registered ops with a scalar formula (``minitorch.ops.scalar``).
ELEMENTWISE = frozenset(elementwise())

#: Ops whose result is not a function of their inputs alone (random draws, side effects).
_IMPURE_CALLS = frozenset({"F.dropout", "minitorch.rand", "minitorch.randn", "minitorch.randint"})


def is_ref(a: Any) -> bool:
    """Is a fused kernel op's argument a ref (``("input", i)``, ``("op", j)``), not a
    constant (a number, or a reduction's dims)?"""
    return isinstance(a, tuple) and len(a) == 2 and a[0] in ("input", "op")


def _prim_raise(kind: str, message: str) -> None:
    errors = {"ValueError": ValueError, "RuntimeError": RuntimeError, "TypeError": TypeError}
    err = errors.get(kind, RuntimeError)(message)
    err.raised_by_script = True  # the program's own raise: passed on as it is, at any depth
    raise err


def _prim_format(template: str, *values: Any) -> str:
    return template.format(*values)


#: ``prim.*``: Python operators and builtins on scalars (and tuples), by name.
PRIMS: dict[str, Any] = {
    "prim.add": operator.add, "prim.sub": operator.sub, "prim.mul": operator.mul,
    "prim.div": operator.truediv, "prim.floordiv": operator.floordiv,
    "prim.mod": operator.mod, "prim.pow": operator.pow, "prim.neg": operator.neg,
    "prim.not": operator.not_, "prim.eq": operator.eq, "prim.ne": operator.ne,
    "prim.lt": operator.lt, "prim.le": operator.le, "prim.gt": operator.gt,
    "prim.ge": operator.ge, "prim.and": lambda a, b: a and b, "prim.or": lambda a, b: a or b,
    "prim.contains": operator.contains, "prim.getitem": operator.getitem,
    "prim.tuple": lambda *xs: tuple(xs), "prim.len": len, "prim.int": int,
    "prim.float": float, "prim.bool": bool, "prim.min": min, "prim.max": max,
    "prim.attr": getattr, "prim.format": _prim_format, "prim.raise": _prim_raise,
    "prim.identity": lambda x: x,
    "prim.is_none": lambda x: x is None,
    # the outputs of a branch that raises (never read: the raise ends the run)
    "prim.uninitialized": lambda: None,
}  # fmt: skip

#: Tensor methods a scripted graph may not call (they touch autograd state or leave minitorch).
_DENIED_METHODS = frozenset(
    {"backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
     "numpy", "tolist", "set_", "requires_grad_", "detach_", "data_ptr", "untyped_storage"}
)  # fmt: skip


def op_name(cls: type[Function]) -> str:
    """The op name of a Function class (``Mul`` -> ``"mul"``); advanced indexing is ``index``."""
    from ..ops.indexing import Index

    return "index" if cls is Index else cls.name


def function_for(name: str) -> type[Function] | None:
    """The minitorch Function class with op name ``name`` (None if there is none): the op
    registry's (``minitorch.ops.registry``)."""
    return lookup(name)


def library_call(name: str) -> Any:
    """The public minitorch function behind ``minitorch.X``, ``F.X`` or ``Tensor.X``."""
    from .. import creation, ops
    from ..nn import functional
    from ..tensor import Tensor

    prefix, _, attr = name.partition(".")
    if not attr or attr.startswith("_") or "." in attr:
        return None
    if prefix == "Tensor":
        return None if attr in _DENIED_METHODS else getattr(Tensor, attr, None)
    if prefix == "F":
        fn = getattr(functional, attr, None)
        return fn if inspect.isfunction(fn) and fn.__module__ == functional.__name__ else None
    if prefix == "minitorch":
        for module in (ops, creation):
            fn = getattr(module, attr, None)
            if inspect.isfunction(fn) and fn.__module__ == module.__name__:
                return fn
    return None


def resolve(name: str) -> Any:
    """What runs op ``name``: a Function class, a library function, a prim; None if unknown."""
    if name in STRUCTURAL:
        return name
    if name in PRIMS:
        return PRIMS[name]
    if "." in name:
        return library_call(name)
    return function_for(name)


def is_known(name: str) -> bool:
    return resolve(name) is not None


def is_pure(node: Any) -> bool:
    """True when the node only computes its outputs from its inputs: it may be removed when
    unused, merged with an identical node, or evaluated ahead of time."""
    if node.op in ("If", "Loop", "prim.raise") or node.op in _IMPURE_CALLS:
        return False
    if node.op.startswith("Tensor.") and node.op.endswith("_"):
        return False  # an in-place method
    target = node.target
    if getattr(target, "pure", True) is False:  # a random draw: each one counts
        return False
    return not (isinstance(target, type) and issubclass(target, InplaceFunction))
