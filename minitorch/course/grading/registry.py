"""The ``@exercise`` decorator, and collecting a chapter's tests from test modules."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from minitorch.course.grading.errors import GradingError
from minitorch.course.grading.tracebacks import describe_exception, file_location
from minitorch.course.manifest import Exercise

TestFunction = TypeVar("TestFunction", bound=Callable[..., Any])


@dataclass(frozen=True)
class Registration:
    """One exercise test: the function, the exercise id it grades, and for an id that
    is not in the manifest (an instructor's private exercise) its title and points."""

    exercise_id: str
    func: Callable[[Any], Any]
    title: str | None = None
    points: float | None = None
    private: bool = False

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def file(self) -> str:
        return self.func.__code__.co_filename


#: test module name -> test qualname -> registration, in definition order. Keyed by
#: module, so importing a module again replaces its tests instead of adding them twice.
_REGISTRY: dict[str, dict[str, Registration]] = {}


def exercise(
    exercise_id: str, *, title: str | None = None, points: float | None = None
) -> Callable[[TestFunction], TestFunction]:
    """Register a test of exercise ``exercise_id``; the function is returned unchanged.

    The test is a *judge*: a plain function of one argument, ``run``, that calls the
    learner's code through probes (``run(probe, *inputs)``, see
    :mod:`minitorch.course.grading.probes`) and raises AssertionError with a helpful message
    when it is wrong. An id that is not in the manifest needs ``title=`` and ``points=``.
    """
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise() takes an id such as '01.3', not {exercise_id!r}")

    def register(func: TestFunction) -> TestFunction:
        tests = _REGISTRY.setdefault(func.__module__, {})
        tests[func.__qualname__] = Registration(exercise_id, func, title, points)
        func.__exercise_id__ = exercise_id  # type: ignore[attr-defined]
        return func

    return register


def registered(module_name: str) -> list[Registration]:
    """The tests a module registered, in definition order."""
    return list(_REGISTRY.get(module_name, {}).values())


def load_test_module(path: str | Path) -> ModuleType:
    """Import a test module from its file (not as a package), fresh each time.

    The module's folder is on ``sys.path`` while it imports, as under pytest, so it can
    import helpers next to it. Raises :class:`GradingError` when the import fails.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise GradingError(f"no test module {path}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"_minitorch_tests_{path.stem}_{digest}"
    _REGISTRY.pop(name, None)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # any failure, SystemExit too, is reported the same way
        sys.modules.pop(name, None)
        where = file_location(exc, str(path))
        detail = f"{describe_exception(exc)} ({where})" if where else describe_exception(exc)
        raise GradingError(f"could not import the tests in {path}: {detail}") from exc
    finally:
        if str(path.parent) in sys.path:
            sys.path.remove(str(path.parent))
    return module


@dataclass
class ExerciseTests:
    """An exercise and the tests that grade it."""

    id: str
    title: str
    points: float
    tests: list[Registration] = field(default_factory=list)


@dataclass
class Suite:
    """The tests of a grading run: exercises with their judges, and the test modules
    (name, file, private?) whose probes the learner's process needs."""

    exercises: list[ExerciseTests]
    modules: list[tuple[str, Path, bool]]


def collect_suite(
    test_files: Iterable[str | Path],
    exercises: Sequence[Exercise],
    private_files: Iterable[str | Path] = (),
) -> Suite:
    """Import the test modules and group their tests by exercise.

    The chapter's ``exercises`` come first, in manifest order (with no tests if none
    were found); private exercises follow in the order their first test appears. Tests
    from ``private_files`` are private: their source is never shown.
    """
    grouped = {ex.id: ExerciseTests(ex.id, ex.title, ex.points) for ex in exercises}
    private = {Path(p).resolve() for p in private_files}
    modules = []
    for path in [*test_files, *private_files]:
        module = load_test_module(path)
        hidden = Path(path).resolve() in private
        modules.append((module.__name__, Path(path).resolve(), hidden))
        for reg in registered(module.__name__):
            if hidden:
                reg = replace(reg, private=True)
            if reg.exercise_id not in grouped:
                if reg.title is None or reg.points is None:
                    known = ", ".join(grouped) or "none"
                    raise GradingError(
                        f"test `{reg.name}` in {path} grades exercise {reg.exercise_id!r}, "
                        f"which is not in this chapter (its exercises: {known}); "
                        f"for a private exercise write "
                        f'@exercise("{reg.exercise_id}", title="...", points=...)'
                    )
                grouped[reg.exercise_id] = ExerciseTests(reg.exercise_id, reg.title, reg.points)
            grouped[reg.exercise_id].tests.append(reg)
    return Suite(list(grouped.values()), modules)


def collect(test_files: Iterable[str | Path], exercises: Sequence[Exercise]) -> list[ExerciseTests]:
    """Import the test modules and group their tests by exercise (see :func:`collect_suite`)."""
    return collect_suite(test_files, exercises).exercises
