"""Random elementwise programs for the fuser's property tests.

A program is a list of choices ``(kind, i, j, k)``, each adding one value computed from
the ones before it: kind 0 applies unary op ``k`` to value ``i``, kind 1 binary op ``k``
to values ``i`` and ``j``, kind 2 reduction ``k`` to value ``i`` (each index taken modulo
how many there are, so that any list of choices is a program). Hypothesis draws the
choices; each test picks its ops, inputs and outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def grow(
    values: list,
    choices: Sequence[tuple[int, int, int, int]],
    unary: Sequence[Callable[[Any], Any]],
    binary: Sequence[Callable[[Any, Any], Any]],
    reduce: Sequence[Callable[[Any], Any]] = (),
) -> list:
    """``values`` (the program's inputs) with one more value for each choice."""
    for kind, i, j, k in choices:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind == 0:
            values.append(unary[k % len(unary)](a))
        elif kind == 1:
            values.append(binary[k % len(binary)](a, b))
        else:
            values.append(reduce[k % len(reduce)](a))
    return values


def programs(kinds: int, ops: int, max_size: int) -> Any:
    """Hypothesis' strategy for the choices of a program of 2 to ``max_size`` steps, with
    ``kinds`` kinds of step (2: no reductions) and up to ``ops`` ops of a kind."""
    from hypothesis import strategies as st

    step = st.tuples(
        st.integers(0, kinds - 1), st.integers(0, 30), st.integers(0, 30), st.integers(0, ops - 1)
    )
    return st.lists(step, min_size=2, max_size=max_size)
