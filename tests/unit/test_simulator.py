"""The kernel simulator runs launches faithfully and reports planted bugs by thread and block."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as mt
from minitorch.cuda import jit, simulator
from minitorch.cuda.errors import (
    BarrierDivergenceError,
    GlobalMemoryRaceError,
    KernelLanguageError,
    KernelOutOfBoundsError,
    LaunchConfigError,
    SharedMemoryRaceError,
    UninitializedReadError,
)


@jit.rawkernel()
def record_ids(out, n):
    i = jit.grid(1)
    if i < n:
        out[i, 0] = jit.threadIdx.x
        out[i, 1] = jit.blockIdx.x
        out[i, 2] = jit.blockDim.x
        out[i, 3] = jit.gridDim.x


def test_every_thread_of_every_block_runs_with_its_ids():
    out = np.full((10, 4), -1, dtype=np.int64)
    record_ids[3, 4](out, 10)
    i = np.arange(10)
    np.testing.assert_array_equal(out, np.stack([i % 4, i // 4, [4] * 10, [3] * 10], axis=1))
    assert record_ids.stats.threads == 12


@jit.rawkernel()
def no_guard(a, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    out[i] = a[i]


def test_out_of_bounds_names_the_thread_and_block():
    with pytest.raises(KernelOutOfBoundsError, match=r"thread 2 of block 2 .* read a\[10\]"):
        no_guard[3, 4](np.zeros(10), np.zeros(10))


@jit.rawkernel()
def negative_index(a, out):
    out[0] = a[jit.threadIdx.x - 1]


def test_a_negative_index_is_out_of_bounds_not_wrapped():
    with pytest.raises(KernelOutOfBoundsError, match=r"read a\[-1\]"):
        negative_index[1, 1](np.zeros(3), np.zeros(1))


def _tree(with_barrier: bool, pad: bool):
    @jit.rawkernel()
    def tree(x, out, n):
        buf = jit.shared_memory(jit.float64, 8)
        t = jit.threadIdx.x
        if t < n:
            buf[t] = x[t]
        elif pad:
            buf[t] = 0.0
        jit.syncthreads()
        stride = 4
        while stride > 0:
            if t < stride:
                buf[t] = buf[t] + buf[t + stride]
            if with_barrier:
                jit.syncthreads()
            stride = stride // 2
        if t == 0:
            out[0] = buf[0]

    return tree


def test_a_barrier_orders_the_threads_of_a_block():
    out = np.zeros(1)
    _tree(True, True)[1, 8](np.arange(8.0), out, 8)
    assert out[0] == 28.0


def test_a_missing_barrier_is_a_race():
    with pytest.raises(SharedMemoryRaceError, match="thread 1 of block 0 .* cell 1 of shared"):
        _tree(False, True)[1, 8](np.arange(8.0), np.zeros(1), 8)


def test_reading_unwritten_shared_memory_is_reported():
    with pytest.raises(UninitializedReadError, match="read cell 5 of shared array #0"):
        _tree(True, False)[1, 8](np.arange(8.0), np.zeros(1), 5)


@jit.rawkernel()
def early_exit(x, n):
    buf = jit.shared_memory(jit.float32, 4)
    t = jit.threadIdx.x
    if t < n:
        buf[t] = 1.0
        jit.syncthreads()
        x[t] = buf[t]


def test_a_barrier_that_some_threads_skip_is_reported():
    with pytest.raises(
        BarrierDivergenceError, match="thread 3 of block 0 .* finished without reaching"
    ):
        early_exit[1, 4](np.zeros(4, dtype=np.float32), 3)


@jit.rawkernel()
def everyone_writes_zero(out):
    out[0] = jit.threadIdx.x


@jit.rawkernel()
def atomic_count(out):
    jit.atomic_add(out, 0, 1)


def test_two_threads_writing_one_element_race_unless_atomic():
    with pytest.raises(GlobalMemoryRaceError, match=r"thread 1 of block 0 .* wrote out\[0\]"):
        everyone_writes_zero[1, 4](np.zeros(1, dtype=np.int64))
    out = np.zeros(1, dtype=np.int64)
    atomic_count[3, 5](out)
    assert out[0] == 15 and atomic_count.stats.atomics == 15


@jit.rawkernel()
def uses_numpy(a, out):
    out[0] = np.sum(a)


@jit.rawkernel()
def whole_array(a, out):
    out[0] = a


def test_library_calls_and_whole_arrays_are_refused():
    with pytest.raises(KernelLanguageError, match="uses `np.sum` from numpy"):
        uses_numpy[1, 1](np.ones(3), np.zeros(1))
    with pytest.raises(KernelLanguageError, match="one element"):
        whole_array[1, 1](np.ones(3), np.zeros(1))


def test_launch_limits_are_cudas():
    with pytest.raises(LaunchConfigError, match="at most 1024"):
        record_ids[1, 2048](np.zeros((1, 4), dtype=np.int64), 1)
    with pytest.raises(LaunchConfigError, match="grid"):
        record_ids[0, 4](np.zeros((1, 4), dtype=np.int64), 1)
    with pytest.raises(TypeError, match="launched, not called"):
        record_ids(np.zeros((1, 4)), 1)
    with pytest.raises(RuntimeError, match="inside a kernel"):
        _ = jit.threadIdx.x


def test_recording_collects_every_launch():
    with simulator.recording() as launches:
        record_ids[2, 4](np.zeros((8, 4), dtype=np.int64), 8)
        record_ids[1, 4](np.zeros((4, 4), dtype=np.int64), 4)
    assert [s.threads for s in launches] == [8, 4]
    assert launches[0].array_traffic["out"] == (0, 32)


def test_cuda_namespace_keeps_torch_names():
    assert mt.cuda.is_available() is mt.backend.get("cuda").is_available()
    assert isinstance(mt.cuda.device_count(), int)


# catches: shared arrays counted at 8 bytes an element whatever their dtype (three
# float32[4096] arrays, exactly 48 KiB, were refused as 81,920 bytes)
def test_shared_memory_counts_each_arrays_real_element_size():
    @jit.rawkernel()
    def three_arrays(x, out):
        a = jit.shared_memory(jit.float32, 4096)
        b = jit.shared_memory(jit.float32, 4096)
        c = jit.shared_memory(jit.float32, 4096)
        t = jit.threadIdx.x
        a[t] = x[t]
        b[t] = x[t]
        c[t] = x[t]
        jit.syncthreads()
        out[t] = a[t] + b[t] + c[t]

    out = np.zeros(4, dtype=np.float32)
    three_arrays[1, 4](np.ones(4, dtype=np.float32), out)
    assert out.tolist() == [3.0] * 4

    @jit.rawkernel()
    def one_float_too_many(x, out):
        a = jit.shared_memory(jit.float32, 8192)
        b = jit.shared_memory(jit.float32, 4097)
        t = jit.threadIdx.x
        a[t] = x[t]
        b[t] = x[t]
        out[t] = a[t] + b[t]

    with pytest.raises(mt.cuda.LaunchConfigError, match="49156 bytes of shared memory"):
        one_float_too_many[1, 4](np.ones(4, dtype=np.float32), out)


@jit.rawkernel()
def _axpy(alpha, x, y, out, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        out[i] = alpha * x[i] + y[i]


def test_a_launch_argument_of_the_wrong_kind_is_named_with_the_kernel_and_parameter():
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"kernel _axpy: parameter 'out' is indexed .* int 5"):
        _axpy[1, 4](2.0, x, y, 5, 4)
    with pytest.raises(KernelLanguageError, match=r"parameter 'alpha' is used as a number"):
        _axpy[1, 4](x, x, y, np.zeros(4, np.float32), 4)
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"parameter 'out' is written .* read-only array"):
        _axpy[1, 4](2.0, x, y, frozen, 4)
    with pytest.raises(TypeError, match=r"takes 5 arguments \(alpha, x, y, out, n\), but .* 4"):
        _axpy[1, 4](2.0, x, y, frozen)


def test_shared_memory_takes_numpy_scalar_types_as_cupyx_jit_does():
    # catches: np.float32 (a type, whose .dtype is a descriptor) crashing the simulator
    @jit.rawkernel()
    def copy_through_shared(x, out):
        cells = jit.shared_memory(np.float32, 4)
        t = jit.threadIdx.x
        cells[t] = x[t]
        jit.syncthreads()
        out[t] = cells[3 - t]

    out = np.zeros(4, dtype=np.float32)
    copy_through_shared[1, 4](np.arange(4, dtype=np.float32), out)
    assert out.tolist() == [3.0, 2.0, 1.0, 0.0]


# catches: a kernel with no source lines to read (defined by exec of a string, as a
# notebook's or a tool's generated code is) passing the language check unread, so that it
# ran numpy or Python built-ins in the simulator where cupyx.jit refuses to compile them
@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("out[i] = np.sqrt(x[i])", "np.sqrt"),
        ("out[i] = root(x[i])", "root"),
        ("out[i] = sorted((x[i], 1.0))[0]", "sorted"),
        ("out[i] = abs(x[i])", "abs"),
    ],
)
def test_a_kernel_from_a_string_is_held_to_the_kernel_language(body, named):
    namespace = {"jit": jit, "np": np, "root": np.sqrt}
    header = "@jit.rawkernel()\ndef k(x, out):\n    i = jit.threadIdx.x\n"
    exec(header + "    " + body + "\n", namespace)
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, dtype=np.float32)
    with pytest.raises(KernelLanguageError, match=named):
        namespace["k"][1, 4](x, out)
    exec(header + "    out[i] = max(x[i], np.float32(1.0)) + jit.exp(x[i])\n", namespace)
    namespace["k"][1, 4](x, out)  # the kernel language itself runs
    assert np.allclose(out, np.maximum(x, 1.0) + np.exp(x))
