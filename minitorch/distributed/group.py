"""Process groups with PyTorch's surface: ``init_process_group`` and the collectives.

``init_process_group(backend, init_method, rank, world_size, timeout)`` connects this
process to its peers; afterwards ``all_reduce``, ``broadcast``, ``all_gather``,
``reduce_scatter``, ``send``/``recv`` and ``barrier`` work on tensors, in place, as in
``torch.distributed``. With ``async_op=True`` they return a :class:`Work` to ``wait()`` on.

Every collective of a group runs on the group's one communication thread, in the order
it was issued (all ranks must issue the same collectives in the same order), with a
deadline: a peer that is gone or late becomes an error naming the collective and the rank.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ..autograd.grad_mode import no_grad
from ..checks import as_bool
from ..tensor import Tensor
from .backends import Backend, make_backend
from .errors import DistBackendError, DistError, DistTimeoutError, PeerGone, PeerTimeout
from .reduce_op import ReduceOp, as_reduce_op
from .work import Work

#: Seconds a collective may take before it fails (``MINITORCH_DIST_TIMEOUT`` overrides).
DEFAULT_TIMEOUT = 120.0
_BACKENDS = ("local", "mpi", "nccl")
_ALIASES = {"gloo": "local"}  # scripts written for PyTorch's CPU backend run unchanged


class ProcessGroup:
    """The ranks of one job and the backend that connects them."""

    def __init__(self, backend: Backend, timeout: float, name: str | None = None) -> None:
        self.backend = backend
        self.name = name or backend.name  # as asked for: "gloo" runs on "local"
        self.rank = backend.rank
        self.world_size = backend.world_size
        self.timeout = timeout
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"minitorch-comm-{self.rank}")
        self._broken: str | None = None

    def size(self) -> int:
        return self.world_size

    def submit(self, name: str, job: Any, async_op: bool) -> Work | Any:
        """Run ``job(deadline)`` on the communication thread; wait unless ``async_op``."""
        work = Work(self._executor.submit(self._run, name, job), name)
        if async_op:
            return work
        return work.result()

    def _run(self, name: str, job: Any) -> Any:
        if self._broken is not None:
            raise DistBackendError(
                f"{name}: the process group is unusable after an earlier failure: {self._broken}"
            )
        try:
            return job(time.monotonic() + self.timeout)
        except PeerGone as exc:
            error: DistError = DistBackendError(self._gone_message(name, exc))
        except PeerTimeout as exc:
            error = DistTimeoutError(self._timeout_message(name, exc))
        self._broken = str(error)
        raise error

    def _gone_message(self, name: str, exc: PeerGone) -> str:
        gone = [r for r in self.backend.gone() if r != exc.rank]
        also = f" (also gone: rank {', '.join(map(str, gone))})" if gone else ""
        return f"{name} on rank {self.rank}: rank {exc.rank} is gone: {exc.detail}{also}"

    def _timeout_message(self, name: str, exc: PeerTimeout) -> str:
        who = f"rank {exc.rank}" if exc.rank is not None else "the other ranks"
        return (
            f"{name} on rank {self.rank} timed out after {self.timeout:g} s waiting for {who}. "
            "Every rank must call the same collectives in the same order: a rank that took "
            "a different code path, hangs or died leaves the others waiting"
        )

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self.backend.close()


_default: ProcessGroup | None = None


# --- setting up -----------------------------------------------------------------------------
def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | float | None = None,
    world_size: int = -1,
    rank: int = -1,
    **ignored: Any,
) -> None:
    """Join the default process group.

    ``backend``: ``"local"`` (default; ``"gloo"`` is an alias), ``"mpi"`` or ``"nccl"``.
    ``init_method``: ``"env://"`` (default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``,
    ``WORLD_SIZE`` from the environment, as the launcher sets them) or
    ``"tcp://host:port"`` with ``rank`` and ``world_size`` given. Under ``mpi`` rank and
    world size come from ``mpiexec``.
    """
    global _default
    if _default is not None:
        raise RuntimeError(
            "init_process_group: trying to initialize the default process group twice; "
            "call destroy_process_group() first"
        )
    name = _ALIASES.get(backend or "local", backend or "local")
    if name not in _BACKENDS:
        raise ValueError(
            f"init_process_group: unknown backend {backend!r}; use one of {', '.join(_BACKENDS)}"
        )
    seconds = _seconds(timeout)
    if name == "mpi":
        _default = ProcessGroup(make_backend(name, rank, world_size, "", 0, seconds), seconds)
        return
    addr, port, rank, world_size = _rendezvous(init_method, rank, world_size)
    _default = ProcessGroup(
        make_backend(name, rank, world_size, addr, port, seconds), seconds, backend or name
    )


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default group: close the connections (collectives fail afterwards)."""
    global _default
    if _default is None:
        raise RuntimeError("destroy_process_group: the default process group is not initialized")
    g, _default = _default, None
    g.close()


def is_initialized() -> bool:
    return _default is not None


def is_available() -> bool:
    return True


def is_mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available() -> bool:
    try:
        from .backends.nccl import load_nccl

        load_nccl()
    except ImportError:
        return False
    return True


def get_rank(group: ProcessGroup | None = None) -> int:
    return _group("get_rank", group).rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    return _group("get_world_size", group).world_size


def get_default_backend_for_device(device: Any) -> str:
    """The backend PyTorch picks for a device: ``"gloo"`` for the CPU (minitorch's
    embedded backend answers to that name), ``"nccl"`` for CUDA."""
    from ..device import device as as_device_object

    if device is None or not isinstance(device, (str, as_device_object)):
        raise TypeError(
            "get_default_backend_for_device: expected a device or a device type string, but "
            f"got {type(device).__name__} {device!r:.40}"
        )
    kind = as_device_object(device).type
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"get_default_backend_for_device: no default backend for {kind!r}")
    return "gloo" if kind == "cpu" else "nccl"


def get_backend(group: ProcessGroup | None = None) -> str:
    return _group("get_backend", group).name


def _group(name: str, group: ProcessGroup | None) -> ProcessGroup:
    if group is not None and not isinstance(group, ProcessGroup):
        raise TypeError(
            f"{name}: group must be a ProcessGroup (or None: the default group), but got "
            f"{type(group).__name__} {group!r:.40}"
        )
    g = group if group is not None else _default
    if g is None:
        raise RuntimeError(
            f"{name}: the default process group has not been initialized; call "
            "minitorch.distributed.init_process_group() first"
        )
    return g


def _seconds(timeout: timedelta | float | None) -> float:
    if timeout is None:
        return float(os.environ.get("MINITORCH_DIST_TIMEOUT", DEFAULT_TIMEOUT))
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout)
    raise ValueError(f"init_process_group: timeout must be positive seconds, got {timeout!r}")


def _rendezvous(init_method: str | None, rank: int, world_size: int) -> tuple:
    """``(addr, port, rank, world_size)`` from ``env://`` or ``tcp://host:port``."""
    method = init_method or "env://"
    for name, value in (("rank", rank), ("world_size", world_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(
                f"init_process_group: {name} must be an int, but got {type(value).__name__} "
                f"{value!r}"
            )
    if not isinstance(method, str):
        raise TypeError(f"init_process_group: init_method must be a str, but got {method!r}")
    if method.startswith("env://"):
        addr = _env("MASTER_ADDR", "127.0.0.1")
        port = _env_int("MASTER_PORT")
        if not 1 <= port <= 65535:
            raise ValueError(
                f"init_process_group: environment variable MASTER_PORT must be a port number "
                f"from 1 to 65535, but it is {port}"
            )
        rank = rank if rank >= 0 else _env_int("RANK")
        world_size = world_size if world_size > 0 else _env_int("WORLD_SIZE")
    elif method.startswith("tcp://"):
        url = urlparse(method)
        try:
            port = url.port
        except ValueError as err:  # "Port could not be cast to integer value as 'x'"
            raise ValueError(
                f"init_process_group: init_method {method!r} has no valid port ({err})"
            ) from None
        if url.hostname is None or port is None:
            raise ValueError(f"init_process_group: init_method {method!r} needs tcp://host:port")
        addr = url.hostname
        if rank < 0 or world_size <= 0:
            raise ValueError(
                f"init_process_group: tcp:// needs a rank >= 0 and a world_size >= 1, but got "
                f"rank={rank}, world_size={world_size}"
            )
    else:
        raise ValueError(
            f"init_process_group: unsupported init_method {method!r}; use 'env://' or "
            "'tcp://host:port'"
        )
    if not 0 <= rank < world_size:
        raise ValueError(
            f"init_process_group: rank {rank} is outside the world of size {world_size}"
        )
    return addr, port, rank, world_size


def _env(name: str, default: str | None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ValueError(
            f"init_process_group: environment variable {name} is not set (start the job with "
            "python -m minitorch.distributed.run, or pass rank/world_size and "
            "init_method='tcp://host:port')"
        )
    return value


def _env_int(name: str) -> int:
    """An environment variable that must hold a whole number (a port, a rank, a size)."""
    value = _env(name, None)
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"init_process_group: environment variable {name} must be a whole number, but it "
            f"is {value!r}"
        ) from None


# --- tensors in and out ------------------------------------------------------------------------
def _array(t: Any, collective: str, what: str = "tensor") -> Any:
    if not isinstance(t, Tensor):
        raise TypeError(f"{collective}: {what} must be a Tensor, got {type(t).__name__}")
    if not t.is_contiguous():
        raise ValueError(
            f"{collective}: {what} of shape {t.shape} is not contiguous; call .contiguous()"
        )
    return t._data


def _write(t: Tensor, array: Any) -> None:
    """``t[...] = array`` through ``copy_`` (a recorded in-place write, as every write is)."""
    with no_grad():
        t.copy_(Tensor._from_array(array.reshape(t.shape)))


def _same_layout(t: Tensor, other: Tensor, collective: str, what: str) -> None:
    if other.shape != t.shape or other.dtype != t.dtype or other.device != t.device:
        raise ValueError(
            f"{collective}: {what} has shape {other.shape}, dtype {other.dtype.name}, device "
            f"{other.device}; expected shape {t.shape}, dtype {t.dtype.name}, device {t.device}"
        )


def _check_rank(collective: str, g: ProcessGroup, rank: int, what: str) -> None:
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < g.world_size:
        raise ValueError(
            f"{collective}: {what}={rank!r} is not a rank of this group (0..{g.world_size - 1})"
        )


# --- the ranks must agree on what they call ------------------------------------------------------
_FINGERPRINT_BYTES = 256
#: The check costs one small all-gather per collective (about 0.1 ms on two local ranks);
#: ``MINITORCH_DISTRIBUTED_CHECK=0`` turns it off, as PyTorch runs without its own
#: (``TORCH_DISTRIBUTED_DEBUG=DETAIL``) by default.
_CHECK = os.environ.get("MINITORCH_DISTRIBUTED_CHECK", "1") != "0"


def _agree(g: ProcessGroup, deadline: float, name: str, **facts: Any) -> None:
    """Before a collective, every rank says what it is about to do (the collective, the
    dtype and shape of its buffer, the op or source) and all of them compare: ranks that
    disagree would otherwise compute a result from mismatched buffers, or fail with a
    numpy or socket message. Every rank raises the same error, naming what differs.
    (NCCL's all-gather wants device arrays; that backend skips the check.)"""
    if not _CHECK or g.world_size == 1 or g.backend.name == "nccl":
        return
    text = json.dumps([name, facts], sort_keys=True).encode("utf-8")[:_FINGERPRINT_BYTES]
    mine = np.zeros(_FINGERPRINT_BYTES, dtype=np.uint8)
    mine[: len(text)] = np.frombuffer(text, dtype=np.uint8)
    parts = g.backend.all_gather(mine, deadline)
    seen = [
        bytes(np.asarray(p, dtype=np.uint8)).rstrip(b"\0").decode("utf-8", "replace") for p in parts
    ]
    if len(set(seen)) == 1:
        return
    said = []
    for rank, fingerprint in enumerate(seen):
        try:
            called, details = json.loads(fingerprint)
            what = ", ".join(f"{k}={v}" for k, v in details.items())
            said.append(f"rank {rank}: {called}({what})")
        except ValueError:
            said.append(f"rank {rank}: {fingerprint[:80]!r}")
    raise DistBackendError(
        f"{name} on rank {g.rank}: the ranks disagree on the collective they call: "
        + "; ".join(said)
        + ". Every rank must call the same collectives in the same order, on tensors of the "
        "same dtype and shape"
    )


def _facts(array: Any) -> dict:
    return {"dtype": str(array.dtype), "shape": list(array.shape)}


# --- the collectives ---------------------------------------------------------------------------
def all_reduce(
    tensor: Tensor,
    op: ReduceOp | str = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``tensor`` over all ranks, in place: every rank ends with the result."""
    g = _group("all_reduce", group)
    as_bool(async_op, "all_reduce", "async_op")
    op = as_reduce_op(op, "all_reduce")
    array = _array(tensor, "all_reduce")

    def job(deadline: float) -> Tensor:
        _agree(g, deadline, "all_reduce", op=op.name, **_facts(array))
        base = ReduceOp.SUM if op is ReduceOp.AVG else op
        result = g.backend.all_reduce(array, base, deadline)
        if op is ReduceOp.AVG:
            result = result / g.world_size if result.dtype.kind == "f" else result // g.world_size
        _write(tensor, result)
        return tensor

    return _finish(g.submit("all_reduce", job, async_op), async_op)


def broadcast(
    tensor: Tensor, src: int, group: ProcessGroup | None = None, async_op: bool = False
) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank."""
    g = _group("broadcast", group)
    as_bool(async_op, "broadcast", "async_op")
    _check_rank("broadcast", g, src, "src")
    array = _array(tensor, "broadcast")

    def job(deadline: float) -> Tensor:
        _agree(g, deadline, "broadcast", src=src, **_facts(array))
        result = g.backend.broadcast(array, src, deadline)
        if g.rank != src:
            if result.shape != array.reshape(-1).shape and result.shape != array.shape:
                raise ValueError(
                    f"broadcast: rank {src} sent shape {result.shape}, this rank expected "
                    f"{tuple(array.shape)}"
                )
            _write(tensor, result)
        return tensor

    return _finish(g.submit("broadcast", job, async_op), async_op)


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``tensor_list[r]`` = ``tensor`` of rank r, on every rank."""
    g = _group("all_gather", group)
    as_bool(async_op, "all_gather", "async_op")
    array = _array(tensor, "all_gather")
    _check_list(tensor_list, tensor, g, "all_gather", "tensor_list")

    def job(deadline: float) -> list:
        _agree(g, deadline, "all_gather", **_facts(array))
        parts = g.backend.all_gather(array, deadline)
        for out, part in zip(tensor_list, parts, strict=True):
            _write(out, part)
        return tensor_list

    return _finish(g.submit("all_gather", job, async_op), async_op)


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """The ranks' ``input_tensor``s concatenated along dim 0 into ``output_tensor``."""
    g = _group("all_gather_into_tensor", group)
    as_bool(async_op, "all_gather_into_tensor", "async_op")
    array = _array(input_tensor, "all_gather_into_tensor")
    _array(output_tensor, "all_gather_into_tensor", "output_tensor")
    expected = (input_tensor.shape[0] * g.world_size, *input_tensor.shape[1:])
    if output_tensor.shape != expected:
        raise ValueError(
            f"all_gather_into_tensor: output_tensor has shape {output_tensor.shape}, expected "
            f"{expected} (world_size={g.world_size} times the input's shape {input_tensor.shape})"
        )

    def job(deadline: float) -> Tensor:
        _agree(g, deadline, "all_gather_into_tensor", **_facts(array))
        parts = g.backend.all_gather(array, deadline)
        xp = type(array).__module__.startswith("cupy")
        join = __import__("cupy" if xp else "numpy").concatenate
        _write(output_tensor, join(parts))
        return output_tensor

    return _finish(g.submit("all_gather_into_tensor", job, async_op), async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp | str = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``output`` on rank r = the reduction over ranks of their ``input_list[r]``."""
    g = _group("reduce_scatter", group)
    as_bool(async_op, "reduce_scatter", "async_op")
    op = as_reduce_op(op, "reduce_scatter")
    _array(output, "reduce_scatter", "output")
    _check_list(input_list, output, g, "reduce_scatter", "input_list")
    chunks = [_array(t, "reduce_scatter", "input_list entry") for t in input_list]

    def job(deadline: float) -> Tensor:
        shapes = [list(c.shape) for c in chunks]
        _agree(g, deadline, "reduce_scatter", op=op.name, dtype=str(chunks[0].dtype), shapes=shapes)
        base = ReduceOp.SUM if op is ReduceOp.AVG else op
        result = g.backend.reduce_scatter(chunks, base, deadline)
        if op is ReduceOp.AVG:
            result = result / g.world_size
        _write(output, result)
        return output

    return _finish(g.submit("reduce_scatter", job, async_op), async_op)


def send(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst`` (which calls ``recv`` with ``src`` = this rank)."""
    g = _group("send", group)
    _check_p2p(g, dst, "dst", "send", tag)
    array = _array(tensor, "send")
    g.submit(
        f"send to rank {dst}", lambda deadline: g.backend.send(array, dst, tag, deadline), False
    )


def recv(tensor: Tensor, src: int, group: ProcessGroup | None = None, tag: int = 0) -> int:
    """Receive into ``tensor`` what rank ``src`` sent; returns ``src``."""
    g = _group("recv", group)
    _check_p2p(g, src, "src", "recv", tag)
    array = _array(tensor, "recv")

    def job(deadline: float) -> int:
        got = g.backend.recv(array, src, tag, deadline)
        if got.shape != array.shape or got.dtype != array.dtype:
            raise ValueError(
                f"recv: rank {src} sent shape {tuple(got.shape)} dtype {got.dtype}, but the "
                f"tensor to receive into has shape {tensor.shape} dtype {tensor.dtype.name}"
            )
        _write(tensor, got)
        return src

    return g.submit(f"recv from rank {src}", job, False)


def isend(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> Work:
    g = _group("isend", group)
    _check_p2p(g, dst, "dst", "isend", tag)
    array = _array(tensor, "isend")
    return g.submit(
        f"isend to rank {dst}", lambda deadline: g.backend.send(array, dst, tag, deadline), True
    )


def barrier(group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Wait until every rank has reached the barrier."""
    g = _group("barrier", group)
    as_bool(async_op, "barrier", "async_op")

    def job(deadline: float) -> Any:
        _agree(g, deadline, "barrier")
        return g.backend.barrier(deadline)

    return _finish(g.submit("barrier", job, async_op), async_op)


def _finish(result: Any, async_op: bool) -> Work | None:
    return result if async_op else None


def _check_p2p(g: ProcessGroup, peer: int, what: str, name: str, tag: int) -> None:
    _check_rank(name, g, peer, what)
    if peer == g.rank:
        raise ValueError(f"{name}: {what}={peer} is this rank itself")
    if isinstance(tag, bool) or not isinstance(tag, int) or tag < 0:
        raise ValueError(f"{name}: tag must be an int >= 0, got {tag!r}")


def _check_list(tensors: Any, like: Tensor, g: ProcessGroup, name: str, what: str) -> None:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != g.world_size:
        n = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(
            f"{name}: {what} must be a list of world_size={g.world_size} tensors, got {n}"
        )
    for k, t in enumerate(tensors):
        _array(t, name, f"{what}[{k}]")
        _same_layout(like, t, name, f"{what}[{k}]")
