"""Putting a learner's definition where the package's stood, and taking it out again.

A package piece is reached two ways: as an attribute of its owner (``shape.contiguous_strides``,
``Adam.step``) and as a name another module bound with ``from .shape import
contiguous_strides``. :class:`Patches` replaces both, and restores both in reverse order.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
_MISSING = object()


def _own_modules() -> Iterator[types.ModuleType]:
    """The framework's loaded modules (not the course tooling, not this package)."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "minitorch" or name.startswith("minitorch.")):
            continue
        if name.startswith(("minitorch.course", "minitorch.mine")):
            continue
        yield module


class Patches:
    """Replacements made so far, undone by :meth:`restore` (last made, first undone)."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def _set(self, owner: Any, name: str, value: Any) -> None:
        before = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
        self._undo.append((owner, name, before))
        setattr(owner, name, value)

    def replace(self, owner: Any, name: str, value: Any) -> None:
        """``owner.name = value``; when ``owner`` is a module, also every module of the
        framework that imported that object under that name."""
        original = getattr(owner, name)
        self._set(owner, name, value)
        if isinstance(owner, types.ModuleType):
            for module in _own_modules():
                if module is not owner and _same_piece(module.__dict__.get(name), original):
                    self._set(module, name, value)

    def replace_item(self, mapping: dict, key: str, value: Any) -> None:
        """``mapping[key] = value`` (a learner's globals: calls by that name go to ``value``)."""
        self._undo.append((mapping, key, mapping.get(key, _MISSING)))
        mapping[key] = value

    def restore(self) -> None:
        while self._undo:
            owner, name, before = self._undo.pop()
            if isinstance(owner, dict):
                if before is _MISSING:
                    owner.pop(name, None)
                else:
                    owner[name] = before
            elif before is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, before)


def _same_piece(found: Any, original: Any) -> bool:
    """``found`` is the original, or the same definition made again (a module reloaded
    since another one imported the name: their objects differ, their origin does not)."""
    if found is original:
        return True
    if found is None or not callable(found):
        return False
    key = ("__module__", "__qualname__")
    return all(getattr(found, k, None) == getattr(original, k, object()) for k in key)


def defined_by_learner(obj: Any) -> bool:
    """True for a function or class written outside the framework (a notebook, a script)."""
    if isinstance(obj, type):
        return not str(getattr(sys.modules.get(obj.__module__), "__file__", "") or "").startswith(
            _PACKAGE_DIR
        )
    code = getattr(inspect.unwrap(obj), "__code__", None) if callable(obj) else None
    return code is not None and not code.co_filename.startswith(_PACKAGE_DIR)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def unfinished(func: Any) -> bool:
    """True when ``func`` still holds the exercise's ``raise NotImplementedError(...)`` stub."""
    if isinstance(func, type):
        return any(
            unfinished(f) for f in vars(func).values() if callable(f) or hasattr(f, "__func__")
        )
    func = inspect.unwrap(getattr(func, "__func__", func))
    code = getattr(func, "__code__", None)
    return code is not None and any("NotImplementedError" in c.co_names for c in _codes(code))


def transplant(func: Any, cls: type) -> Any:
    """``func`` (a method of the learner's class) as a method of ``cls``: its zero-argument
    ``super()`` then means ``super(cls, self)``."""
    func = getattr(func, "__func__", func)
    code = func.__code__
    if "__class__" not in code.co_freevars:
        return func
    cells = tuple(
        types.CellType(cls) if name == "__class__" else cell
        for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=True)
    )
    moved = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, cells)
    moved.__kwdefaults__ = func.__kwdefaults__
    moved.__qualname__ = func.__qualname__
    moved.__doc__ = func.__doc__
    return moved


def _note(err: BaseException, exercise: str, label: str) -> None:
    note = (
        f"(raised in your {label}, exercise {exercise}, which minitorch.mine put in the "
        "framework: fix it there, or run outside mine.use to get the package's)"
    )
    notes = getattr(err, "__notes__", ())
    if not any(f"exercise {exercise}," in n for n in notes):
        err.add_note(note)


def _wrong_signature(err: BaseException, func: Callable, args: tuple, kwargs: dict) -> bool:
    """Did calling ``func`` fail before its body ran, because it takes other arguments?"""
    if not isinstance(err, TypeError) or err.__traceback__ is None:
        return False
    if err.__traceback__.tb_next is not None:  # raised inside func (or deeper): its own error
        return False
    try:
        inspect.signature(func).bind(*args, **kwargs)
    except TypeError:
        return True
    except ValueError:  # no signature to read (a builtin): say nothing more
        return False
    return False


def named(exercise: str, label: str, func: Callable) -> Callable:
    """``func``, whose errors carry a note naming the exercise it comes from (the error's
    type is kept, so the framework around it still sees what it expects)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            result = func(*args, **kwargs)
        except Exception as err:
            if _wrong_signature(err, func, args, kwargs):
                raise TypeError(
                    f"your {label} (exercise {exercise}) can't be called as the framework "
                    f"calls it: {err}. Give it the signature the exercise asks for (or run "
                    "outside mine.use to get the package's)"
                ) from err
            _note(err, exercise, label)
            raise
        if inspect.isgenerator(result):
            return _noted_generator(result, exercise, label)
        return result

    return run


def _noted_generator(gen: Iterator, exercise: str, label: str) -> Iterator:
    try:
        yield from gen
    except Exception as err:
        _note(err, exercise, label)
        raise
