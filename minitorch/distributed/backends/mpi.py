"""The MPI backend: mpi4py's nonblocking collectives, for jobs started by ``mpiexec``.

Rank and world size come from MPI, so ``mpiexec -n 4 python train.py`` (or ``-f
hostfile`` across machines) runs the same script as the launcher does. Every operation
is started nonblocking and polled until its deadline: MPI itself would wait forever.
MPI cannot say which rank is missing; a rank that dies usually makes ``mpiexec`` stop
the job.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import PeerTimeout
from ..reduce_op import ReduceOp
from . import Backend


def load_mpi() -> Any:
    """``mpi4py.MPI``, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(
            "the 'mpi' backend needs mpi4py and an MPI library: "
            'pip install -e ".[mpi]" (installs mpi4py and MPICH)'
        ) from exc
    return MPI


class MPIBackend(Backend):
    name = "mpi"

    def __init__(self, rank: int, world_size: int) -> None:
        mpi = load_mpi()
        self.MPI = mpi
        self.comm = mpi.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        for given, actual, what in (
            (rank, self.rank, "rank"),
            (world_size, self.world_size, "world_size"),
        ):
            if given not in (-1, None) and given != actual:
                raise ValueError(
                    f"init_process_group(backend='mpi'): {what}={given} but mpiexec started "
                    f"this process as {what} {actual}; leave {what} out under MPI"
                )
        self._ops = {
            ReduceOp.SUM: mpi.SUM,
            ReduceOp.PRODUCT: mpi.PROD,
            ReduceOp.MIN: mpi.MIN,
            ReduceOp.MAX: mpi.MAX,
        }

    def _wait(self, request: Any, deadline: float) -> None:
        spins = 0
        while not request.Test():
            if time.monotonic() > deadline:
                raise PeerTimeout(None, 0.0)
            spins += 1
            if spins > 100:
                time.sleep(0.0002)

    def all_reduce(self, array: Any, op: ReduceOp, deadline: float) -> Any:
        out = np.empty_like(array)
        self._wait(self.comm.Iallreduce(array, out, op=self._ops[op]), deadline)
        return out

    def broadcast(self, array: Any, src: int, deadline: float) -> Any:
        buf = np.array(array, copy=True)
        self._wait(self.comm.Ibcast(buf, root=src), deadline)
        return buf

    def all_gather(self, array: Any, deadline: float) -> list:
        out = np.empty((self.world_size, *array.shape), dtype=array.dtype)
        self._wait(self.comm.Iallgather(array, out), deadline)
        return list(out)

    def reduce_scatter(self, chunks: list, op: ReduceOp, deadline: float) -> Any:
        send = np.ascontiguousarray(np.stack(chunks))
        out = np.empty_like(chunks[0])
        self._wait(self.comm.Ireduce_scatter_block(send, out, op=self._ops[op]), deadline)
        return out

    def send(self, array: Any, dst: int, tag: int, deadline: float) -> None:
        self._wait(self.comm.Isend(np.ascontiguousarray(array), dest=dst, tag=tag), deadline)

    def recv(self, like: Any, src: int, tag: int, deadline: float) -> Any:
        buf = np.empty_like(like)
        self._wait(self.comm.Irecv(buf, source=src, tag=tag), deadline)
        return buf

    def barrier(self, deadline: float) -> None:
        self._wait(self.comm.Ibarrier(), deadline)

    def close(self) -> None:
        self.comm.Free()
