"""The embedded backend: processes of one machine over loopback TCP, ring collectives.

Nothing to install. ``all_reduce`` is the ring (reduce-scatter, then all-gather) of
``minitorch.distributed.ring``: each rank sends 2(N-1)/N of the data, to one neighbour.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..reduce_op import ReduceOp
from ..ring import ring_all_gather, ring_all_reduce, ring_reduce_scatter
from ..transport import Mesh
from . import Backend

_COLLECTIVE_TAG = -1  # user send/recv tags are >= 0
_UFUNCS = {
    ReduceOp.SUM: np.add,
    ReduceOp.PRODUCT: np.multiply,
    ReduceOp.MIN: np.minimum,
    ReduceOp.MAX: np.maximum,
}


class LocalBackend(Backend):
    name = "local"

    def __init__(self, rank: int, world_size: int, addr: str, port: int, timeout: float) -> None:
        self.rank = rank
        self.world_size = world_size
        self.mesh = Mesh(rank, world_size, addr, port, timeout)

    def _neighbours(self, deadline: float) -> tuple:
        right = (self.rank + 1) % self.world_size
        left = (self.rank - 1) % self.world_size
        send = partial(self.mesh.send, right, tag=_COLLECTIVE_TAG, deadline=deadline)
        recv = partial(self.mesh.recv, left, _COLLECTIVE_TAG, deadline)
        return send, recv

    def all_reduce(self, array: Any, op: ReduceOp, deadline: float) -> Any:
        if self.world_size == 1:
            return array.copy()
        send, recv = self._neighbours(deadline)
        return ring_all_reduce(array, self.rank, self.world_size, send, recv, _UFUNCS[op])

    def broadcast(self, array: Any, src: int, deadline: float) -> Any:
        if self.rank == src:
            for dst in range(self.world_size):
                if dst != src:
                    self.mesh.send(dst, array, _COLLECTIVE_TAG, deadline)
            return array
        return self.mesh.recv(src, _COLLECTIVE_TAG, deadline)

    def all_gather(self, array: Any, deadline: float) -> list:
        n = self.world_size
        if n == 1:
            return [array.copy()]
        # the ring's chunk j belongs to rank (j - 1) % n: each rank starts owning its own
        chunks: list = [None] * n
        chunks[(self.rank + 1) % n] = array
        send, recv = self._neighbours(deadline)
        chunks = ring_all_gather(chunks, self.rank, n, send, recv)
        return [chunks[(r + 1) % n] for r in range(n)]

    def reduce_scatter(self, chunks: list, op: ReduceOp, deadline: float) -> Any:
        n = self.world_size
        if n == 1:
            return chunks[0].copy()
        ring = [chunks[(j - 1) % n] for j in range(n)]
        send, recv = self._neighbours(deadline)
        ring = ring_reduce_scatter(ring, self.rank, n, send, recv, _UFUNCS[op])
        return ring[(self.rank + 1) % n]

    def send(self, array: Any, dst: int, tag: int, deadline: float) -> None:
        self.mesh.send(dst, array, tag, deadline)

    def recv(self, like: Any, src: int, tag: int, deadline: float) -> Any:
        return self.mesh.recv(src, tag, deadline)

    def barrier(self, deadline: float) -> None:
        self.all_reduce(np.zeros(1, dtype=np.float32), ReduceOp.SUM, deadline)

    def gone(self) -> list[int]:
        return self.mesh.gone()

    def close(self) -> None:
        self.mesh.close()
