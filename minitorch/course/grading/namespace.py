"""The definitions a notebook made, as attributes, with helpful errors for missing ones."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class CellFailure:
    """A notebook cell that did not run to the end while the notebook was loading.

    ``cell`` counts every cell of the notebook from 1 (markdown ones too), the way a
    learner counts them on screen; ``problem`` says what happened, e.g. ``"raised
    SyntaxError: invalid syntax (line 3)"`` or ``"timed out after 10 s"``.
    """

    cell: int
    problem: str
    error_type: str = ""
    source: str = ""

    def __str__(self) -> str:
        return f"cell {self.cell} {self.problem}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellFailure:
        error_type, source = data.get("error_type", ""), data.get("source", "")
        return cls(data["cell"], data["problem"], error_type, source)


class MissingDefinition(AttributeError):
    """A test asked the notebook for a name it does not define."""

    def __init__(self, name: str, failures: Iterable[CellFailure] = (), live: bool = False):
        self.name = name
        failures = list(failures)
        definers = [f for f in failures if defines(f.source, name)]
        self.failures = definers or failures
        super().__init__(self._explain(bool(definers), live))

    @property
    def not_implemented(self) -> bool:
        """Whether the cells that could have defined the name stopped at NotImplementedError."""
        return bool(self.failures) and all(
            f.error_type == "NotImplementedError" for f in self.failures
        )

    def _explain(self, found_definer: bool, live: bool) -> str:
        head = f"the notebook defines no `{self.name}`"
        if found_definer:
            cells = "; ".join(str(f) for f in self.failures)
            return f"{head}: the cell that defines it failed: {cells}"
        if self.failures:
            cells = "; ".join(str(f) for f in self.failures)
            return f"{head} (cells that failed while loading: {cells})"
        if live:
            return f"{head}: run the cell that defines it first (and check the spelling)"
        return f"{head}: define it in the exercise cell (and check the spelling)"


def defines(source: str, name: str) -> bool:
    """Whether a cell's source looks like it defines ``name`` (def, class or assignment)."""
    word = re.escape(name)
    pattern = (
        rf"^\s*(?:async\s+)?(?:def|class)\s+{word}\b"
        rf"|^\s*{word}\s*(?::[^=\n]*)?=(?!=)"
        rf"|^\s*(?:from\s+\S+\s+)?import\s[^\n]*\b{word}\b"
    )
    return re.search(pattern, source, re.MULTILINE) is not None


_INTERNAL = frozenset({"_globals", "_failures", "_cells", "_origin", "_live", "_looked_up"})


class Namespace:
    """Attribute access to the definitions of a notebook (or of a live Jupyter kernel).

    ``nb.contiguous_strides`` is the notebook's function; a name the notebook does not
    define raises :class:`MissingDefinition` (an ``AttributeError``) that says which
    cells failed while loading. Like namedtuple's ``_fields``, the namespace's own
    attributes start with an underscore: ``_globals`` (the dict the cells ran in),
    ``_failures`` (the :class:`CellFailure` list), ``_cells`` (code file name -> cell
    number), ``_origin`` (the notebook's name) and ``_live`` (a running kernel).
    """

    def __init__(
        self,
        definitions: dict[str, Any],
        failures: Iterable[CellFailure] = (),
        cells: dict[str, int] | None = None,
        origin: str = "the notebook",
        live: bool = False,
    ) -> None:
        object.__setattr__(self, "_globals", definitions)
        object.__setattr__(self, "_failures", list(failures))
        object.__setattr__(self, "_cells", dict(cells or {}))
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_live", live)
        #: The names a probe looked up: the answer's definitions (the delegation watch
        #: scans these, not a class merely imported and left unused).
        object.__setattr__(self, "_looked_up", set())

    def __getattr__(self, name: str) -> Any:
        if name in _INTERNAL or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        try:
            value = self._globals[name]
        except KeyError:
            raise MissingDefinition(name, self._failures, self._live) from None
        self._looked_up.add(name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the notebook's definitions are read-only (cannot set `{name}`)")

    @contextmanager
    def _grader_sets(self, **sizes: int) -> Iterator[None]:
        """Within the block, the notebook's globals hold the sizes the grader chose (a
        tile, a block of threads), where the learner's kernels read them; the old values
        come back after. A judge reasons about its own sizes, never ones read back from
        the notebook (an int subclass there could report one value and use another)."""
        missing = object()
        old = {name: self._globals.get(name, missing) for name in sizes}
        self._globals.update({name: int(value) for name, value in sizes.items()})
        try:
            yield
        finally:
            for name, value in old.items():
                if value is missing:
                    self._globals.pop(name, None)
                else:
                    self._globals[name] = value

    def __contains__(self, name: object) -> bool:
        return name in self._globals

    def __dir__(self) -> list[str]:
        return sorted(k for k in self._globals if not k.startswith("__"))

    def __repr__(self) -> str:
        failed = f", {len(self._failures)} failed cells" if self._failures else ""
        return f"<Namespace of {self._origin}: {len(dir(self))} names{failed}>"
