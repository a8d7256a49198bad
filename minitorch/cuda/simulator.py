"""A CPU simulator of CUDA launches: every thread of every block runs, faithfully.

``launch(func, grid, block, args)`` runs ``func`` once per GPU thread. The threads of a
block are greenlets (cooperative coroutines): a thread runs until it calls
``syncthreads()``, then the next thread of its block runs, and when every thread of the
block has arrived the barrier opens and they all go on. A warp shuffle
(``shfl_down_sync``) is a barrier of the 32 lanes of a warp: each lane stops there, and
when every lane its mask names has arrived they exchange their values in one step.
Blocks run one after another, each with its own shared memory. So the simulator keeps
the promises CUDA makes (a barrier orders a block's threads, shared memory is per block)
and nothing more, and it checks that a kernel relies on nothing more:

- every index into an array is bounds-checked (a thread past the end is reported);
- a shared-memory cell written by one thread and touched by another between the same two
  barriers is a race; so is a read of shared memory no thread has written yet;
- two threads writing one element of global memory is a race (unless through atomics);
- a barrier that only some threads of a block reach is reported (CUDA leaves it undefined);
  so is a shuffle that a lane its mask names never calls.

Each report names the kernel, the thread and the block. Arrays inside a kernel are
*device arrays*: element access only, as on a GPU (no numpy on them), and every access is
counted, so a launch returns its memory traffic (:class:`LaunchStats`).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import operator
import sys
import types
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from sys import _getframe
from typing import Any

import numpy as np

from .errors import (
    BarrierDivergenceError,
    GlobalMemoryRaceError,
    KernelArithmeticError,
    KernelError,
    KernelLanguageError,
    KernelOutOfBoundsError,
    LaunchConfigError,
    SharedMemoryRaceError,
    UninitializedReadError,
    WarpDivergenceError,
)
from .source import source_of

#: CUDA's limits (compute capability 7.0 and later).
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_SHARED_BYTES = 48 * 1024
#: Threads per warp: lanes 0..31 of a block's threads in linear order (x fastest).
WARP_SIZE = 32
#: The simulator's own limit: more threads than this would take minutes in Python.
MAX_SIMULATED_THREADS = 1 << 20

_NOBODY, _MANY, _ATOMIC = -1, -2, -3


_GREENLET: Any = None


def _greenlet() -> Any:
    """The greenlet class (imported on the first launch: ``import minitorch`` needs no
    greenlet, and nor does anything but the simulator)."""
    global _GREENLET
    if _GREENLET is None:
        try:
            from greenlet import greenlet
        except ImportError:
            raise ImportError(
                "the kernel simulator runs each GPU thread as a greenlet: pip install greenlet "
                '(pip install -e ".[course]" installs it with the rest of the course)'
            ) from None
        _GREENLET = greenlet
    return _GREENLET


class _ThreadState:
    """The thread now running (set by the scheduler before each switch)."""

    __slots__ = ("launch", "tx", "ty", "tz", "bx", "by", "bz", "tid", "gtid", "epoch")

    def __init__(self) -> None:
        self.launch: _Launch | None = None


state = _ThreadState()


@dataclass
class LaunchStats:
    """What one simulated launch did: its shape and its memory traffic, in elements."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    threads: int
    global_reads: int = 0
    global_writes: int = 0
    shared_reads: int = 0
    shared_writes: int = 0
    atomics: int = 0
    barriers: int = 0  # barriers per block (the most any block passed)
    max_thread_global_reads: int = 0
    max_thread_global_writes: int = 0
    max_thread_shared_reads: int = 0
    #: argument name -> (elements read, elements written), for each global array
    array_traffic: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: warp shuffles, counted per lane (not in the repr: chapter 07's printed stats predate it)
    shuffles: int = field(default=0, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Launch:
    """Bookkeeping of one launch: geometry, the running block's counters."""

    def __init__(self, name: str, grid: tuple, block: tuple, dims: int) -> None:
        self.name, self.grid, self.block, self.dims = name, grid, block, dims
        self.nthreads = block[0] * block[1] * block[2]
        self.stats = LaunchStats(name, grid, block, self.nthreads * grid[0] * grid[1] * grid[2])
        self.shared: list[SharedArray] = []
        #: the first read of a shared cell no thread had written: (array, cell, who, site)
        self.unwritten: tuple | None = None
        self.epoch_id = 0  # unique per (block, barrier interval)
        self.block_index = 0

    def begin_block(self) -> None:
        n = self.nthreads
        self.shared = []
        self.unwritten = None
        self.shared_calls = [0] * n
        self.greads = [0] * n
        self.gwrites = [0] * n
        self.sreads = [0] * n
        self.swrites = [0] * n

    def end_block(self, barriers: int) -> None:
        s = self.stats
        s.global_reads += sum(self.greads)
        s.global_writes += sum(self.gwrites)
        s.shared_reads += sum(self.sreads)
        s.shared_writes += sum(self.swrites)
        s.barriers = max(s.barriers, barriers)
        s.max_thread_global_reads = max(s.max_thread_global_reads, max(self.greads))
        s.max_thread_global_writes = max(s.max_thread_global_writes, max(self.gwrites))
        s.max_thread_shared_reads = max(s.max_thread_shared_reads, max(self.sreads))


def _coords(values: tuple, dims: int) -> str:
    return str(values[0]) if dims == 1 else "(" + ", ".join(map(str, values[:dims])) + ")"


def where(tid: int | None = None) -> str:
    """``thread 5 of block 2 in kernel `add``` for the thread now running (or thread ``tid``
    of the running block)."""
    launch = state.launch
    if launch is None:
        return "outside any kernel"
    if tid is None:
        thread = (state.tx, state.ty, state.tz)
    else:
        bx, by = launch.block[0], launch.block[1]
        thread = (tid % bx, tid // bx % by, tid // (bx * by))
    block = (state.bx, state.by, state.bz)
    dims = launch.dims
    return (
        f"thread {_coords(thread, dims)} of block {_coords(block, dims)} in kernel `{launch.name}`"
    )


def _index(i: Any, array: str) -> int:
    if type(i) is int:
        return i
    try:
        return operator.index(i)
    except TypeError:
        raise KernelLanguageError(
            f"{where()}: {array}[{i!r}]: array indices must be integers, not "
            f"{type(i).__name__} (use // for integer division)"
        ) from None


def _running() -> _Launch:
    launch = state.launch
    if launch is None:
        raise RuntimeError("device arrays can only be used inside a kernel launch")
    return launch


class GlobalArray:
    """A kernel argument in global memory: read and written one element at a time."""

    __slots__ = ("name", "data", "_shape", "_cstrides", "size", "ndim", "kind", "writers",
                 "wepochs", "target", "reads", "writes")  # fmt: skip

    def __init__(self, name: str, array: np.ndarray) -> None:
        self.name = name
        self.target = array
        self.data = np.ravel(array).tolist()  # logical C order, whatever the strides
        self._shape = tuple(array.shape)
        self._cstrides = tuple(
            int(np.prod(array.shape[k + 1 :], dtype=np.int64)) for k in range(array.ndim)
        )
        self.size = int(array.size)
        self.ndim = array.ndim
        self.kind = array.dtype.kind
        self.writers: dict[int, int] = {}
        self.wepochs: dict[int, int] = {}
        self.reads = self.writes = 0

    def __len__(self) -> int:
        return self._shape[0]

    def __getattr__(self, attr: str) -> Any:
        raise KernelLanguageError(
            f"a device array has .size and .ndim, not .{attr}: pass sizes and strides to the "
            f"kernel as arguments"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise KernelLanguageError(
            f"{where()}: `{self.name}` is device memory: inside a kernel, read and write it one "
            "element at a time; numpy (or any library) cannot run on it"
        )

    def __iter__(self) -> Any:
        raise KernelLanguageError(
            f"{where()}: a kernel cannot loop over `{self.name}` itself: loop over indices "
            "with range(...) and read one element at a time"
        )

    def _position(self, index: Any, verb: str) -> int:
        if type(index) is tuple:
            if len(index) != self.ndim:
                raise KernelLanguageError(
                    f"{where()}: {self.name}{list(index)} has {len(index)} indices but "
                    f"`{self.name}` has {self.ndim} dims"
                )
            pos = 0
            for i, n, st in zip(index, self._shape, self._cstrides, strict=True):
                i = _index(i, self.name)
                if not 0 <= i < n:
                    self._out_of_bounds(index, verb)
                pos += i * st
            return pos
        if self.ndim != 1:
            raise KernelLanguageError(
                f"{where()}: {self.name}[{index!r}] uses one index, but `{self.name}` has "
                f"{self.ndim} dims: index it with {self.ndim} (as {self.name}[i, j])"
            )
        i = _index(index, self.name)
        if not 0 <= i < self.size:
            self._out_of_bounds(index, verb)
        return i

    def _out_of_bounds(self, index: Any, verb: str) -> None:
        shown = list(index) if type(index) is tuple else index
        raise KernelOutOfBoundsError(
            f"{where()} {verb} {self.name}[{shown}], outside `{self.name}` of shape "
            f"{self._shape}: guard the access with the size (e.g. `if i < n:`)"
        )

    def __getitem__(self, index: Any) -> Any:
        pos = self._position(index, "read")
        _running().greads[state.tid] += 1
        self.reads += 1
        return self.data[pos]

    def __setitem__(self, index: Any, value: Any) -> None:
        pos = self._position(index, "wrote")
        launch = _running()
        me = state.gtid
        w = self.writers.get(pos)
        if w is not None and w != me:
            if (
                w == _ATOMIC
                or w // launch.nthreads != me // launch.nthreads
                or (self.wepochs[pos] == launch.epoch_id)
            ):
                self._race(index, w, "wrote")
        self.writers[pos] = me
        self.wepochs[pos] = launch.epoch_id
        self.data[pos] = self._cast(value)
        launch.gwrites[state.tid] += 1
        self.writes += 1

    def _race(self, index: Any, other: int, how: str) -> None:
        launch = _running()
        shown = list(index) if type(index) is tuple else index
        who = "an atomic operation" if other == _ATOMIC else f"global thread {other}"
        raise GlobalMemoryRaceError(
            f"{where()} {how} {self.name}[{shown}], which {who} also wrote in this launch "
            f"(global thread ids count blocks of {launch.nthreads}): each output element "
            "must be written by one thread (or use atomic_add)"
        )

    def _cast(self, value: Any) -> Any:
        kind = self.kind
        if kind == "f":
            if type(value) is float:
                return value
            if isinstance(value, (GlobalArray, SharedArray)):
                raise KernelLanguageError(f"{where()}: store one element, not a whole array")
            return float(value)
        if kind in "iu":
            if isinstance(value, (float, np.floating)):
                raise KernelLanguageError(
                    f"{where()}: storing the float {value!r} into the integer array "
                    f"`{self.name}`: convert it explicitly (int32(x))"
                )
            return int(value)
        if kind == "b":
            return bool(value)
        return value

    def atomic_add(self, index: Any, value: Any) -> Any:
        pos = self._position(index, "atomically added to")
        launch = _running()
        w = self.writers.get(pos)
        if w is not None and w != _ATOMIC and w // launch.nthreads != state.gtid // launch.nthreads:
            self._race(index, w, "atomically added to")
        self.writers[pos] = _ATOMIC
        old = self.data[pos]
        self.data[pos] = self._cast(old + value)
        launch.stats.atomics += 1
        return old

    def write_back(self) -> None:
        if self.writers:
            self.target[...] = np.asarray(self.data, dtype=self.target.dtype).reshape(self._shape)


class SharedArray:
    """Shared memory of one block: a 1-d array, checked for races between barriers."""

    __slots__ = (
        "name", "data", "size", "kind", "nbytes", "w_epoch", "w_tid", "r_epoch", "r_tid",
        "w_site", "r_site",
    )  # fmt: skip

    def __init__(self, name: str, dtype: np.dtype, size: int) -> None:
        self.name, self.size, self.kind = name, size, dtype.kind
        self.nbytes = size * dtype.itemsize  # what it takes of the block's shared memory
        self.data: list = [float("nan") if dtype.kind == "f" else 0] * size
        self.w_epoch = [-1] * size
        self.w_tid = [_NOBODY] * size
        self.r_epoch = [-1] * size
        self.r_tid = [_NOBODY] * size
        #: the line (function, line number) of each cell's last write, and of its first read
        #: since the last barrier: a race names both lines
        self.w_site: list[tuple[str, int] | None] = [None] * size
        self.r_site: list[tuple[str, int] | None] = [None] * size

    def __len__(self) -> int:
        return self.size

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise KernelLanguageError(
            f"{where()}: {self.name} is shared memory: read and write it one element at a time"
        )

    def __iter__(self) -> Any:
        raise KernelLanguageError(f"{where()}: loop over indices of {self.name}, not over it")

    def _check(self, index: Any, verb: str) -> int:
        if type(index) is tuple:
            raise KernelLanguageError(
                f"{where()}: shared memory is 1-d: index {self.name} with one integer "
                "(row * width + col)"
            )
        i = _index(index, self.name)
        if not 0 <= i < self.size:
            raise KernelOutOfBoundsError(
                f"{where()} {verb} cell {i} of {self.name}, outside its {self.size} cells"
            )
        return i

    def __getitem__(self, index: Any) -> Any:
        i = self._check(index, "read")
        t, e = state.tid, state.epoch
        if self.w_epoch[i] == e and self.w_tid[i] != t:
            self._race(i, self.w_tid[i], "read", "wrote", _site())
        launch = _running()
        if self.w_epoch[i] < 0 and launch.unwritten is None:
            # Not reported yet: if another thread writes the cell before the next barrier,
            # the bug is the missing barrier (a race), not a cell nobody fills. The thread
            # goes on with the garbage; the block stops at its next barrier (or at the first
            # error the garbage causes) with the report.
            launch.unwritten = (self, i, where(), _site())
        if self.r_epoch[i] != e:
            self.r_epoch[i] = e
            self.r_tid[i] = t
            f = _getframe(1)
            self.r_site[i] = (f.f_code.co_name, f.f_lineno)
        elif self.r_tid[i] != t:
            self.r_tid[i] = _MANY
        launch.sreads[t] += 1
        return self.data[i]

    def __setitem__(self, index: Any, value: Any) -> None:
        i = self._check(index, "wrote")
        t, e = state.tid, state.epoch
        if self.w_epoch[i] == e and self.w_tid[i] != t:
            self._race(i, self.w_tid[i], "wrote", "wrote", _site())
        if self.r_epoch[i] == e and self.r_tid[i] != t:
            unwritten = _running().unwritten
            if unwritten is not None and unwritten[0] is self and unwritten[1] == i:
                self._read_before_write(i, unwritten)
            self._race(i, self.r_tid[i], "wrote", "read", _site())
        self.w_epoch[i] = e
        self.w_tid[i] = t
        f = _getframe(1)
        self.w_site[i] = (f.f_code.co_name, f.f_lineno)
        if self.kind == "f":
            value = float(value)
        elif isinstance(value, (float, np.floating)):
            raise KernelLanguageError(f"{where()}: storing a float into integer {self.name}")
        self.data[i] = value
        _running().swrites[t] += 1

    def atomic_add(self, index: Any, value: Any) -> Any:
        i = self._check(index, "atomically added to")
        t, e = state.tid, state.epoch
        if self.w_epoch[i] == e and self.w_tid[i] not in (t, _ATOMIC):
            self._race(i, self.w_tid[i], "atomically added to", "wrote", _site(1))
        if self.w_epoch[i] < 0:
            raise UninitializedReadError(
                f"{where()} added to cell {i} of {self.name} before any thread of its block "
                "wrote it"
            )
        self.w_epoch[i] = e
        self.w_tid[i] = _ATOMIC
        self.w_site[i] = _site(1)
        old = self.data[i]
        self.data[i] = old + value
        _running().stats.atomics += 1
        return old

    def _race(self, i: int, other: int, did: str, other_did: str, site: tuple) -> None:
        if other == _MANY:
            who = "other threads of the block"
        elif other == _ATOMIC:
            who = "an atomic operation"
            other_did = "updated"
        else:
            who = where(other).split(" of block")[0]
        other_site = self.r_site[i] if other_did == "read" else self.w_site[i]
        noun = {"wrote": "write", "read": "read", "updated": "update"}
        between = (
            f"the {noun[other_did]} ({_line(other_site)}) and the "
            f"{noun.get(did, 'atomic add')} ({_line(site)})"
        )
        raise SharedMemoryRaceError(
            f"{where()} {did} cell {i} of {self.name}{_at(site)}, which {who} {other_did}"
            f"{_at(other_site)} since the last syncthreads(): a race. Put a syncthreads() "
            f"between {between}, where every thread of the block reaches it"
        )

    def _read_before_write(self, i: int, unwritten: tuple) -> None:
        """A thread read cell ``i`` before any thread wrote it, and now another thread
        writes it with no barrier between: the missing barrier is the bug."""
        _, _, reader, read_site = unwritten
        writer = where().split(" of block")[0]
        raise SharedMemoryRaceError(
            f"{reader} read cell {i} of {self.name}{_at(read_site)} before {writer} wrote it"
            f"{_at(_site(1))}, with no syncthreads() between them: a missing barrier (a race). "
            f"Put a syncthreads() between the write ({_line(_site(1))}) and the read "
            f"({_line(read_site)}), where every thread of the block reaches it"
        )


def _site(depth: int = 0) -> tuple[str, int]:
    """The kernel line that called into a device array: (function, line number)."""
    frame = sys._getframe(2 + depth)
    return frame.f_code.co_name, frame.f_lineno


def _line(site: tuple[str, int] | None) -> str:
    return "?" if site is None else f"line {site[1]}"


def _at(site: tuple[str, int] | None) -> str:
    return "" if site is None else f" at line {site[1]} of `{site[0]}`"


def shared_memory(dtype: Any, size: Any) -> SharedArray:
    """The block's shared array for this call site (the same one for all its threads)."""
    launch = state.launch
    if launch is None:
        raise RuntimeError("shared_memory() can only be called inside a kernel")
    if size is None:
        raise KernelLanguageError(
            f"{where()}: dynamic shared memory (size=None) is not supported here: give a size"
        )
    if type(size) is not int or size <= 0:
        raise KernelLanguageError(
            f"{where()}: shared_memory size must be a positive int constant, got {size!r}"
        )
    # (jit.float32 holds a dtype; np.float32 is a type, whose .dtype is a descriptor)
    dt = np.dtype(dtype if isinstance(dtype, type) else getattr(dtype, "dtype", dtype))
    k = launch.shared_calls[state.tid]
    launch.shared_calls[state.tid] = k + 1
    if k == len(launch.shared):
        used = sum(a.nbytes for a in launch.shared) + size * dt.itemsize
        if used > MAX_SHARED_BYTES:
            raise LaunchConfigError(
                f"kernel `{launch.name}` asks for {used} bytes of shared memory per block; a "
                f"block has at most {MAX_SHARED_BYTES}"
            )
        launch.shared.append(SharedArray(f"shared array #{k} ({dt.name}[{size}])", dt, size))
    array = launch.shared[k]
    if array.size != size:
        raise KernelLanguageError(
            f"{where()}: threads of one block asked for different shared arrays at one call"
        )
    return array


def syncthreads() -> None:
    """A barrier for the threads of a block: wait here until all of them arrive."""
    if state.launch is None:
        raise RuntimeError("syncthreads() can only be called inside a kernel")
    caller = sys._getframe(1)
    _greenlet().getcurrent().parent.switch((caller.f_code.co_name, caller.f_lineno))


def atomic_add(array: Any, index: Any, value: Any) -> Any:
    """``array[index] += value`` as one indivisible step; returns the old value."""
    if not isinstance(array, (GlobalArray, SharedArray)):
        raise KernelLanguageError(f"{where()}: atomic_add needs a device or shared array")
    return array.atomic_add(index, value)


# -- warp shuffles ----------------------------------------------------------------------------


class _ShuffleCall:
    """What a lane hands the scheduler when it reaches a shuffle."""

    __slots__ = ("kind", "mask", "value", "arg", "width", "site")

    def __init__(self, kind: str, mask: int, value: Any, arg: int, width: int, site: tuple):
        self.kind, self.mask, self.value = kind, mask, value
        self.arg, self.width, self.site = arg, width, site


def _shuffle(kind: str, mask: Any, value: Any, arg: Any, width: Any) -> Any:
    name = f"shfl_{kind}_sync"
    if state.launch is None:
        raise RuntimeError(f"{name}() can only be called inside a kernel")
    if isinstance(value, (GlobalArray, SharedArray)):
        raise KernelLanguageError(f"{where()}: {name} exchanges one scalar, not a whole array")
    if type(mask) is not int or not 0 <= mask <= 0xFFFFFFFF:
        raise KernelLanguageError(f"{where()}: {name}: the mask must be a 32-bit int, got {mask!r}")
    if width not in (1, 2, 4, 8, 16, 32):
        raise KernelLanguageError(f"{where()}: {name}: width must be a power of 2 up to 32")
    lane = state.tid % WARP_SIZE
    if not mask >> lane & 1:
        raise WarpDivergenceError(
            f"{where()} (lane {lane}) called {name} with mask {mask:#010x}, which leaves out "
            "its own lane: the mask names the lanes that take part, the caller included"
        )
    caller = sys._getframe(2)
    site = (caller.f_code.co_name, caller.f_lineno)
    call = _ShuffleCall(kind, mask, value, _index(arg, name), width, site)
    return _greenlet().getcurrent().parent.switch(call)


def shfl_down_sync(mask: int, value: Any, delta: int, *, width: int = 32) -> Any:
    """The ``value`` of lane ``lane + delta`` (this lane's own where that is past the end of
    its ``width``-lane group). Every lane named in ``mask`` must call it."""
    return _shuffle("down", mask, value, delta, width)


def shfl_xor_sync(mask: int, value: Any, lane_mask: int, *, width: int = 32) -> Any:
    """The ``value`` of lane ``lane ^ lane_mask`` (a butterfly: after xor-ing 16, 8, 4, 2, 1
    every lane holds the warp's total). Every lane named in ``mask`` must call it."""
    return _shuffle("xor", mask, value, lane_mask, width)


def _source_lane(call: _ShuffleCall, lane: int) -> int:
    """The lane whose value ``lane`` receives (its own where the source is past its group)."""
    group_end = (lane // call.width + 1) * call.width
    source = lane + call.arg if call.kind == "down" else lane ^ call.arg
    return source if source < group_end else lane


# -- float division as a GPU does it ---------------------------------------------------------


def _divide(a: Any, b: Any) -> Any:
    """``a / b`` with IEEE semantics for floats, as on a GPU: ``x / 0.0`` is ``inf`` (signed)
    and ``0.0 / 0.0`` is ``nan``. Two integers divided by 0 still raise (no value on a GPU)."""
    try:
        return a / b
    except ZeroDivisionError:
        if type(a) is int and type(b) is int:
            raise
        a = float(a)
        if a == 0.0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, float(b))


def _floor_divide(a: Any, b: Any) -> Any:
    try:
        return a // b
    except ZeroDivisionError:
        if type(a) is int and type(b) is int:
            raise
        return math.floor(_divide(a, b)) if math.isfinite(_divide(a, b)) else _divide(a, b)


def _modulo(a: Any, b: Any) -> Any:
    try:
        return a % b
    except ZeroDivisionError:
        if type(a) is int and type(b) is int:
            raise
        return math.nan  # C's fmod(x, 0.0)


_OPS = {ast.Div: "_mt_divide", ast.FloorDiv: "_mt_floor_divide", ast.Mod: "_mt_modulo"}
_HELPERS = {"_mt_divide": _divide, "_mt_floor_divide": _floor_divide, "_mt_modulo": _modulo}


class _Divisions(ast.NodeTransformer):
    """``a / b`` -> ``_mt_divide(a, b)`` (and ``//``, ``%``, and their augmented forms)."""

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        helper = _OPS.get(type(node.op))
        if helper is None:
            return node
        call = ast.Call(ast.Name(helper, ast.Load()), [node.left, node.right], [])
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        self.generic_visit(node)
        helper = _OPS.get(type(node.op))
        if helper is None or not isinstance(node.target, (ast.Name, ast.Subscript)):
            return node
        load = ast.fix_missing_locations(ast.copy_location(_as_load(node.target), node.target))
        call = ast.Call(ast.Name(helper, ast.Load()), [load, node.value], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(call, node)), node)


def _as_load(target: Any) -> Any:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    return ast.Subscript(target.value, target.slice, ast.Load())


_IEEE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ieee(func: Any) -> Any:
    """``func`` with its divisions made IEEE's (:func:`_divide`): the same code, the same
    globals and closure (read at each launch, as the notebook sets them), the same file and
    lines (a report names the kernel's own lines); ``func`` itself when its source can't be
    read or it divides nothing."""
    try:
        return _IEEE[func]
    except (KeyError, TypeError):
        pass
    rewritten = _rewrite(func) if hasattr(func, "__code__") else func
    try:
        _IEEE[func] = rewritten
    except TypeError:
        pass
    return rewritten


def _rewrite(func: Any) -> Any:
    code = func.__code__
    try:
        tree = ast.parse(source_of(func))
    except (OSError, TypeError, SyntaxError, IndexError):
        return func
    (fdef,) = tree.body if len(tree.body) == 1 else (None,)
    if not isinstance(fdef, ast.FunctionDef) or not any(
        isinstance(n, (ast.BinOp, ast.AugAssign)) and type(n.op) in _OPS for n in ast.walk(fdef)
    ):
        return func
    fdef.decorator_list = []
    fdef = _Divisions().visit(fdef)
    # def _outer(<the helpers>, <the function's free variables>): def func(...): ...
    free = list(code.co_freevars)
    outer = ast.FunctionDef(
        "_mt_outer",
        ast.arguments([], [ast.arg(n) for n in [*_HELPERS, *free]], None, [], [], None, []),
        [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
        [],
    )
    module = ast.fix_missing_locations(ast.Module([outer], []))
    ast.increment_lineno(module, code.co_firstlineno - 1)
    try:
        compiled = compile(module, code.co_filename, "exec")
    except (SyntaxError, ValueError):
        return func
    outer_code = next(c for c in compiled.co_consts if isinstance(c, type(code)))
    inner = next(c for c in outer_code.co_consts if isinstance(c, type(code)))
    if hasattr(inner, "co_qualname"):  # (Python 3.11+: a traceback names the kernel as it is)
        inner = inner.replace(co_qualname=code.co_qualname)
    cells = dict(zip(code.co_freevars, func.__closure__ or (), strict=True))
    values = {**_HELPERS}
    closure = tuple(
        cells[n] if n in cells else types.CellType(values[n]) for n in inner.co_freevars
    )
    rewritten = types.FunctionType(
        inner, func.__globals__, func.__name__, func.__defaults__, closure
    )
    rewritten.__kwdefaults__ = func.__kwdefaults__
    return rewritten


# -- launching ------------------------------------------------------------------------------


def dim3(value: Any, what: str) -> tuple[tuple[int, int, int], int]:
    """``(x, y, z)`` from an int or a tuple of up to 3 ints, and how many were given."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(values) <= 3 or not all(isinstance(v, (int, np.integer)) for v in values):
        count = f" ({len(values)} dims)" if len(values) > 3 else ""
        raise LaunchConfigError(
            f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r:.60}{count}"
        )
    dims = tuple(int(v) for v in values) + (1,) * (3 - len(values))
    if min(dims) < 1:
        raise LaunchConfigError(f"{what} {value!r} has a dimension below 1")
    return dims, len(values)  # type: ignore[return-value]


def _arguments(func: Any, args: tuple) -> tuple[list, list[GlobalArray]]:
    try:
        names = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        names = []
    if len(names) != len(args):
        raise TypeError(
            f"kernel `{func.__name__}` takes {len(names)} arguments but {len(args)} were given"
        )
    converted, arrays, seen = [], [], {}
    for name, a in zip(names, args, strict=True):
        if isinstance(a, np.ndarray):
            if id(a) not in seen:
                seen[id(a)] = GlobalArray(name, a)
                arrays.append(seen[id(a)])
            converted.append(seen[id(a)])
        elif isinstance(a, (bool, int, float, np.bool_, np.integer, np.floating)):
            converted.append(a.item() if isinstance(a, np.generic) else a)
        else:
            raise TypeError(
                f"kernel `{func.__name__}`: argument `{name}` is a {type(a).__name__} "
                f"({a!r:.40}); a kernel takes arrays (numpy in the simulator, cupy on a GPU) "
                "and numbers"
            )
    return converted, arrays


def launch(func: Any, grid: Any, block: Any, args: tuple, name: str | None = None) -> LaunchStats:
    """Run ``func`` on every thread of a ``grid`` of ``block``-shaped blocks."""
    name = name or func.__name__
    (gx, gy, gz), gdims = dim3(grid, "grid")
    (bx, by, bz), bdims = dim3(block, "block")
    nthreads = bx * by * bz
    if nthreads > MAX_THREADS_PER_BLOCK or any(
        b > m for b, m in zip((bx, by, bz), MAX_BLOCK_DIMS, strict=True)
    ):
        raise LaunchConfigError(
            f"kernel `{name}`: a block of {(bx, by, bz)} = {nthreads} threads; CUDA allows at "
            f"most {MAX_THREADS_PER_BLOCK} per block (and {MAX_BLOCK_DIMS} per dimension)"
        )
    total = nthreads * gx * gy * gz
    if total > MAX_SIMULATED_THREADS:
        raise LaunchConfigError(
            f"kernel `{name}`: grid {(gx, gy, gz)} x block {(bx, by, bz)} is {total} threads, "
            f"too many to simulate on a CPU (at most {MAX_SIMULATED_THREADS}); try smaller shapes"
        )
    if state.launch is not None:
        raise RuntimeError("a kernel cannot launch another kernel")
    converted, arrays = _arguments(func, args)
    func = _ieee(func)
    launch = _Launch(name, (gx, gy, gz), (bx, by, bz), max(gdims, bdims))
    coords = [(x, y, z) for z in range(bz) for y in range(by) for x in range(bx)]
    state.launch = launch
    try:
        for block_index, (z, y, x) in enumerate(itertools.product(range(gz), range(gy), range(gx))):
            state.bx, state.by, state.bz = x, y, z
            launch.block_index = block_index
            _run_block(func, converted, launch, coords, block_index * nthreads)
    finally:
        state.launch = None
    for a in arrays:
        a.write_back()
        launch.stats.array_traffic[a.name] = (a.reads, a.writes)
    for sink in _recorders:
        sink.append(launch.stats)
    return launch.stats


_recorders: list[list[LaunchStats]] = []


@contextmanager
def recording() -> Iterator[list[LaunchStats]]:
    """Collect the :class:`LaunchStats` of every simulated launch inside the ``with``."""
    sink: list[LaunchStats] = []
    _recorders.append(sink)
    try:
        yield sink
    finally:
        del _recorders[next(i for i, r in enumerate(_recorders) if r is sink)]


def _run_block(func: Any, args: list, launch: _Launch, coords: list, first_gtid: int) -> None:
    launch.begin_block()
    make_thread = _greenlet()
    threads = [make_thread(func) for _ in coords]
    live = list(range(len(coords)))
    epoch = 0
    s = state

    def resume(t: int, value: Any = None, start: bool = False) -> Any:
        """Run thread ``t`` until it stops: a barrier's site, a shuffle, or None (finished)."""
        s.tx, s.ty, s.tz = coords[t]
        s.tid, s.gtid, s.epoch = t, first_gtid + t, epoch
        g = threads[t]
        try:
            stop = g.switch(*args) if start else g.switch(value)
        except SharedMemoryRaceError:
            raise
        except ZeroDivisionError as exc:
            _unwritten(launch)  # (garbage read from an unwritten cell comes first)
            raise KernelArithmeticError(
                f"{where()}: {exc}. On a GPU an integer divided by 0 has no defined value (a "
                "float divided by 0.0 is inf or nan, as IEEE arithmetic makes it): guard the "
                "divisor"
            ) from None
        except KernelError:
            _unwritten(launch)
            raise
        except Exception as exc:
            _unwritten(launch)
            if hasattr(exc, "add_note"):
                exc.add_note(f"(raised by {where()})")
            raise
        return None if g.dead else stop

    while True:
        launch.epoch_id += 1
        waiting, finished = [], []
        for first in range(0, len(live), WARP_SIZE):
            warp = live[first : first + WARP_SIZE]
            stops = {t: resume(t, start=epoch == 0) for t in warp}
            while any(isinstance(stop, _ShuffleCall) for stop in stops.values()):
                for t, value in _exchange(stops, launch).items():
                    stops[t] = resume(t, value)
            for t in warp:
                if stops[t] is None:
                    finished.append(t)
                else:
                    waiting.append((t, stops[t]))
        _unwritten(launch)
        if not waiting:
            break
        if finished:
            t_wait, (fn, line) = waiting[0]
            s.tx, s.ty, s.tz = coords[finished[0]]
            raise BarrierDivergenceError(
                f"{where()} finished without reaching the syncthreads() at line {line} of "
                f"`{fn}` where {where(t_wait).split(' of block')[0]} waits: every thread of a "
                "block must reach each syncthreads() (don't return early, and keep "
                "syncthreads() outside `if`s that only some threads enter)"
            )
        sites = {site for _, site in waiting}
        if len(sites) > 1:
            a = waiting[0][1]
            b = next(site for _, site in waiting if site != a)
            raise BarrierDivergenceError(
                f"kernel `{launch.name}`: in block {_coords((s.bx, s.by, s.bz), launch.dims)} "
                f"some threads wait at the syncthreads() on line {a[1]}, others at line {b[1]}: "
                "all threads of a block must meet at the same barrier"
            )
        live = [t for t, _ in waiting]
        epoch += 1
    launch.end_block(epoch)


def _unwritten(launch: _Launch) -> None:
    """Report the first read of a shared cell that no thread wrote before it: called when
    every thread of the block has stopped at a barrier or finished (no thread wrote the cell
    after the read either: that would have been reported as a missing barrier), or when the
    garbage read made a thread fail."""
    if launch.unwritten is None:
        return
    array, i, who, site = launch.unwritten
    launch.unwritten = None
    raise UninitializedReadError(
        f"{who} read cell {i} of {array.name}{_at(site)} before any thread of its block wrote "
        "it (shared memory starts as garbage: fill every cell you read, e.g. with 0 past the "
        "end of the data, and syncthreads() between the writes and the reads)"
    )


def _exchange(stops: dict[int, Any], launch: _Launch) -> dict[int, Any]:
    """One round of warp shuffles: for each group of lanes that called a shuffle with one
    mask, at one line, once every lane the mask names is there, each lane's result.

    ``stops`` holds every lane of one warp: where it stopped. A group still missing a lane
    that is not itself at another shuffle (it finished, or waits at a barrier) would wait
    forever on a GPU (or read garbage): that is reported, naming the lanes."""
    base = min(stops) // WARP_SIZE * WARP_SIZE
    groups: dict[int, list[int]] = {}
    for t, stop in stops.items():
        if isinstance(stop, _ShuffleCall):
            groups.setdefault(stop.mask, []).append(t)
    results: dict[int, Any] = {}
    for mask, members in groups.items():
        named = [base + lane for lane in range(WARP_SIZE) if mask >> lane & 1]
        missing = [t for t in named if t in stops and t not in members]
        calls = [stops[t] for t in members]
        if missing or len({c.site for c in calls}) > 1:
            continue
        for t, call in zip(members, calls, strict=True):
            source = base + _source_lane(call, t - base)
            if source not in members:
                raise WarpDivergenceError(
                    f"{_block_of(launch)}: lane {t - base} of warp {base // WARP_SIZE} reads "
                    f"lane {source - base} in shfl_{call.kind}_sync (line {call.site[1]}), "
                    f"which takes no part in it ({_not_taking_part(source, stops, mask)}): "
                    "on a GPU the value is undefined"
                )
            results[t] = stops[source].value
        launch.stats.shuffles += len(members)
    if not results:
        raise WarpDivergenceError(_divergence(stops, groups, base, launch))
    return results


def _block_of(launch: _Launch) -> str:
    return f"kernel `{launch.name}`, block {_coords((state.bx, state.by, state.bz), launch.dims)}"


def _lanes(ts: list[int], base: int) -> str:
    """``lane 5`` or ``lanes 0-4, 6-31`` (lane numbers within the warp)."""
    runs: list[list[int]] = []
    for lane in sorted(t - base for t in ts):
        if runs and lane == runs[-1][1] + 1:
            runs[-1][1] = lane
        else:
            runs.append([lane, lane])
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"lane {shown}" if len(ts) == 1 else f"lanes {shown}"


def _not_taking_part(t: int, stops: dict[int, Any], mask: int) -> str:
    if t not in stops:
        return "no such thread: the block ends before it"
    if not mask >> (t % WARP_SIZE) & 1:
        return f"not in the mask {mask:#010x}"
    return "it did not call the shuffle"


def _doing(stop: Any) -> str:
    if stop is None:
        return "finished"
    if isinstance(stop, _ShuffleCall):
        return f"wait at a shfl_{stop.kind}_sync on line {stop.site[1]} (mask {stop.mask:#010x})"
    return f"wait at the syncthreads() on line {stop[1]}"


def _divergence(
    stops: dict[int, Any], groups: dict[int, list[int]], base: int, launch: _Launch
) -> str:
    """The message for a warp whose shuffles can never complete."""
    mask, members = next(iter(groups.items()))
    named = [base + lane for lane in range(WARP_SIZE) if mask >> lane & 1]
    missing = [t for t in named if t in stops and t not in members]
    call = stops[members[0]]
    if not missing:  # same mask, different lines
        other = next(stops[t] for t in members if stops[t].site != call.site)
        at_other = [t for t in members if stops[t].site == other.site]
        at_first = [t for t in members if stops[t].site == call.site]
        return (
            f"{_block_of(launch)}, warp {base // WARP_SIZE}: {_lanes(at_first, base)} "
            f"wait at the shuffle on line {call.site[1]}, {_lanes(at_other, base)} at "
            f"the one on line {other.site[1]}: the lanes of a mask must meet at one shuffle"
        )
    doing: dict[str, list[int]] = {}
    for t in missing:
        doing.setdefault(_doing(stops[t]), []).append(t)
    others = "; ".join(f"{_lanes(ts, base)}: {what}" for what, ts in doing.items())
    return (
        f"{_block_of(launch)}, warp {base // WARP_SIZE}: {_lanes(members, base)} wait "
        f"at the shfl_{call.kind}_sync on line {call.site[1]} with mask {mask:#010x}, but "
        f"{_lanes(missing, base)} named in the mask did not call it ({others}): every "
        "lane a shuffle's mask names must call it (keep shuffles out of `if`s that only some "
        "lanes enter, or leave those lanes out of the mask)"
    )
