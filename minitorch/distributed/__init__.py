"""Distributed data parallel training, as ``torch.distributed``: chapter 06.

- process groups and collectives: ``init_process_group``, ``all_reduce``, ``broadcast``,
  ``all_gather``, ``reduce_scatter``, ``send``/``recv``, ``barrier`` (``group``), on the
  ``local`` (embedded, ring algorithms), ``mpi`` (mpi4py) or ``nccl`` (cupy) backend;
- ``DistributedSampler``: each rank its share of the dataset, reshuffled by ``set_epoch``;
- ``DistributedDataParallel``: gradients averaged in buckets while backward runs;
- ``python -m minitorch.distributed.run --nproc N script.py``: the launcher, and
  ``spawn(fn, nprocs)`` for notebooks.
"""

from .buckets import assign_buckets
from .ddp import DistributedDataParallel
from .errors import DistBackendError, DistError, DistTimeoutError
from .group import (
    ProcessGroup,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    isend,
    recv,
    reduce_scatter,
    send,
)
from .reduce_op import ReduceOp
from .ring import ring_all_gather, ring_all_reduce, ring_reduce_scatter
from .sampler import DistributedSampler, shard_indices
from .spawn import WorkerFailed, spawn
from .work import Work

__all__ = [
    "DistBackendError",
    "DistributedDataParallel",
    "DistributedSampler",
    "get_default_backend_for_device",
    "DistError",
    "DistTimeoutError",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "WorkerFailed",
    "all_gather",
    "assign_buckets",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "isend",
    "recv",
    "ring_all_gather",
    "ring_all_reduce",
    "ring_reduce_scatter",
    "reduce_scatter",
    "send",
    "shard_indices",
    "spawn",
]
