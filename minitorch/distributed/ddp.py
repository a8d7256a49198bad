"""``DistributedDataParallel``: every rank trains a replica; backward averages gradients.

At construction rank 0's parameters and buffers are broadcast, so all replicas start equal,
and the parameters are grouped into buckets (``assign_buckets``). During backward a
post-accumulate-grad hook on each parameter copies its gradient into its bucket; when a
bucket's last gradient arrives (and every bucket before it has started), the bucket is
divided by the world size and its all-reduce starts *asynchronously*: communication
overlaps with the rest of backward. An end-of-backward callback (``queue_callback``)
waits for the last bucket and writes the averaged gradients back, so after
``loss.backward()`` every rank holds the same averaged ``.grad`` and the same
``optimizer.step()`` keeps the replicas equal.

With ``find_unused_parameters=True`` a parameter that got no gradient on this rank counts
as zeros in its bucket, and one more all-reduce finds the parameters *no* rank used:
those keep their ``.grad`` as it was (``None`` after ``zero_grad()``), as in PyTorch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..autograd import is_grad_enabled, queue_callback
from ..autograd.grad_mode import no_grad
from ..checks import as_bool, as_number
from ..creation import tensor
from ..nn.module import Module
from .buckets import Bucket, assign_buckets
from .group import ProcessGroup, _group, all_reduce, broadcast

_MB = 1024 * 1024


def _check_devices(module: Module, device_ids: Any, output_device: Any) -> None:
    """``device_ids``: None, or one device for a module on one GPU (PyTorch's rule)."""
    if device_ids is None and output_device is None:
        return
    if device_ids is not None and (
        isinstance(device_ids, (str, int)) or not isinstance(device_ids, (list, tuple))
    ):
        raise TypeError(
            f"DistributedDataParallel: device_ids must be None or a list of one device, but got "
            f"{type(device_ids).__name__} {device_ids!r}"
        )
    if device_ids is not None and len(device_ids) != 1:
        raise ValueError(
            f"DistributedDataParallel: device_ids can only be None or contain a single "
            f"element, but got {list(device_ids)}"
        )
    devices = sorted({str(p.device) for p in module.parameters()})
    if devices == ["cpu"]:
        raise ValueError(
            "DistributedDataParallel: device_ids and output_device arguments only work with "
            f"single-device GPU modules, but got device_ids {device_ids}, output_device "
            f"{output_device}, and module parameters on {devices}; leave them None on CPU"
        )


class DistributedDataParallel(Module):
    """Wrap ``module`` so that backward averages gradients over the process group.

    ``bucket_cap_mb``: bucket size in MiB. ``find_unused_parameters``: allow parameters
    that get no gradient in a backward pass (they contribute zeros); without it such a
    parameter is an error that names it. ``gradient_as_bucket_view``: parameters' ``.grad``
    are views into the bucket buffers (no copy in or out). ``broadcast_buffers``: copy rank
    0's buffers (BatchNorm statistics) to every rank before each forward.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        broadcast_buffers: bool = True,
        process_group: ProcessGroup | None = None,
        bucket_cap_mb: float = 25.0,
        find_unused_parameters: bool = False,
        gradient_as_bucket_view: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel: module must be a Module, got {type(module).__name__}"
            )
        as_number(bucket_cap_mb, "DistributedDataParallel", "bucket_cap_mb")  # "25" is no number
        for flag, value in (
            ("broadcast_buffers", broadcast_buffers),
            ("find_unused_parameters", find_unused_parameters),
            ("gradient_as_bucket_view", gradient_as_bucket_view),
        ):
            as_bool(value, "DistributedDataParallel", flag)
        _check_devices(module, device_ids, output_device)
        if not bucket_cap_mb > 0:
            raise ValueError(
                f"DistributedDataParallel: bucket_cap_mb must be positive, got {bucket_cap_mb}"
            )
        self.module = module
        if process_group is not None and not isinstance(process_group, ProcessGroup):
            raise TypeError(
                f"DistributedDataParallel: process_group must be a ProcessGroup (or None: the "
                f"default group), but got {type(process_group).__name__} {process_group!r:.40}"
            )
        group = _group("DistributedDataParallel", process_group)
        object.__setattr__(self, "process_group", group)
        self.world_size = group.world_size
        self.broadcast_buffers = broadcast_buffers
        self.bucket_cap_mb = bucket_cap_mb
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module has no parameter that "
                "requires a gradient"
            )
        self._sync_module_states()
        names = [n for n, _ in named]
        params = [p for _, p in named]
        sizes = [p.numel() * p.element_size() for p in params]
        keys = [(p.dtype, str(p.device)) for p in params]
        cap = max(int(bucket_cap_mb * _MB), 1)
        #: ``bucket_indices[b]``: the indices (into ``module.parameters()``) in bucket b.
        self.bucket_indices = assign_buckets(sizes, cap, keys)
        self._buckets = [
            Bucket(b, [params[i] for i in indices]) for b, indices in enumerate(self.bucket_indices)
        ]
        self._names = names
        self._params = params
        self._where: dict[int, tuple[int, int, int]] = {}  # id(param) -> (bucket, slot, index)
        for b, indices in enumerate(self.bucket_indices):
            for k, i in enumerate(indices):
                self._where[id(params[i])] = (b, k, i)
        self._ready: set[int] = set()
        self._next_bucket = 0
        self._in_backward = False
        self._sync_now = True
        #: What the last forward/backward did, with ``time.perf_counter()`` times:
        #: ``(what, start, end)`` for the forward, each gradient becoming ready, and each
        #: bucket's all-reduce (drawn as a timeline in chapter 06).
        self.timeline: list[tuple[str, float, float]] = []
        self._grad_hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # --- construction ---------------------------------------------------------------------
    def _sync_module_states(self) -> None:
        """Every replica starts from rank 0's parameters and buffers."""
        if self.world_size == 1:
            return
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            with no_grad():
                broadcast(t.detach(), src=0, group=self.process_group)

    # --- forward --------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        self.timeline = []
        if self.broadcast_buffers and self.world_size > 1:
            for buf in self.module.buffers():
                broadcast(buf, src=0, group=self.process_group)
        self._sync_now = self.require_backward_grad_sync and is_grad_enabled()
        out = self.module(*args, **kwargs)
        self.timeline.append(("forward", start, time.perf_counter()))
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, forward and backward only accumulate local gradients (no all-reduce);
        the first backward outside averages the accumulated sums."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    # --- backward: the hooks ----------------------------------------------------------------
    def _grad_ready(self, param: Any) -> None:
        if not self._sync_now:
            return
        b, k = self._mark_ready(param)
        self._buckets[b].fill(k, param.grad, self.gradient_as_bucket_view)
        self._launch_ready_buckets()

    def _mark_ready(self, param: Any) -> tuple[int, int]:
        """Note that ``param``'s gradient is ready (once per backward); its (bucket, slot)."""
        if not self._in_backward:
            self._start_backward()
        b, k, i = self._where[id(param)]
        if i in self._ready:
            raise RuntimeError(
                f"DistributedDataParallel: parameter {self._names[i]!r} got its gradient twice "
                "in one backward pass (is the module used in two backward passes with "
                "retain_graph=True? Use no_sync() for all but the last)"
            )
        now = time.perf_counter()
        self.timeline.append((f"grad {self._names[i]}", now, now))
        self._ready.add(i)
        return b, k

    def _start_backward(self) -> None:
        self._in_backward = True
        self._ready = set()
        self._next_bucket = 0
        for bucket in self._buckets:
            bucket.reset()
        queue_callback(self._finish_backward)

    def _launch_ready_buckets(self) -> None:
        """Start the all-reduce of every full bucket, in bucket order (all ranks must issue
        the same collectives in the same order)."""
        while self._next_bucket < len(self._buckets):
            bucket = self._buckets[self._next_bucket]
            if bucket.pending:
                return
            self._launch(bucket)
            self._next_bucket += 1

    def _launch(self, bucket: Bucket) -> None:
        with no_grad():
            bucket.buffer.div_(self.world_size)  # the sum of the averages is the average
        start = time.perf_counter()
        bucket.work = all_reduce(bucket.buffer, group=self.process_group, async_op=True)
        name, timeline = f"all_reduce bucket {bucket.index}", self.timeline
        slot = len(timeline)
        timeline.append((name, start, start))  # the end is filled in when it finishes

        def finished(_: Any) -> None:
            timeline[slot] = (name, start, time.perf_counter())

        bucket.work.add_done_callback(finished)

    def _finish_backward(self) -> None:
        """End of backward: handle unused parameters, wait for every bucket, write back."""
        self._in_backward = False
        missing = [i for i in range(len(self._names)) if i not in self._ready]
        if missing and not self.find_unused_parameters:
            for bucket in self._buckets[: self._next_bucket]:
                bucket.work.wait()  # leave no collective half done
            names = [self._names[i] for i in missing]
            raise RuntimeError(
                f"DistributedDataParallel: parameter(s) {names} received no gradient in this "
                "backward pass, so their bucket's all-reduce cannot start and the other ranks "
                "would wait for it. Pass find_unused_parameters=True if the model really skips "
                "them in some steps; otherwise make sure every parameter takes part in "
                "computing the loss"
            )
        for i in missing:
            b, k, _ = self._where[id(self._params[i])]
            self._buckets[b].fill(k, None, False)
        self._launch_ready_buckets()
        unused = self._globally_unused() if self.find_unused_parameters else set()
        for bucket in self._buckets:
            bucket.work.wait()
            self._write_back(bucket, unused)

    def _globally_unused(self) -> set[int]:
        """The ids of parameters that got a gradient on no rank (one more all-reduce, issued
        after every bucket's, so all ranks issue their collectives in the same order)."""
        used = [1.0 if i in self._ready else 0.0 for i in range(len(self._params))]
        counts = tensor(used, device=self._params[0].device)
        all_reduce(counts, group=self.process_group)
        return {id(p) for p, n in zip(self._params, counts.tolist(), strict=True) if n == 0}

    def _write_back(self, bucket: Bucket, unused: set[int] = frozenset()) -> None:
        with no_grad():
            for p, view in zip(bucket.params, bucket.views, strict=True):
                if p.grad is view or id(p) in unused:
                    continue
                if self.gradient_as_bucket_view:
                    p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)

    def extra_repr(self) -> str:
        sizes = ", ".join(f"{b.nbytes / _MB:.2g}" for b in self._buckets)
        return f"world_size={self.world_size}, buckets (MiB)=[{sizes}]"
