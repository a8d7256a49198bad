"""Guards on what a compiled function reads besides its arguments: the globals and closure
cells its code names, and the plain attributes of the module it is (``self.scale``).

A trace bakes what it read into the graph: a number as a constant, a tensor as a captured
value. ``torch.compile`` guards each such read and recompiles when one changes; so does
``minitorch.compile``. Numbers, strings and None are guarded by value (and type), anything
else (tensors, functions, classes) by identity; a captured tensor written in place is seen by
the guards on the graph's constants.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

from ..tensor import Tensor

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


class Guard:
    """One assumption of a compiled graph: ``check(args, kwargs)`` returns None when it
    holds, else a sentence saying how it failed."""

    def __init__(self, description: str, check: Callable[..., str | None]) -> None:
        self.description = description
        self.check = check

    def __repr__(self) -> str:
        return f"Guard({self.description})"


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _fingerprint(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return ("value", type(value), value)
    if isinstance(value, tuple) and all(isinstance(v, _SCALARS) for v in value):
        return ("value", tuple, value)
    return ("object", id(value))  # (a tensor written in place: the graph's constant guards)


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)} (id {id(value):#x})"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _guard(description: str, read: Callable[[], Any]) -> Guard:
    """A Guard that re-reads the value and compares its fingerprint with the one traced."""
    traced = read()
    print_as = _describe(traced)
    expected = _fingerprint(traced)

    def check(args: tuple, kwargs: dict) -> str | None:
        try:
            now = read()
        except (KeyError, AttributeError, ValueError):
            return f"{description} is gone"
        if _fingerprint(now) == expected:
            return None
        return f"{description} changed: it was {print_as} at trace time, it is now {_describe(now)}"

    return Guard(f"{description} unchanged", check)


def read_guards(fn: Any, module: Any) -> list[Guard]:
    """Guards on the globals and closure cells that
    ``fn``'s code reads, and on ``module``'s plain attributes and those of its submodules."""
    guards = []
    func = getattr(fn, "__func__", fn)
    code = getattr(func, "__code__", None)
    if code is not None:
        names = {n for c in _codes(code) for n in c.co_names}
        module_globals = func.__globals__
        for name in sorted(names):
            if name in module_globals and not isinstance(module_globals[name], types.ModuleType):
                guards.append(_guard(f"global {name!r}", lambda g=module_globals, n=name: g[n]))
        for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=True):
            read = lambda c=cell: c.cell_contents  # noqa: E731
            guards.append(_guard(f"closure variable {name!r}", read))
    if module is not None:
        for prefix, m in module.named_modules():
            for name, value in vars(m).items():
                # (parameters, buffers and submodules live in _-dicts; training has its
                # own guard)
                if name.startswith("_") or name == "training":
                    continue
                if isinstance(value, _SCALARS) or isinstance(value, (tuple, Tensor)):
                    where = f"self.{prefix + '.' if prefix else ''}{name}"
                    guards.append(_guard(where, lambda m=m, n=name: vars(m)[n]))
    return guards
