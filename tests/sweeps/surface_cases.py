"""Tricky inputs for the surface added since issue 25 and chapter 08, each written once
for both libraries: ``case(L)`` runs with ``L`` = ``minitorch`` and ``L`` = ``torch``.

A case is ``(op, name, call)`` or, where PyTorch has no such API (BPE), ``(op, name, call,
reference)``: ``reference()`` gives what ``call(minitorch)`` must give (or raises what it
must raise). ``op`` is the name an error message must contain.

Shared by ``sweep_surface.py`` (all of them, counted) and the differential tests in
``tests/unit/test_pytorch_surface_edges.py`` (all of them, asserted).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import numpy as np

Case = tuple  # (op, name, call[, reference])


def _t(L: Any, data: Any, dtype: str = "float32", **kw: Any) -> Any:
    """``data`` as a tensor of ``L`` (a nested list or a numpy array)."""
    return L.tensor(np.asarray(data).tolist(), dtype=getattr(L, dtype), **kw)


def _x(L: Any, shape: tuple = (3, 4), dtype: str = "float32", seed: int = 0) -> Any:
    values = np.random.default_rng(seed).standard_normal(shape).round(3)
    return L.tensor(values.tolist(), dtype=getattr(L, dtype)).reshape(shape)


def _strided(L: Any, dtype: str = "float32") -> Any:
    """A (3, 4) non-contiguous view (every other column of a (3, 8))."""
    return _x(L, (3, 8), dtype, seed=1)[:, ::2]


def _i(L: Any, data: Any) -> Any:
    return L.tensor(data, dtype=L.int64)


def _inputs() -> dict[str, Callable]:
    return {
        "2d": lambda L: _x(L),
        "strided": lambda L: _strided(L),
        "transposed": lambda L: _x(L, (4, 3)).t(),
        "empty": lambda L: _x(L, (0, 4)),
        "0d": lambda L: _t(L, 2.5),
        "nan": lambda L: _t(L, [[1.0, math.nan, -2.0, 3.0], [math.inf, 0.0, -math.inf, 1.0]]),
        "f64": lambda L: _x(L, (3, 4), "float64"),
        "int": lambda L: _i(L, [[3, -1, 2, 0], [5, 7, -4, 1]]),
    }


# --- indexing: one index rule for every indexing op -------------------------------------
def indexing_cases() -> list[Case]:
    cases: list[Case] = []
    idx = {
        "ok": [[0, 2], [1, 0], [2, 1]],
        "neg": [[0, -1], [1, 0], [2, 1]],
        "big": [[0, 4], [1, 0], [2, 1]],
        "huge": [[0, 100], [1, 0], [2, 1]],
    }
    for kind, rows in idx.items():
        for dim in (1, -1):
            cases.append(
                (
                    "gather",
                    f"gather dim={dim} index {kind}",
                    lambda L, r=rows, d=dim: L.gather(_x(L), d, _i(L, r)),
                )
            )
            cases.append(
                (
                    "gather",
                    f"gather strided dim={dim} index {kind}",
                    lambda L, r=rows, d=dim: _strided(L).gather(d, _i(L, r)),
                )
            )
            cases.append(
                (
                    "scatter",
                    f"scatter dim={dim} index {kind}",
                    lambda L, r=rows, d=dim: L.scatter(_x(L), d, _i(L, r), _x(L, (3, 2), seed=2)),
                )
            )
            cases.append(
                (
                    "scatter",
                    f"scatter value dim={dim} index {kind}",
                    lambda L, r=rows, d=dim: _x(L).scatter(d, _i(L, r), 7.0),
                )
            )
    gather0 = {"ok": [[0, 1, 2, 0]], "neg": [[0, -3, 2, 0]], "big": [[0, 3, 2, 0]]}
    for kind, rows in gather0.items():
        cases.append(
            ("gather", f"gather dim=0 index {kind}", lambda L, r=rows: L.gather(_x(L), 0, _i(L, r)))
        )
        cases.append(
            (
                "scatter",
                f"scatter_ dim=0 index {kind}",
                lambda L, r=rows: _x(L).scatter_(0, _i(L, r), _x(L, (1, 4), seed=3)),
            )
        )
    for kind, index in {"ok": [0, 2], "neg": [-1], "big": [3], "huge": [-9], "empty": []}.items():
        for dim in (0, 1, -1):
            cases.append(
                (
                    "index_select",
                    f"index_select dim={dim} {kind}",
                    lambda L, i=index, d=dim: L.index_select(_x(L), d, _i(L, i)),
                )
            )
        cases.append(
            (
                "index_select",
                f"index_select strided {kind}",
                lambda L, i=index: _strided(L).index_select(1, _i(L, i)),
            )
        )
    cases += [
        (
            "index_select",
            "index_select 0-d input index 0",
            lambda L: L.index_select(_t(L, 2.0), 0, _i(L, [0])),
        ),
        (
            "index_select",
            "index_select 0-d input index 1",
            lambda L: L.index_select(_t(L, 2.0), 0, _i(L, [1])),
        ),
        ("index_select", "index_select 0-d index", lambda L: L.index_select(_x(L), 1, _i(L, 1))),
        (
            "index_select",
            "index_select float index",
            lambda L: L.index_select(_x(L), 1, _t(L, [1.0])),
        ),
        (
            "index_select",
            "index_select empty input",
            lambda L: L.index_select(_x(L, (0, 4)), 1, _i(L, [1])),
        ),
        ("gather", "gather empty index", lambda L: L.gather(_x(L), 1, _i(L, [[], [], []]))),
        (
            "gather",
            "gather empty input, empty index",
            lambda L: L.gather(_x(L, (0, 4)), 1, L.zeros(0, 2, dtype=L.int64)),
        ),
        ("gather", "gather float index", lambda L: L.gather(_x(L), 1, _t(L, [[0.0]]))),
        ("gather", "gather 0-d", lambda L: L.gather(_t(L, 3.0), 0, _i(L, 0))),
        ("gather", "gather 0-d index -1", lambda L: L.gather(_t(L, 3.0), 0, _i(L, -1))),
        ("gather", "gather ndim mismatch", lambda L: L.gather(_x(L), 1, _i(L, [0, 1]))),
        ("gather", "gather dim 2", lambda L: L.gather(_x(L), 2, _i(L, [[0]]))),
        ("gather", "gather dim -3", lambda L: L.gather(_x(L), -3, _i(L, [[0]]))),
        (
            "gather",
            "gather int input",
            lambda L: L.gather(_i(L, [[1, 2], [3, 4]]), 1, _i(L, [[1], [0]])),
        ),
        (
            "scatter",
            "scatter float64 src into float32",
            lambda L: _x(L).scatter(1, _i(L, [[0]]), _x(L, (1, 1), "float64")),
        ),
        (
            "scatter",
            "scatter float32 src into float64",
            lambda L: _x(L, dtype="float64").scatter(1, _i(L, [[0]]), _x(L, (1, 1))),
        ),
        (
            "scatter",
            "scatter int src into float",
            lambda L: _x(L).scatter(1, _i(L, [[0]]), _i(L, [[5]])),
        ),
        (
            "scatter",
            "scatter int value 300 into int8",
            lambda L: L.zeros(2, 3, dtype=L.int8).scatter(1, _i(L, [[0], [1]]), 300),
        ),
        (
            "scatter",
            "scatter float value 2.5 into int",
            lambda L: L.zeros(2, 3, dtype=L.int64).scatter(1, _i(L, [[0], [1]]), 2.5),
        ),
        (
            "scatter",
            "scatter src smaller than index",
            lambda L: _x(L).scatter(1, _i(L, [[0, 1]]), _x(L, (1, 1))),
        ),
        ("scatter", "scatter 0-d", lambda L: L.scatter(_t(L, 1.0), 0, _i(L, 0), _t(L, 5.0))),
        (
            "scatter",
            "scatter empty index",
            lambda L: L.scatter(_x(L), 1, L.zeros(3, 0, dtype=L.int64), _x(L, (3, 1))),
        ),
        ("scatter", "scatter float index", lambda L: _x(L).scatter(1, _t(L, [[0.0]]), 1.0)),
        (
            "embedding",
            "embedding index -1",
            lambda L: L.nn.functional.embedding(_i(L, [0, -1]), _x(L, (5, 3))),
        ),
        (
            "embedding",
            "embedding index 5 of 5",
            lambda L: L.nn.functional.embedding(_i(L, [0, 5]), _x(L, (5, 3))),
        ),
        (
            "embedding",
            "embedding ok",
            lambda L: L.nn.functional.embedding(_i(L, [[0, 4]]), _x(L, (5, 3))),
        ),
        (
            "embedding",
            "embedding module index -1",
            lambda L: (L.manual_seed(0), L.nn.Embedding(4, 2)(_i(L, [-1])))[1].shape,
        ),
        (
            "embedding",
            "embedding float index",
            lambda L: L.nn.functional.embedding(_t(L, [0.0]), _x(L, (5, 3))),
        ),
        ("topk", "topk k=-1", lambda L: L.topk(_x(L), -1)),
        ("topk", "topk dim=2", lambda L: L.topk(_x(L), 1, dim=2)),
    ]
    return cases


# --- the rest of the indexing family: each with PyTorch's own rule for negative indices ---
def indexed_cases() -> list[Case]:
    cases: list[Case] = []
    vectors = {"ok": [0, 2], "neg": [-1], "neg big": [-5], "big": [4], "empty": [], "dup": [1, 1]}
    for kind, index in vectors.items():
        k, unique = len(index), list(dict.fromkeys(index))
        for dim in (1, -1):
            cases += [
                (
                    "index_add",
                    f"index_add dim={dim} {kind}",
                    lambda L, i=index, d=dim, k=k: _x(L).index_add(
                        d, _i(L, i), _x(L, (3, k), seed=4)
                    ),
                ),
                (
                    "index_copy",
                    f"index_copy dim={dim} {kind}",
                    # (a repeated index: which write wins is unspecified in PyTorch)
                    lambda L, i=unique, d=dim: _x(L).index_copy(
                        d, _i(L, i), _x(L, (3, len(i)), seed=4)
                    ),
                ),
                (
                    "index_fill",
                    f"index_fill dim={dim} {kind}",
                    lambda L, i=index, d=dim: _x(L).index_fill(d, _i(L, i), -2.5),
                ),
            ]
        cases.append(
            (
                "index_fill",
                f"index_fill strided {kind}",
                lambda L, i=index: _strided(L).index_fill(1, _i(L, i), 1.0),
            )
        )
    flat = {"ok": [0, 11], "neg": [-1, -12], "big": [12], "neg big": [-13], "2d": [[0, 1], [2, 3]]}
    for kind, index in flat.items():
        cases += [
            ("take", f"take {kind}", lambda L, i=index: L.take(_x(L), _i(L, i))),
            ("take", f"take strided {kind}", lambda L, i=index: L.take(_strided(L), _i(L, i))),
        ]
    for kind, rows in {
        "ok": [[0], [3], [1]],
        "neg": [[-1]],
        "big": [[4]],
        "bcast": [[0, 1]],
    }.items():
        cases.append(
            (
                "take_along_dim",
                f"take_along_dim {kind}",
                lambda L, r=rows: L.take_along_dim(_x(L), _i(L, r), 1),
            )
        )
    cases.append(
        ("take_along_dim", "take_along_dim flat", lambda L: L.take_along_dim(_x(L), _i(L, [5])))
    )
    for kind, rows in {"ok": [[0, 0], [1, 3]], "neg": [[-1]], "big": [[4]]}.items():
        cases.append(
            (
                "scatter_add",
                f"scatter_add {kind}",
                lambda L, r=rows: _x(L).scatter_add(1, _i(L, r), _x(L, (2, 2), seed=5)),
            )
        )
    cases += [
        (
            "index_add",
            "index_add float64 source",
            lambda L: _x(L).index_add(1, _i(L, [0]), _x(L, (3, 1), "float64")),
        ),
        (
            "index_add",
            "index_add alpha",
            lambda L: _x(L).index_add(0, _i(L, [2, 2]), _x(L, (2, 4)), alpha=3),
        ),
        (
            "index_add",
            "index_add wrong source shape",
            lambda L: _x(L).index_add(1, _i(L, [0]), _x(L, (2, 1))),
        ),
        (
            "index_add",
            "index_add 2-d index",
            lambda L: _x(L).index_add(1, _i(L, [[0]]), _x(L, (3, 1))),
        ),
        (
            "index_fill",
            "index_fill int8 with 300",
            lambda L: L.zeros(2, 3, dtype=L.int8).index_fill(1, _i(L, [0]), 300),
        ),
        (
            "index_fill",
            "index_fill int with 2.5",
            lambda L: L.zeros(2, 3, dtype=L.int64).index_fill(1, _i(L, [0]), 2.5),
        ),
        (
            "index_fill",
            "index_fill 0-d value",
            lambda L: _x(L).index_fill(0, _i(L, [1]), _t(L, 4.0)),
        ),
        (
            "scatter_add",
            "scatter_add float64 src",
            lambda L: _x(L).scatter_add(1, _i(L, [[0]]), _x(L, (1, 1), "float64")),
        ),
        (
            "scatter_add",
            "scatter_add src smaller",
            lambda L: _x(L).scatter_add(1, _i(L, [[0, 1]]), _x(L, (1, 1))),
        ),
        ("take", "take float index", lambda L: L.take(_x(L), _t(L, [0.0]))),
        ("take", "take 0-d", lambda L: L.take(_t(L, 3.0), _i(L, 0))),
        ("take", "take of empty", lambda L: L.take(L.zeros(0), _i(L, [0]))),
    ]
    masks = {"rows": [[True], [False], [True]], "full": np.eye(3, 4, dtype=bool).tolist(),
             "none": [[False] * 4] * 3, "all": [[True] * 4] * 3}  # fmt: skip
    for kind, mask in masks.items():
        for n in (12, 3):
            cases.append(
                ("masked_scatter", f"masked_scatter {kind} from {n}",
                 lambda L, m=mask, n=n: _x(L).masked_scatter(_t(L, m, "bool"), _x(L, (n,), seed=6)))
            )  # fmt: skip
    cases += [
        ("masked_scatter", "masked_scatter float64 source",
         lambda L: _x(L).masked_scatter(_x(L) > 0, _x(L, (12,), "float64"))),
        ("masked_scatter", "masked_scatter float mask",
         lambda L: _x(L).masked_scatter(_x(L), _x(L))),
        ("masked_scatter", "masked_scatter strided",
         lambda L: _strided(L).masked_scatter(_strided(L) > 0, _x(L, (12,)))),
        ("masked_scatter", "masked_scatter bad broadcast",
         lambda L: _x(L).masked_scatter(L.ones(2, 1, dtype=L.bool), _x(L, (12,)))),
    ]  # fmt: skip
    for spec in (3, 1, 8, [1, 5], [5, 1], [-2], [], [0, 0], [9]):
        cases.append(
            (
                "tensor_split",
                f"tensor_split arange(7) {spec}",
                lambda L, s=spec: L.tensor_split(L.arange(7), s),
            )
        )
    cases += [
        ("tensor_split", "tensor_split 0 sections", lambda L: L.tensor_split(L.arange(7), 0)),
        ("tensor_split", "tensor_split empty", lambda L: L.tensor_split(L.zeros(0), 3)),
        ("tensor_split", "tensor_split dim=-1", lambda L: L.tensor_split(_strided(L), 3, dim=-1)),
        ("tensor_split", "tensor_split 0-d", lambda L: L.tensor_split(_t(L, 1.0), 2)),
        ("unbind", "unbind dim=1", lambda L: L.unbind(_x(L), 1)),
        ("unbind", "unbind dim=-1 strided", lambda L: L.unbind(_strided(L), -1)),
        ("unbind", "unbind empty", lambda L: L.unbind(L.zeros(0, 3))),
        ("unbind", "unbind 0-d", lambda L: L.unbind(_t(L, 1.0))),
        ("unbind", "unbind dim=2", lambda L: L.unbind(_x(L), 2)),
        ("msort", "msort nan", lambda L: L.msort(_t(L, [[3.0, math.nan], [1.0, 2.0]]))),
        ("msort", "msort int", lambda L: L.msort(_i(L, [3, -1, 2]))),
        ("msort", "msort 0-d", lambda L: L.msort(_t(L, 1.0))),
    ]
    return cases


# --- fills: values out of their dtype's range ----------------------------------------------
def fill_cases() -> list[Case]:
    cases: list[Case] = []
    values = {
        "300": 300,
        "-129": -129,
        "128": 128,
        "127": 127,
        "2.5": 2.5,
        "nan": math.nan,
        "inf": math.inf,
        "1e40": 1e40,
        "70000": 70000.0,
        "True": True,
        "-1": -1,
    }
    for dtype in ("int8", "uint8", "int16", "int32", "bool", "float16"):
        for vname, value in values.items():
            cases.append(
                (
                    "masked_fill",
                    f"masked_fill {dtype} with {vname}",
                    lambda L, d=dtype, v=value: L.zeros(2, 2, dtype=getattr(L, d)).masked_fill(
                        _t(L, [[True, False], [False, True]], "bool"), v
                    ),
                )
            )
        for vname in ("300", "-129", "nan", "1e40", "2.5"):
            cases.append(
                (
                    "fill_",
                    f"fill_ {dtype} with {vname}",
                    lambda L, d=dtype, v=values[vname]: L.zeros(2, dtype=getattr(L, d)).fill_(v),
                )
            )
            cases.append(
                (
                    "full",
                    f"full {dtype} with {vname}",
                    lambda L, d=dtype, v=values[vname]: L.full((2,), v, dtype=getattr(L, d)),
                )
            )
    cases += [
        (
            "masked_fill",
            "masked_fill with an int8 tensor value 0-d",
            lambda L: L.zeros(2, dtype=L.int8).masked_fill(
                _t(L, [True, False], "bool"), _t(L, 3.0)
            ),
        ),
        (
            "masked_fill",
            "masked_fill strided",
            lambda L: _strided(L).masked_fill(_strided(L) > 0, -1.0),
        ),
        (
            "masked_fill",
            "masked_fill empty",
            lambda L: _x(L, (0, 4)).masked_fill(_x(L, (0, 4)) > 0, 1.0),
        ),
        (
            "masked_fill",
            "masked_fill_ in place int8 300",
            lambda L: L.zeros(2, dtype=L.int8).masked_fill_(_t(L, [True, False], "bool"), 300),
        ),
    ]
    return cases


# --- the matmul family's dtype rule ---------------------------------------------------------
def matmul_cases() -> list[Case]:
    cases: list[Case] = []
    shapes = {
        "mm": ((2, 3), (3, 2)),
        "mv": ((2, 3), (3,)),
        "dot": ((3,), (3,)),
        "bmm": ((2, 2, 3), (2, 3, 2)),
        "matmul": ((2, 3), (3, 2)),
    }
    pairs = [
        ("float32", "float64"),
        ("float64", "float32"),
        ("float32", "float16"),
        ("int64", "float32"),
        ("int64", "int64"),
        ("float16", "float16"),
        ("bfloat16", "bfloat16"),
        ("int32", "int64"),
        ("float64", "float64"),
    ]
    for op, (sa, sb) in shapes.items():
        for da, db in pairs:
            cases.append(
                (
                    op,
                    f"{op} {da} @ {db}",
                    lambda L, o=op, sa=sa, sb=sb, da=da, db=db: getattr(L, o)(
                        _x(L, sa, "float64").to(getattr(L, da)),
                        _x(L, sb, "float64", 1).to(getattr(L, db)),
                    ),
                )
            )
        cases.append(
            (
                op,
                f"{op} empty inner",
                lambda L, o=op, sa=sa, sb=sb: getattr(L, o)(
                    L.zeros(*sa[:-1], 0),
                    L.zeros(
                        *((sb[0], 0) if o == "bmm" else (0,)),
                        *sb[len(sb) - 1 if o != "bmm" else 2 :],
                    ),
                ),
            )
        ) if op in ("mm", "dot") else None
    cases = [c for c in cases if c is not None]
    cases += [
        ("mm", "mm strided", lambda L: L.mm(_strided(L), _x(L, (4, 2)))),
        ("mm", "mm transposed", lambda L: L.mm(_x(L, (4, 3)).t(), _x(L, (4, 2)))),
        ("mm", "mm 0-size", lambda L: L.mm(L.zeros(0, 3), L.zeros(3, 2))),
        ("mm", "mm 0-d", lambda L: L.mm(_t(L, 1.0), _x(L))),
        ("mv", "mv empty", lambda L: L.mv(L.zeros(0, 3), L.zeros(3))),
        ("dot", "dot empty", lambda L: L.dot(L.zeros(0), L.zeros(0))),
        ("dot", "dot 0-d", lambda L: L.dot(_t(L, 1.0), _t(L, 1.0))),
        ("dot", "dot nan", lambda L: L.dot(_t(L, [math.nan, 1.0]), _t(L, [0.0, 1.0]))),
    ]
    return cases


# --- reductions, splits, sorts with edge arguments -------------------------------------
def reduction_cases() -> list[Case]:
    cases: list[Case] = []
    inputs = _inputs()
    for op in ("var", "std"):
        for iname in ("2d", "strided", "empty", "0d", "nan", "f64"):
            mk = inputs[iname]
            for dname, kw in {
                "all": {},
                "dim=()": {"dim": ()},
                "dim=-1": {"dim": -1},
                "dim=(0,1)": {"dim": (0, 1)},
                "dim=[]": {"dim": []},
                "correction=0": {"correction": 0},
                "correction=5": {"dim": 0, "correction": 5},
                "keepdim": {"dim": 1, "keepdim": True},
            }.items():
                cases.append(
                    (
                        op,
                        f"{op} {iname} {dname}",
                        lambda L, o=op, mk=mk, kw=kw: getattr(L, o)(mk(L), **kw),
                    )
                )
        cases.append((op, f"{op} int", lambda L, o=op: getattr(L, o)(inputs["int"](L))))
        cases.append((op, f"{op} dim=3", lambda L, o=op: getattr(L, o)(_x(L), dim=3)))
        cases.append((op, f"{op} dim=(0,0)", lambda L, o=op: getattr(L, o)(_x(L), dim=(0, 0))))
    for op in ("sum", "mean"):
        for iname in ("2d", "empty", "0d"):
            for dim in ((), [], (0, -1)):
                cases.append(
                    (
                        op,
                        f"{op} {iname} dim={dim}",
                        lambda L, o=op, mk=inputs[iname], d=dim: getattr(L, o)(mk(L), dim=d),
                    )
                )
    # chunk / split
    for size in (0, 1, 5, 6, 7):
        for chunks in (1, 2, 3, 4, 8):
            cases.append(
                (
                    "chunk",
                    f"chunk {chunks} of {size}",
                    lambda L, s=size, c=chunks: [p.shape for p in L.zeros(s, 2).chunk(c)],
                )
            )
        for ss in (0, 1, 2, [size], [0, size]):
            cases.append(
                (
                    "split",
                    f"split {ss} of {size}",
                    lambda L, s=size, ss=ss: [p.shape for p in L.split(L.zeros(s, 2), ss)],
                )
            )
    cases += [
        ("chunk", "chunk 0", lambda L: L.zeros(4).chunk(0)),
        ("chunk", "chunk dim=-1 strided", lambda L: [p for p in _strided(L).chunk(3, dim=-1)]),
        ("chunk", "chunk 0-d", lambda L: _t(L, 1.0).chunk(1)),
        ("split", "split 0-d", lambda L: L.split(_t(L, 1.0), 1)),
        ("split", "split negative size", lambda L: L.split(L.zeros(4), -1)),
        ("split", "split sizes short", lambda L: L.split(L.zeros(4), [1, 2])),
        ("split", "split dim=-1", lambda L: L.split(_x(L), 3, dim=-1)),
    ]
    # sort / argsort / topk
    sortable = {
        "nan": lambda L: _t(L, [3.0, math.nan, 1.0, -math.inf, math.nan, math.inf, 1.0]),
        "ties": lambda L: _t(L, [2.0, 1.0, 2.0, 1.0, 2.0, 0.0]),
        "int": lambda L: _i(L, [3, -1, 3, 0, -1]),
        "bool": lambda L: _t(L, [True, False, True], "bool"),
        "2d": lambda L: _x(L),
        "strided": lambda L: _strided(L),
        "empty": lambda L: L.zeros(0),
        "0d": lambda L: _t(L, 1.0),
        "f16": lambda L: _t(L, [1.0, math.nan, -1.0, 1.0], "float16"),
    }
    for iname, mk in sortable.items():
        for desc in (False, True):
            cases.append(
                (
                    "sort",
                    f"sort {iname} descending={desc}",
                    lambda L, mk=mk, d=desc: L.sort(mk(L), descending=d, stable=True),
                )
            )
            cases.append(
                (
                    "argsort",
                    f"argsort {iname} descending={desc}",
                    lambda L, mk=mk, d=desc: L.argsort(mk(L), descending=d, stable=True),
                )
            )
            if iname not in ("empty", "bool"):
                cases.append(
                    (
                        "topk",
                        f"topk {iname} largest={not desc}",
                        lambda L, mk=mk, d=desc: L.topk(mk(L), 1, largest=not d).values,
                    )
                )
        cases.append(("sort", f"sort {iname} dim=0", lambda L, mk=mk: L.sort(mk(L), dim=0)))
    cases += [
        ("sort", "sort dim=1 of 1-d", lambda L: L.sort(_t(L, [1.0, 2.0]), dim=1)),
        ("argsort", "argsort dim=-2 of 1-d", lambda L: L.argsort(_t(L, [1.0, 2.0]), dim=-2)),
        ("topk", "topk nan k=3", lambda L: L.topk(sortable["nan"](L), 3).values),
        (
            "topk",
            "topk nan smallest k=3",
            lambda L: L.topk(sortable["nan"](L), 3, largest=False).values,
        ),
    ]
    return cases


# --- stacks ------------------------------------------------------------------------------
def stack_cases() -> list[Case]:
    cases: list[Case] = []
    groups = {
        "1d": lambda L: [_t(L, [1.0, 2.0]), _t(L, [3.0, 4.0])],
        "0d": lambda L: [_t(L, 1.0), _t(L, 2.0)],
        "2d": lambda L: [_x(L, (2, 3)), _x(L, (2, 3), seed=1)],
        "strided": lambda L: [_strided(L), _strided(L)],
        "ragged 1d": lambda L: [_t(L, [1.0]), _t(L, [1.0, 2.0])],
        "ragged 2d": lambda L: [_x(L, (2, 3)), _x(L, (3, 2))],
        "mixed dtypes": lambda L: [_t(L, [1.0]), _i(L, [2])],
        "empty list": lambda L: [],
        "empty tensors": lambda L: [L.zeros(0), L.zeros(0)],
        "mixed ndim": lambda L: [_t(L, [1.0, 2.0]), _x(L, (1, 2))],
    }
    for op in ("stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "cat"):
        for gname, mk in groups.items():
            cases.append((op, f"{op} {gname}", lambda L, o=op, mk=mk: getattr(L, o)(mk(L))))
    cases += [
        ("hstack", "hstack of lists", lambda L: L.hstack([[1.0, 2.0], [3.0]])),
        ("vstack", "vstack of a tensor", lambda L: L.vstack(_x(L))),
        ("stack", "stack dim=-1", lambda L: L.stack([_t(L, [1.0, 2.0])] * 2, dim=-1)),
        ("stack", "stack dim=3", lambda L: L.stack([_t(L, [1.0, 2.0])] * 2, dim=3)),
        ("hstack", "hstack None", lambda L: L.hstack(None)),
    ]
    return cases


# --- activations on integer tensors and float16/bfloat16 rounding ---------------------------
ACTIVATIONS = ("relu", "gelu", "sigmoid", "tanh", "silu", "leaky_relu", "elu", "softmax",
               "log_softmax", "softplus", "mish", "hardswish", "hardsigmoid")  # fmt: skip


def activation_cases() -> list[Case]:
    cases: list[Case] = []
    for name in ACTIVATIONS:
        kw = {"dim": -1} if "softmax" in name else {}
        for dtype in ("int64", "int32", "uint8", "bool"):
            cases.append(
                (
                    name,
                    f"F.{name} on {dtype}",
                    lambda L, n=name, d=dtype, kw=kw: getattr(L.nn.functional, n)(
                        L.ones(2, 3, dtype=getattr(L, d)), **kw
                    ),
                )
            )
        for dtype in ("float16", "bfloat16"):
            cases.append(
                (
                    name,
                    f"F.{name} {dtype} rounds once",
                    lambda L, n=name, d=dtype, kw=kw: getattr(L.nn.functional, n)(
                        (L.arange(-150, 151) / 25.0).to(getattr(L, d)), **kw
                    ),
                )
            )
    cases.append(
        ("softplus", "softplus past its threshold",
         lambda L: L.nn.functional.softplus(L.arange(-40, 41) / 2.0, beta=2, threshold=5))
    )  # fmt: skip
    unary = (
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "reciprocal",
        "log1p",
        "expm1",
        "abs",
        "neg",
        "log2",
        "log10",
        "tan",
        "atan",
        "floor",
        "square",
    )
    for name in unary:
        for dtype in ("float16", "bfloat16"):
            cases.append(
                (
                    name,
                    f"{name} {dtype} rounds once",
                    lambda L, n=name, d=dtype: getattr(L, n)(
                        (L.arange(1, 402) / 50.0).to(getattr(L, d))
                    ),
                )
            )
    binary = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "pow": lambda a, b: a**b,
    }
    for name, fn in binary.items():
        for dtype in ("float16", "bfloat16"):
            cases.append(
                (
                    name,
                    f"{name} {dtype} rounds once",
                    lambda L, fn=fn, d=dtype: fn(
                        (L.arange(1, 258) / 85.0).to(getattr(L, d)),
                        (L.arange(257, 0, -1) / 77.0).to(getattr(L, d)),
                    ),
                )
            )
    return cases


# --- in-place ops and their messages -------------------------------------------------------
def inplace_cases() -> list[Case]:
    return [
        ("add_", "int add_ float", lambda L: _i(L, [1, 2]).add_(1.5)),
        ("add_", "int add_ float tensor", lambda L: _i(L, [1, 2]).add_(_t(L, [0.5, 0.5]))),
        ("mul_", "int mul_ float", lambda L: _i(L, [1, 2]).mul_(1.5)),
        ("div_", "int div_ int", lambda L: _i(L, [1, 2]).div_(2)),
        ("sub_", "int8 sub_ float", lambda L: L.ones(2, dtype=L.int8).sub_(0.5)),
        ("add_", "int add_ int", lambda L: _i(L, [1, 2]).add_(3)),
        ("add_", "float32 add_ float64", lambda L: _t(L, [1.0]).add_(_t(L, [0.1], "float64"))),
        ("add_", "bool add_ int", lambda L: _t(L, [True], "bool").add_(1)),
        ("add_", "add_ not broadcastable", lambda L: L.ones(3).add_(L.ones(2, 3))),
        ("mul_", "mul_ not broadcastable", lambda L: L.ones(1, 3).mul_(L.ones(2, 3))),
        ("copy_", "copy_ not broadcastable", lambda L: L.ones(3).copy_(L.ones(2))),
        ("clamp_", "int clamp_ float", lambda L: _i(L, [1, 5]).clamp_(0.5, 2.5)),
    ]


# --- schedulers --------------------------------------------------------------------------
def _schedulers() -> dict[str, Callable]:
    S = "optim.lr_scheduler"  # noqa: N806 - the path, for the names below
    del S
    return {
        "StepLR": lambda L, o, **k: L.optim.lr_scheduler.StepLR(o, 2, gamma=0.5, **k),
        "MultiStepLR": lambda L, o, **k: L.optim.lr_scheduler.MultiStepLR(
            o, [2, 3, 5], gamma=0.5, **k
        ),
        "ExponentialLR": lambda L, o, **k: L.optim.lr_scheduler.ExponentialLR(o, 0.9, **k),
        "CosineAnnealingLR": lambda L, o, **k: L.optim.lr_scheduler.CosineAnnealingLR(
            o, 5, eta_min=0.01, **k
        ),
        "LinearLR": lambda L, o, **k: L.optim.lr_scheduler.LinearLR(
            o, start_factor=0.25, total_iters=4, **k
        ),
        "LambdaLR": lambda L, o, **k: L.optim.lr_scheduler.LambdaLR(o, _halving, **k),
    }


def _halving(epoch: int) -> float:
    return 0.5**epoch


def _opt(L: Any) -> Any:
    return L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)


def _round_trip(L: Any, make: Callable, steps: int) -> list:
    """Lrs of a scheduler restored from the state_dict of one ``steps`` in, stepped on."""
    first = make(L, _opt(L))
    for _ in range(steps):
        first.optimizer.step(), first.step()
    opt = _opt(L)
    second = make(L, opt)
    second.load_state_dict(first.state_dict())
    opt.param_groups[0]["lr"] = first.optimizer.param_groups[0]["lr"]
    lrs = []
    for _ in range(6):
        opt.step(), second.step()
        lrs.append(round(opt.param_groups[0]["lr"], 12))
    return lrs


def _run(L: Any, make: Callable, steps: int) -> list:
    s = make(L, _opt(L))
    lrs = []
    for _ in range(steps):
        s.optimizer.step(), s.step()
        lrs.append(round(s.get_last_lr()[0], 12))
    return lrs


def scheduler_cases() -> list[Case]:
    cases: list[Case] = []
    for name, make in _schedulers().items():
        cases.append((name, f"{name} 8 steps", lambda L, m=make: _run(L, m, 8)))
        for steps in (0, 1, 3, 4):
            cases.append(
                (
                    name,
                    f"{name} state_dict round trip at {steps}",
                    lambda L, m=make, s=steps: _round_trip(L, m, s),
                )
            )
        cases.append(
            (
                name,
                f"{name} last_epoch=5 on a fresh optimizer",
                lambda L, m=make: m(L, _opt(L), last_epoch=5).get_last_lr(),
            )
        )
        cases.append(
            (
                "initial_lr",
                f"{name} last_epoch=3 after initial_lr set",
                lambda L, m=make: _resumed(L, m),
            )
        )
    return cases


def _chained(L: Any, first: Callable, second: Callable) -> list:
    """Two schedulers stepping one optimizer (a warmup and a decay): their factors compose."""
    opt = _opt(L)
    a, b = first(L, opt), second(L, opt)
    lrs = []
    for _ in range(8):
        opt.step(), a.step(), b.step()
        lrs.append(round(opt.param_groups[0]["lr"], 12))
    return lrs


def chained_cases() -> list[Case]:
    makers = _schedulers()
    warmup = makers.pop("LinearLR")
    makers.pop("LambdaLR")  # (not chainable in PyTorch either: it sets initial_lr * f)
    return [
        ("LinearLR", f"LinearLR warmup with {name}", lambda L, m=make: _chained(L, warmup, m))
        for name, make in makers.items()
    ]


def _resumed(L: Any, make: Callable) -> list:
    opt = _opt(L)
    opt.param_groups[0]["initial_lr"] = 0.1
    s = make(L, opt, last_epoch=3)
    return [round(x, 12) for x in s.get_last_lr()]


# --- save / load -------------------------------------------------------------------------
def _reload(L: Any, obj: Any) -> Any:
    buffer = io.BytesIO()
    L.save(obj, buffer)
    buffer.seek(0)
    return L.load(buffer, weights_only=True)


def _shared_views(L: Any) -> list:
    base = L.arange(6.0)
    a, b = base[:4], base[2:]
    got = _reload(L, {"a": a, "b": b})
    got["a"][3] = 100.0
    return got["b"].tolist()


def _view_and_base(L: Any) -> list:
    base = L.arange(6.0).reshape(2, 3)
    got = _reload(L, [base, base.t()])
    got[0][0, 1] = -1.0
    return [got[1].tolist(), list(got[1].stride())]


def save_cases() -> list[Case]:
    return [
        (
            "save",
            "Parameter keeps its type",
            lambda L: type(_reload(L, L.nn.Parameter(L.ones(2)))).__name__,
        ),
        (
            "save",
            "Parameter keeps requires_grad",
            lambda L: _reload(L, L.nn.Parameter(L.ones(2))).requires_grad,
        ),
        (
            "save",
            "Parameter(requires_grad=False)",
            lambda L: _reload(L, L.nn.Parameter(L.ones(2), requires_grad=False)).requires_grad,
        ),
        (
            "save",
            "a leaf keeps requires_grad",
            lambda L: _reload(L, L.ones(2, requires_grad=True)).requires_grad,
        ),
        (
            "save",
            "a leaf in a dict keeps requires_grad",
            lambda L: _reload(L, {"w": L.ones(2, requires_grad=True)})["w"].is_leaf,
        ),
        ("save", "two views share storage", _shared_views),
        ("save", "a tensor and its transpose", _view_and_base),
        (
            "save",
            "a non-contiguous tensor keeps its strides",
            lambda L: list(_reload(L, _strided(L)).stride()),
        ),
        (
            "save",
            "a transposed tensor keeps its strides",
            lambda L: list(_reload(L, _x(L).t()).stride()),
        ),
        (
            "save",
            "the same tensor twice is one tensor",
            lambda L: (lambda got: got[0] is got[1])(_reload(L, [L.ones(2)] * 2)),
        ),
        (
            "save",
            "a non-leaf refuses or drops its graph",
            lambda L: _reload(L, L.ones(2, requires_grad=True) * 2).requires_grad,
        ),
        ("save", "a state_dict round trip", lambda L: _reload(L, {"w": _x(L)})["w"].tolist()),
        ("save", "a 0-d tensor", lambda L: _reload(L, _t(L, 3.0)).shape),
        ("save", "an empty tensor", lambda L: list(_reload(L, L.zeros(0, 3)).shape)),
        ("save", "a float16 tensor", lambda L: str(_reload(L, L.ones(2).half()).dtype)[-7:]),
    ]


# --- chapter 08: attention, the tokenizer, the GPT's pieces ------------------------------
def _sdpa(L: Any, **kw: Any) -> Any:
    q, k, v = (_x(L, (2, 3, 4), seed=s) for s in (0, 1, 2))
    return L.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def attention_cases() -> list[Case]:
    return [
        ("scaled_dot_product_attention", "sdpa plain", lambda L: _sdpa(L)),
        ("scaled_dot_product_attention", "sdpa causal", lambda L: _sdpa(L, is_causal=True)),
        ("scaled_dot_product_attention", "sdpa dropout_p=1.0", lambda L: _sdpa(L, dropout_p=1.0)),
        ("scaled_dot_product_attention", "sdpa dropout_p=1.5", lambda L: _sdpa(L, dropout_p=1.5)),
        ("scaled_dot_product_attention", "sdpa dropout_p=-0.1", lambda L: _sdpa(L, dropout_p=-0.1)),
        ("scaled_dot_product_attention", "sdpa scale=0.5", lambda L: _sdpa(L, scale=0.5)),
        (
            "scaled_dot_product_attention",
            "sdpa bool mask",
            lambda L: _sdpa(L, attn_mask=L.ones(3, 3, dtype=L.bool).tril()),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa float mask",
            lambda L: _sdpa(L, attn_mask=_x(L, (3, 3), seed=5)),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa mask and causal",
            lambda L: _sdpa(L, attn_mask=L.ones(3, 3, dtype=L.bool), is_causal=True),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa empty sequence",
            lambda L: L.nn.functional.scaled_dot_product_attention(*(L.zeros(2, 0, 4),) * 3),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa all masked row",
            lambda L: _sdpa(L, attn_mask=L.zeros(3, 3, dtype=L.bool)),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa mismatched head dim",
            lambda L: L.nn.functional.scaled_dot_product_attention(
                _x(L, (2, 3, 4)), _x(L, (2, 3, 5)), _x(L, (2, 3, 4))
            ),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa float64 with float32",
            lambda L: L.nn.functional.scaled_dot_product_attention(
                _x(L, (2, 3, 4), "float64"), _x(L, (2, 3, 4)), _x(L, (2, 3, 4))
            ),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa 1-d",
            lambda L: L.nn.functional.scaled_dot_product_attention(*(_x(L, (4,)),) * 3),
        ),
        (
            "scaled_dot_product_attention",
            "sdpa strided",
            lambda L: L.nn.functional.scaled_dot_product_attention(
                *(_x(L, (2, 4, 3)).transpose(1, 2),) * 3
            ),
        ),
    ]


def _tok() -> Any:
    from minitorch.text import BPETokenizer

    return BPETokenizer.train("hello hello world, hello there", 270)


def _mine_only(call: Callable) -> Callable:
    """A case only minitorch has: run ``call()`` for ``L`` = minitorch."""
    return lambda L: call()


def bpe_cases() -> list[Case]:
    from minitorch.text import BPETokenizer

    ids = lambda: _tok().encode("hello world")  # noqa: E731
    return [
        (
            "decode",
            "decode numpy int64s",
            _mine_only(lambda: _tok().decode(np.array(ids()))),
            lambda: "hello world",
        ),
        (
            "decode",
            "decode numpy scalars",
            _mine_only(lambda: _tok().decode([np.int32(104), np.uint8(105)])),
            lambda: "hi",
        ),
        (
            "decode",
            "decode a tensor",
            _mine_only(lambda: _tok().decode(__import__("minitorch").tensor(ids()))),
            lambda: "hello world",
        ),
        ("decode", "decode None", _mine_only(lambda: _tok().decode(None)), _raises(TypeError)),
        ("decode", "decode a str", _mine_only(lambda: _tok().decode("abc")), _raises(TypeError)),
        ("decode", "decode -1", _mine_only(lambda: _tok().decode([-1])), _raises(ValueError)),
        (
            "decode",
            "decode id past vocab",
            _mine_only(lambda: _tok().decode([10_000])),
            _raises(ValueError),
        ),
        ("decode", "decode a float", _mine_only(lambda: _tok().decode([1.0])), _raises(TypeError)),
        ("decode", "decode bool", _mine_only(lambda: _tok().decode([True])), _raises(TypeError)),
        ("decode", "decode empty", _mine_only(lambda: _tok().decode([])), lambda: ""),
        (
            "decode",
            "decode a partial UTF-8 char",
            _mine_only(lambda: _tok().decode([0xC3])),
            lambda: "\ufffd",
        ),
        ("encode", "encode empty", _mine_only(lambda: _tok().encode("")), lambda: []),
        ("encode", "encode None", _mine_only(lambda: _tok().encode(None)), _raises(TypeError)),
        ("encode", "encode bytes", _mine_only(lambda: _tok().encode(b"hi")), _raises(TypeError)),
        (
            "encode",
            "encode a lone surrogate",
            _mine_only(lambda: _tok().encode("\ud800")),
            _raises(ValueError),
        ),
        (
            "encode",
            "round trip unicode",
            _mine_only(lambda: _tok().decode(_tok().encode("héllo ✓ 😀"))),
            lambda: "héllo ✓ 😀",
        ),
        (
            "train",
            "train a lone surrogate",
            _mine_only(lambda: BPETokenizer.train("a\udc80b", 260)),
            _raises(ValueError),
        ),
        (
            "train",
            "train None",
            _mine_only(lambda: BPETokenizer.train(None, 260)),
            _raises(TypeError),
        ),
        (
            "train",
            "train vocab 255",
            _mine_only(lambda: BPETokenizer.train("abc", 255)),
            _raises(ValueError),
        ),
        (
            "train",
            "train vocab 256",
            _mine_only(lambda: BPETokenizer.train("abc", 256).vocab_size),
            lambda: 256,
        ),
        (
            "train",
            "train vocab a float",
            _mine_only(lambda: BPETokenizer.train("abc", 260.0)),
            _raises(TypeError),
        ),
        (
            "train",
            "train empty text",
            _mine_only(lambda: BPETokenizer.train("", 260).vocab_size),
            _raises(ValueError),
        ),
        (
            "train",
            "train one char",
            _mine_only(lambda: BPETokenizer.train("a", 260).vocab_size),
            _raises(ValueError),
        ),
        (
            "BPETokenizer",
            "merges not pairs",
            _mine_only(lambda: BPETokenizer([1, 2])),
            _raises(ValueError),
        ),
        (
            "BPETokenizer",
            "merges of strs",
            _mine_only(lambda: BPETokenizer([("a", "b")])),
            _raises(ValueError),
        ),
        (
            "BPETokenizer",
            "merges of None",
            _mine_only(lambda: BPETokenizer(None)),
            _raises(TypeError),
        ),
        (
            "BPETokenizer",
            "merges with a future id",
            _mine_only(lambda: BPETokenizer([(1, 300)])),
            _raises(ValueError),
        ),
        (
            "BPETokenizer",
            "merges of triples",
            _mine_only(lambda: BPETokenizer([(1, 2, 3)])),
            _raises(ValueError),
        ),
        (
            "BPETokenizer",
            "merges of numpy ints",
            _mine_only(lambda: BPETokenizer([(np.int64(104), np.int64(105))]).encode("hi")),
            lambda: [256],
        ),
    ]


def _quantized() -> Any:
    import minitorch as mt

    return mt.quantization.quantize_per_tensor(mt.ones(3), 0.1, 0, mt.qint8)


def quantized_cases() -> list[Case]:
    """PyTorch refuses most ops on a quantized tensor; minitorch names the op."""
    return [
        (op, f"QuantizedTensor {op}", _mine_only(call), _raises(RuntimeError))
        for op, call in [
            ("add", lambda: _quantized() + 1),
            ("add", lambda: 1 + _quantized()),
            ("mul", lambda: _quantized() * 2),
            ("neg", lambda: -_quantized()),
            ("sum", lambda: _quantized().sum()),
            ("exp", lambda: _quantized().exp()),
            ("getitem", lambda: _quantized()[0]),
            ("matmul", lambda: _quantized() @ _quantized()),
        ]
    ]


def _raises(kind: type) -> Callable:
    def reference() -> None:
        raise kind("(the reference raises)")

    reference.raises = kind  # type: ignore[attr-defined]
    return reference


def all_cases() -> list[Case]:
    return (
        indexing_cases()
        + indexed_cases()
        + fill_cases()
        + matmul_cases()
        + reduction_cases()
        + stack_cases()
        + activation_cases()
        + inplace_cases()
        + scheduler_cases()
        + chained_cases()
        + save_cases()
        + attention_cases()
        + bpe_cases()
        + quantized_cases()
    )
