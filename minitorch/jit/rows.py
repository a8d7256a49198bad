"""Row-local fusion: fused groups joined across reductions over trailing dims.

Elementwise fusion stops at a reduction: LayerNorm's ``mean`` splits it into groups, and
each group writes its result to memory for the reduction to read back. But a ``mean``
over the last dims of a ``(rows, ...)`` tensor only needs *its own rows*: computed on a
chunk of rows, it gives those rows' means. So a chain of elementwise ops, trailing
reductions and more elementwise ops on the results is *row-local*, and runs chunk by
chunk of rows, every intermediate in the cache: LayerNorm in one pass over its input,
as PyTorch's Inductor fuses a reduction with the loops around it.

``row_regions(graph, groups)`` merges ``group_elementwise``'s groups, single elementwise
ops and reductions into such regions; ``fuse_elementwise`` makes each region one ``fused``
node whose kernel runs the reductions per chunk (``FusedKernel.op_shapes``).
"""

from __future__ import annotations

from collections.abc import Callable

from .interpreter import _reads
from .ir import Graph, Node, Value, mutated_values
from .ops import ELEMENTWISE

#: The reductions a row-local region may hold: over trailing dims, with keepdim.
REDUCTIONS = frozenset({"mean", "sum"})

_FLOATS = ("float16", "float32", "float64")


def reduced_dims(node: Node) -> tuple[int, ...] | None:
    """The dims a reduction node reduces, made non-negative, when it is one a region may
    hold: ``mean``/``sum`` of one float tensor of known shape (at least 2 dims, at least 2
    rows) over dims that leave the rows alone (not dim 0), keeping them (keepdim), in the
    input's dtype; else None."""
    if node.op not in REDUCTIONS or node.kwargs or len(node.outputs) != 1:
        return None
    args = node.args
    if len(args) < 3 or (len(args) == 4 and args[3] is not None) or len(args) > 4:
        return None  # (sum's dtype= changes the dtype: not here)
    x, dims, keepdim = args[:3]
    out = node.outputs[0]
    if not isinstance(x, Value) or x.type != "Tensor" or x.shape is None or keepdim is not True:
        return None
    if x.dtype not in _FLOATS or out.dtype != x.dtype or out.shape is None:
        return None
    ndim = len(x.shape)
    if ndim < 2 or x.shape[0] < 2:
        return None
    dims = (dims,) if isinstance(dims, int) and not isinstance(dims, bool) else dims
    if not isinstance(dims, tuple) or not dims:
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) and -ndim <= d < ndim for d in dims):
        return None
    dims = tuple(sorted({d % ndim for d in dims}))
    return dims if 0 not in dims else None


def _rows_key(nodes: list[Node]) -> tuple[int, int] | None:
    """``(ndim, rows)`` shared by every node's output in a unit, or None."""
    keys = set()
    for n in nodes:
        shape = n.outputs[0].shape
        if shape is None or len(shape) < 2:
            return None
        keys.add((len(shape), shape[0]))
    return keys.pop() if len(keys) == 1 else None


def row_regions(
    graph: Graph, groups: list[list[Node]], fusible: Callable[[Node, set], bool]
) -> list[list[Node]]:
    """``groups`` (``group_elementwise``'s) with those joined across trailing reductions into
    row-local regions (see the module docstring), with single ops that ``fusible`` accepts.
    A region is only made where it holds a reduction and something more; merging never
    makes a region read, through another node, what it computes."""
    mutated = mutated_values(graph)
    nodes = list(graph.nodes)
    index = {id(n): i for i, n in enumerate(nodes)}
    grouped = {id(n) for g in groups for n in g}
    units: list[list[Node]] = [list(g) for g in groups]
    for n in nodes:
        if id(n) in grouped:
            continue
        if reduced_dims(n) is not None or (n.op in ELEMENTWISE and fusible(n, mutated)):
            units.append([n])
    keys = [_rows_key(u) for u in units]
    unit_of = {id(n): u for u, members in enumerate(units) for n in members}

    # descendants of every node, as bitsets over node positions (graphs are DAGs in order)
    users: dict[int, list[int]] = {}
    producer = {v: index[id(n)] for n in nodes for v in n.outputs}
    for i, n in enumerate(nodes):
        for v in _reads(n):
            if v in producer:
                users.setdefault(producer[v], []).append(i)
    below = [0] * len(nodes)
    for i in reversed(range(len(nodes))):
        bits = 0
        for u in users.get(i, ()):
            bits |= (1 << u) | below[u]
        below[i] = bits

    for unit in units:  # a group that reads what it computes through another node can't be
        bits = _bits(unit, index)  # one node (a wrong grouping: fuse_elementwise refuses it)
        if _reach(below, _reach(below, bits) & ~bits) & bits:
            raise RuntimeError("fuse_elementwise: could not order the fused graph (a cycle)")
    parent = list(range(len(units)))

    def find(u: int) -> int:
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    members: dict[int, int] = {u: _bits(units[u], index) for u in range(len(units))}
    reduces = {u: any(n.op in REDUCTIONS for n in units[u]) for u in range(len(units))}
    size = {u: 1 for u in range(len(units))}

    def reach(bits: int) -> int:
        return _reach(below, bits)

    order = sorted(range(len(units)), key=lambda u: min(index[id(n)] for n in units[u]))
    for b in order:
        if keys[b] is None:
            continue
        for n in units[b]:
            for v in _reads(n):
                if v not in producer or id(nodes[producer[v]]) not in unit_of:
                    continue
                a, rb = find(unit_of[id(nodes[producer[v]])]), find(b)
                if a == rb or keys[a] != keys[b]:
                    continue
                # a path a -> x -> b through a node x outside both would become a cycle
                outside = reach(members[a]) & ~(members[a] | members[rb])
                if reach(outside) & members[rb]:
                    continue
                parent[rb] = a
                members[a] |= members.pop(rb)
                reduces[a] = reduces[a] or reduces.pop(rb)
                size[a] += size.pop(rb)
    regions: dict[int, list[Node]] = {}
    for u in range(len(units)):
        regions.setdefault(find(u), []).extend(units[u])
    out = []
    for r, region in regions.items():
        if reduces[r] and size[r] > 1:
            out.append(sorted(region, key=lambda n: index[id(n)]))
        else:
            out.extend(units[u] for u in range(len(units)) if find(u) == r and len(units[u]) > 1)
    return out


def _reach(below: list[int], bits: int) -> int:
    """Every node below (reachable from) the nodes in ``bits``."""
    out = 0
    while bits:
        low = bits & -bits
        out |= below[low.bit_length() - 1]
        bits ^= low
    return out


def _bits(nodes: list[Node], index: dict) -> int:
    bits = 0
    for n in nodes:
        bits |= 1 << index[id(n)]
    return bits
