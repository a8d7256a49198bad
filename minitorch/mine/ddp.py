"""Chapter 06's pieces in the framework: the ring collectives of the embedded backend, the
sampler's shard, DDP's bucket assignment and the bucket its hooks fill."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..tensor import Tensor
from .pieces import piece


def _module(name: str) -> Any:
    return importlib.import_module(f"minitorch.distributed.{name}")


@piece("06.1", "ring_reduce_scatter", site="the embedded backend's reduce_scatter and all_reduce")
def _reduce_scatter(mine: Any, ring_reduce_scatter: Any) -> None:
    ring = _module("ring")
    learner = mine.wrap("06.1", "ring_reduce_scatter", ring_reduce_scatter)
    package = ring.ring_reduce_scatter

    def run(chunks: list, rank: int, world_size: int, send: Any, recv: Any, op: Any = np.add):
        if op is not np.add:
            mine.package_ran("06.1", "a reduction other than SUM")
            return package(chunks, rank, world_size, send, recv, op)
        return learner(chunks, rank, world_size, send, recv)

    mine.patches.replace(ring, "ring_reduce_scatter", run)


@piece("06.2", "ring_all_gather", site="the embedded backend's all_gather and all_reduce")
def _all_gather(mine: Any, ring_all_gather: Any) -> None:
    ring = _module("ring")
    mine.patches.replace(
        ring, "ring_all_gather", mine.wrap("06.2", "ring_all_gather", ring_all_gather)
    )


@piece(
    "06.3",
    "ring_all_reduce",
    site="the embedded backend's all_reduce (DDP's buckets)",
    uses=("06.1", "06.2"),
)
def _all_reduce(mine: Any, ring_all_reduce: Any) -> None:
    ring = _module("ring")
    learner = mine.wrap("06.3", "ring_all_reduce", ring_all_reduce)
    package = ring.ring_all_reduce

    def run(array: Any, rank: int, world_size: int, send: Any, recv: Any, op: Any = np.add):
        if op is not np.add or not isinstance(array, np.ndarray):
            mine.package_ran("06.3", "a reduction other than SUM, or a GPU array")
            return package(array, rank, world_size, send, recv, op)
        return learner(array, rank, world_size, send, recv)

    mine.patches.replace(ring, "ring_all_reduce", run)


@piece("06.4", "shard", site="DistributedSampler: each rank's indices of an epoch")
def _shard(mine: Any, shard: Any) -> None:
    sampler = _module("sampler")
    learner = mine.wrap("06.4", "shard", shard)
    mine.patches.replace(sampler, "shard_indices", lambda *args: list(learner(*args)))


@piece("06.5", "assign_buckets", site="DistributedDataParallel: which parameters share a bucket")
def _assign(mine: Any, assign_buckets: Any) -> None:
    buckets = _module("buckets")
    learner = mine.wrap("06.5", "assign_buckets", assign_buckets)
    package = buckets.assign_buckets

    def run(sizes: Any, cap_bytes: int, keys: Any = None) -> list:
        if keys is not None and len(set(keys)) > 1:
            mine.package_ran("06.5", "parameters of several dtypes or devices")
            return package(sizes, cap_bytes, keys)
        return [list(b) for b in learner(list(sizes), cap_bytes)]

    mine.patches.replace(buckets, "assign_buckets", run)


@contextlib.contextmanager
def _hooks_held_back() -> Iterator[list]:
    """While the learner's bucket is built, its hook registrations are kept, not made: DDP
    calls the bucket from its own hook, which knows about ``no_sync``."""
    held: list = []
    original = Tensor.register_post_accumulate_grad_hook

    def hold(self: Tensor, hook: Any) -> None:
        held.append((self, hook))

    Tensor.register_post_accumulate_grad_hook = hold  # type: ignore[method-assign]
    try:
        yield held
    finally:
        Tensor.register_post_accumulate_grad_hook = original  # type: ignore[method-assign]


@piece(
    "06.6",
    "GradBucket",
    site="DistributedDataParallel's backward hooks: filling a bucket and launching it",
)
def _bucket(mine: Any, grad_bucket: Any) -> None:
    ddp = _module("ddp")
    cls = ddp.DistributedDataParallel
    package_init, package_ready = cls.__init__, cls._grad_ready
    ready_of = mine.wrap("06.6", "GradBucket._grad_ready", lambda b, p: b._grad_ready(p))

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        package_init(self, *args, **kwargs)
        plain = not self.find_unused_parameters and not self.gradient_as_bucket_view
        plain = plain and all(
            b.buffer.dtype.name == "float32" and b.buffer.device.type == "cpu"
            for b in self._buckets
        )
        if not plain:
            mine.package_ran("06.6", "find_unused_parameters, bucket views, or not float32 CPU")
            return
        yours = []
        for bucket in self._buckets:

            def launch(buffer: Any, bucket: Any = bucket) -> None:
                with ddp.no_grad():
                    bucket.buffer.copy_(Tensor._from_array(np.asarray(buffer, np.float32)))
                bucket.pending = 0
                self._launch_ready_buckets()

            with _hooks_held_back():
                yours.append(grad_bucket(bucket.params, launch))
        self._yours = yours

    def grad_ready(self: Any, param: Any) -> None:
        yours = self.__dict__.get("_yours")
        if yours is None or not self._sync_now:
            return package_ready(self, param)
        b, _ = self._mark_ready(param)
        ready_of(yours[b], param)

    package_finish = cls._finish_backward

    def finish_backward(self: Any) -> None:
        if self.__dict__.get("_yours") is not None:
            late = [b.index for b in self._buckets if b.work is None and self._ready]
            if late and not any(b.work is None for b in self._buckets[: late[0]]):
                bucket = self._buckets[late[0]]
                raise RuntimeError(
                    f"GradBucket (exercise 06.6): bucket {bucket.index} was never launched in "
                    f"this backward pass, though all its {len(bucket.params)} gradients were "
                    "ready: launch(buffer) must be called once its last gradient arrives, and "
                    "its count must start again for the next pass"
                )
        return package_finish(self)

    mine.patches.replace(cls, "__init__", init)
    mine.patches.replace(cls, "_grad_ready", grad_ready)
    mine.patches.replace(cls, "_finish_backward", finish_backward)
