"""The ring algorithms, on plain arrays: what the local backend's collectives run.

N ranks stand in a ring; each sends only to its right neighbour (rank + 1) and receives
only from its left (rank - 1). An array is cut into N chunks.

- **reduce-scatter**: in step s (0 .. N-2) rank r sends chunk ``(r - s) % N`` and adds
  what arrives into chunk ``(r - s - 1) % N``. After N-1 steps rank r holds the full
  reduction of chunk ``(r + 1) % N``.
- **all-gather**: in step s rank r sends chunk ``(r + 1 - s) % N`` (starting with the
  one it owns) and stores what arrives as chunk ``(r - s) % N``. After N-1 steps every
  rank has every chunk.

All-reduce is the two in a row. Each rank sends 2(N-1) chunks of size n/N: 2(N-1)/N of
the data, nearly independent of N, which is why the ring is bandwidth-optimal.

``send(array)`` and ``recv()`` are the neighbour links, so the same code runs over TCP
sockets, over MPI, or over queues between threads (how chapter 06 grades it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Send = Callable[[Any], None]
Recv = Callable[[], Any]


def ring_reduce_scatter(
    chunks: list, rank: int, world_size: int, send: Send, recv: Recv, op: Callable = np.add
) -> list:
    """Reduce ``chunks`` around the ring; afterwards ``chunks[(rank + 1) % world_size]``
    holds the reduction over all ranks. Returns the (new) list of chunks."""
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank - step) % world_size])
        into = (rank - step - 1) % world_size
        chunks[into] = op(chunks[into], recv())
    return chunks


def ring_all_gather(chunks: list, rank: int, world_size: int, send: Send, recv: Recv) -> list:
    """Pass the chunk each rank owns (``(rank + 1) % world_size``) around the ring until
    every rank has all of them. Returns the (new) list of chunks."""
    chunks = list(chunks)
    for step in range(world_size - 1):
        send(chunks[(rank + 1 - step) % world_size])
        chunks[(rank - step) % world_size] = recv()
    return chunks


def ring_all_reduce(
    array: Any, rank: int, world_size: int, send: Send, recv: Recv, op: Callable = np.add
) -> Any:
    """All-reduce ``array`` (any shape) as reduce-scatter then all-gather over N chunks."""
    xp = _array_module(array)
    flat = array.reshape(-1)
    chunks = xp.array_split(flat, world_size)
    chunks = ring_reduce_scatter(chunks, rank, world_size, send, recv, op)
    chunks = ring_all_gather(chunks, rank, world_size, send, recv)
    return xp.concatenate(chunks).reshape(array.shape)


def ring_bytes_per_rank(nbytes: int, world_size: int) -> float:
    """What each rank sends (and receives) in a ring all-reduce: 2(N-1)/N of the data."""
    return 2 * (world_size - 1) / world_size * nbytes


def _array_module(array: Any) -> Any:
    if type(array).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np
