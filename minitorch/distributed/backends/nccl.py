"""The NCCL backend: cupy's NCCL bindings, one GPU per rank (``LOCAL_RANK`` picks it).

Rank 0 makes NCCL's unique id and hands it to the others over the local backend's TCP
rendezvous (``MASTER_ADDR:MASTER_PORT``). Each operation is enqueued on a stream and
polled until its deadline; on timeout the communicator is aborted. Arrays are cupy
arrays (tensors on ``device="cuda"``).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np

from ..errors import PeerTimeout
from ..reduce_op import ReduceOp
from ..transport import Mesh
from . import Backend


def load_nccl() -> tuple:
    """``(cupy, cupy.cuda.nccl)``, or an ImportError that says what is missing."""
    try:
        import cupy

        with warnings.catch_warnings():  # cupy warns, and gives a stub, without libnccl
            warnings.simplefilter("ignore", UserWarning)
            from cupy.cuda import nccl
        if not getattr(nccl, "available", True):
            raise ImportError("cupy finds no NCCL library (libnccl.so.2)")
    except ImportError as exc:
        raise ImportError(
            "the 'nccl' backend needs cupy with NCCL and a CUDA GPU: pip install -e \".[cuda]\""
        ) from exc
    return cupy, nccl


class NCCLBackend(Backend):
    name = "nccl"

    def __init__(self, rank: int, world_size: int, addr: str, port: int, timeout: float) -> None:
        cupy, nccl = load_nccl()
        self.cupy, self.nccl = cupy, nccl
        self.rank, self.world_size = rank, world_size
        cupy.cuda.Device(int(os.environ.get("LOCAL_RANK", rank))).use()
        bootstrap = Mesh(rank, world_size, addr, port, timeout)
        deadline = time.monotonic() + timeout
        try:
            if rank == 0:
                uid = np.frombuffer(bytes(nccl.get_unique_id()), dtype=np.uint8)
                for r in range(1, world_size):
                    bootstrap.send(r, uid, 0, deadline)
            else:
                uid = bootstrap.recv(0, 0, deadline)
        finally:
            bootstrap.close()
        self.comm = nccl.NcclCommunicator(world_size, tuple(int(b) for b in uid), rank)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self._ops = {
            ReduceOp.SUM: nccl.NCCL_SUM,
            ReduceOp.PRODUCT: nccl.NCCL_PROD,
            ReduceOp.MIN: nccl.NCCL_MIN,
            ReduceOp.MAX: nccl.NCCL_MAX,
        }
        self._dtypes = {
            np.dtype("float32"): nccl.NCCL_FLOAT32,
            np.dtype("float64"): nccl.NCCL_FLOAT64,
            np.dtype("float16"): nccl.NCCL_FLOAT16,
            np.dtype("int32"): nccl.NCCL_INT32,
            np.dtype("int64"): nccl.NCCL_INT64,
            np.dtype("uint8"): nccl.NCCL_UINT8,
            np.dtype("int8"): nccl.NCCL_INT8,
        }

    def _dtype(self, array: Any) -> int:
        try:
            return self._dtypes[np.dtype(array.dtype)]
        except KeyError:
            raise TypeError(f"nccl backend: unsupported dtype {array.dtype}") from None

    def _wait(self, deadline: float) -> None:
        while not self.stream.done:
            if time.monotonic() > deadline:
                self.comm.abort()
                raise PeerTimeout(None, 0.0)
            time.sleep(0.0001)

    def all_reduce(self, array: Any, op: ReduceOp, deadline: float) -> Any:
        out = self.cupy.empty_like(array)
        self.comm.allReduce(
            array.data.ptr,
            out.data.ptr,
            array.size,
            self._dtype(array),
            self._ops[op],
            self.stream.ptr,
        )
        self._wait(deadline)
        return out

    def broadcast(self, array: Any, src: int, deadline: float) -> Any:
        buf = array.copy()
        self.comm.bcast(buf.data.ptr, buf.size, self._dtype(buf), src, self.stream.ptr)
        self._wait(deadline)
        return buf

    def all_gather(self, array: Any, deadline: float) -> list:
        out = self.cupy.empty((self.world_size, *array.shape), dtype=array.dtype)
        self.comm.allGather(
            array.data.ptr, out.data.ptr, array.size, self._dtype(array), self.stream.ptr
        )
        self._wait(deadline)
        return list(out)

    def reduce_scatter(self, chunks: list, op: ReduceOp, deadline: float) -> Any:
        send = self.cupy.ascontiguousarray(self.cupy.stack(chunks))
        out = self.cupy.empty_like(chunks[0])
        self.comm.reduceScatter(
            send.data.ptr, out.data.ptr, out.size, self._dtype(out), self._ops[op], self.stream.ptr
        )
        self._wait(deadline)
        return out

    def send(self, array: Any, dst: int, tag: int, deadline: float) -> None:
        self.comm.send(array.data.ptr, array.size, self._dtype(array), dst, self.stream.ptr)
        self._wait(deadline)

    def recv(self, like: Any, src: int, tag: int, deadline: float) -> Any:
        buf = self.cupy.empty_like(like)
        self.comm.recv(buf.data.ptr, buf.size, self._dtype(buf), src, self.stream.ptr)
        self._wait(deadline)
        return buf

    def barrier(self, deadline: float) -> None:
        self.all_reduce(self.cupy.zeros(1, dtype=self.cupy.float32), ReduceOp.SUM, deadline)

    def close(self) -> None:
        self.comm.destroy()
