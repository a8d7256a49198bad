"""``fx.Proxy``: a stand-in for a value while a program is traced symbolically.

Every operation on a Proxy records a node instead of computing: ``x + 1`` a
``call_function`` of ``operator.add``, ``x.view(2, -1)`` a ``call_method``, ``x.shape`` a
``getattr``. minitorch's functions (``torch.relu``, ``F.gelu``) cannot see a Proxy as
PyTorch's ``__torch_function__`` lets them, so while a trace runs ``patched()`` wraps each
public function of ``minitorch`` and ``minitorch.nn.functional`` (and each ``fx.wrap``-ed
one): called on a Proxy, the wrapper records the call; called on tensors, it runs the
function. A Proxy has no value, so Python control flow on it raises ``TraceError``.
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import operator
import sys
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from .node import Node, map_aggregate


class TraceError(ValueError):
    """Symbolic tracing met something it cannot record (control flow on a traced value)."""


class Proxy:
    """A traced value: the ``node`` that will compute it, and the ``tracer`` recording."""

    def __init__(self, node: Node, tracer: Any = None) -> None:
        self.node, self.tracer = node, tracer

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> Attribute:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __getitem__(self, index: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.getitem, (self, index), {})

    def __bool__(self) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to "
            "be recorded, please call torch.fx.wrap('len') at module scope"
        )

    def __iter__(self) -> Iterator[Proxy]:
        """``a, b = proxy`` unpacks into ``proxy[0], proxy[1]`` (read from the caller's
        bytecode, as torch.fx does); any other iteration is control flow on the value."""
        frame = sys._getframe(1)
        instructions = list(dis.get_instructions(frame.f_code))
        at = bisect_left(instructions, frame.f_lasti, key=lambda i: i.offset)
        if at < len(instructions) and instructions[at].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(instructions[at].argval))
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in "
            "a loop or as a *args or **kwargs function argument: a traced value has no length "
            "or items to loop over (unpacking, a, b = x.chunk(2), does work)"
        )

    def keys(self) -> Any:
        raise TraceError("Proxy object cannot be unpacked as a mapping (**proxy)")

    __hash__ = object.__hash__


class Attribute(Proxy):
    """``proxy.name``: a ``call_method`` when called, a ``getattr`` node when used as a value."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            import builtins

            self._node = self.tracer.create_proxy(
                "call_function", builtins.getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _binary(name: str, reflected: bool) -> Any:
    fn = getattr(operator, name)

    def method(self: Proxy, other: Any) -> Proxy:
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", fn, args, {})

    return method


def _unary(name: str) -> Any:
    fn = getattr(operator, name)

    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", fn, (self,), {})

    return method


_REFLECTABLE = (
    "add",
    "sub",
    "mul",
    "floordiv",
    "truediv",
    "mod",
    "pow",
    "matmul",
    "lshift",
    "rshift",
    "and",
    "or",
    "xor",
)  # noqa: E501
for _name in _REFLECTABLE:
    _op = f"{_name}_" if _name in ("and", "or") else _name
    setattr(Proxy, f"__{_name}__", _binary(_op, False))
    setattr(Proxy, f"__r{_name}__", _binary(_op, True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Proxy, f"__{_name}__", _binary(_name, False))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(_name))
Proxy.__hash__ = object.__hash__  # (``__eq__`` records a node; a Proxy still hashes by id)


def has_proxy(args: Any) -> Proxy | None:
    """The first Proxy inside nested arguments, or None."""
    found: list[Proxy] = []
    map_aggregate(args, lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return found[0] if found else None


class Patched:
    """A function standing in for ``fn`` while tracing: records a ``call_function`` node when
    an argument is a Proxy, else calls ``fn``. It compares equal to ``fn``."""

    def __init__(self, fn: Any, wrapped: bool = False) -> None:
        self.fn, self.wrapped = fn, wrapped  # wrapped: by fx.wrap or autowrap (math)
        self.__name__ = getattr(fn, "__name__", "")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        proxy = has_proxy((args, kwargs))
        if proxy is None:
            return self.fn(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", self.fn, args, kwargs)
        if self.wrapped:
            out.node.meta["is_wrapped"] = True  # its code re-wraps it (torch.fx's marker)
        return out

    def __eq__(self, other: object) -> bool:
        return other is self.fn or other is self

    def __hash__(self) -> int:
        return hash(self.fn)

    def __repr__(self) -> str:
        return repr(self.fn)


#: ``fx.wrap``-ed functions: (the globals dict that holds it, its name).
_wrapped: list[tuple[dict, str]] = []
_depth = 0

#: A Tensor's operator with a Proxy on the right: the method torch.fx records it as (a
#: ``call_method`` on the tensor, as ``__torch_function__`` sees ``Tensor.__mul__``).
_TENSOR_OPERATORS = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
    "__floordiv__": "__floordiv__", "__mod__": "remainder", "__pow__": "pow",
    "__matmul__": "matmul", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__eq__": "eq", "__ne__": "ne", "__and__": "__and__", "__or__": "__or__",
    "__xor__": "__xor__", "__lshift__": "__lshift__", "__rshift__": "__rshift__",
}  # fmt: skip


def _record_on_proxy(method: Any, name: str) -> Any:
    def recording(self: Any, other: Any) -> Any:
        if isinstance(other, Proxy):
            return other.tracer.create_proxy("call_method", name, (self, other), {})
        return method(self, other)

    return recording


def _namespaces() -> list[Any]:
    """Whose functions record calls on Proxies: minitorch's, its functional API's, and
    ``math``'s (torch.fx's ``autowrap_modules``: ``math.sqrt(x.size(-1))`` is a node)."""
    import math

    import minitorch
    from minitorch.nn import functional

    return [minitorch, functional, math]


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """While tracing: minitorch's public functions (and ``fx.wrap``-ed ones) record calls on
    Proxies, and so do a Tensor's operators with a Proxy on the right."""
    global _depth
    if _depth:
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    from ..tensor import Tensor

    undo: list[tuple[Any, str, Any]] = []
    try:
        for space in _namespaces():
            for name, fn in list(vars(space).items()):
                if not name.startswith("_") and (inspect.isfunction(fn) or inspect.isbuiltin(fn)):
                    undo.append((space, name, fn))
                    setattr(space, name, Patched(fn, wrapped=space.__name__ == "math"))
        for namespace, name in _wrapped:
            fn = namespace[name]
            undo.append((namespace, name, fn))
            namespace[name] = Patched(fn, wrapped=True)
        for dunder, name in _TENSOR_OPERATORS.items():
            method = Tensor.__dict__.get(dunder)
            if method is not None:
                undo.append((Tensor, dunder, method))
                setattr(Tensor, dunder, _record_on_proxy(method, name))
        _depth += 1
        yield
    finally:
        _depth = 0
        for owner, name, original in reversed(undo):
            if isinstance(owner, dict):
                owner[name] = original
            else:
                setattr(owner, name, original)


def wrap(fn_or_name: Any) -> Any:
    """Record calls of this module-level function as ``call_function`` nodes instead of
    tracing through it (``torch.fx.wrap``); use it at module scope, by name or as a
    decorator."""
    frame = sys._getframe(1)
    globals_ = frame.f_globals
    name = fn_or_name if isinstance(fn_or_name, str) else getattr(fn_or_name, "__name__", None)
    if name is None or frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if not any(g is globals_ and n == name for g, n in _wrapped):
        _wrapped.append((globals_, name))
    return fn_or_name


def __getattr__(name: str) -> Any:
    """``GraphAppendingTracer``, which lives with the Tracer (importing it here would be
    circular)."""
    if name == "GraphAppendingTracer":
        from .tracer import GraphAppendingTracer

        return GraphAppendingTracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
