"""The backends a process group can run on, behind one interface.

A backend moves raw arrays (numpy, or cupy for NCCL) between ranks. Every method gets a
``deadline`` (``time.monotonic()``) and raises ``PeerGone`` / ``PeerTimeout`` (from
``..errors``) when a peer is gone or late; the process group turns those into errors that
name the collective. ``AVG`` never reaches a backend: the group sums and divides.

- ``local``: the embedded default, TCP on loopback, ring algorithms (``..ring``);
- ``mpi``: mpi4py, launched by ``mpiexec`` (any number of machines);
- ``nccl``: cupy's NCCL bindings (GPUs).
"""

from __future__ import annotations

from typing import Any

from ..reduce_op import ReduceOp


class Backend:
    """What a process group needs from a transport. Arrays are contiguous."""

    name = "?"
    rank: int
    world_size: int

    def all_reduce(self, array: Any, op: ReduceOp, deadline: float) -> Any:
        raise NotImplementedError

    def broadcast(self, array: Any, src: int, deadline: float) -> Any:
        raise NotImplementedError

    def all_gather(self, array: Any, deadline: float) -> list:
        raise NotImplementedError

    def reduce_scatter(self, chunks: list, op: ReduceOp, deadline: float) -> Any:
        raise NotImplementedError

    def send(self, array: Any, dst: int, tag: int, deadline: float) -> None:
        raise NotImplementedError

    def recv(self, like: Any, src: int, tag: int, deadline: float) -> Any:
        raise NotImplementedError

    def barrier(self, deadline: float) -> None:
        raise NotImplementedError

    def gone(self) -> list[int]:
        """Ranks known to have left (closed their connection); empty if unknown."""
        return []

    def close(self) -> None:
        pass


def make_backend(name: str, rank: int, world_size: int, addr: str, port: int, timeout: float):
    """The backend called ``name``, connected to its peers."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(rank, world_size, addr, port, timeout)
    if name == "mpi":
        from .mpi import MPIBackend

        return MPIBackend(rank, world_size)
    if name == "nccl":
        from .nccl import NCCLBackend

        return NCCLBackend(rank, world_size, addr, port, timeout)
    raise ValueError(f"init_process_group: unknown backend {name!r}; use 'local', 'mpi' or 'nccl'")
