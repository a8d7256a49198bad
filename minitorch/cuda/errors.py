"""What the kernel simulator reports: each error names the kernel, the block and the thread."""

from __future__ import annotations


class KernelError(RuntimeError):
    """A bug in a kernel, found while simulating it (on a GPU it would be silent or a crash)."""


class KernelOutOfBoundsError(KernelError, IndexError):
    """A thread read or wrote outside an array (a missing bounds guard, a wrong index)."""


class SharedMemoryRaceError(KernelError):
    """Two threads of a block touched the same shared-memory cell, one of them writing,
    with no ``syncthreads()`` between them."""


class GlobalMemoryRaceError(KernelError):
    """Two threads wrote the same element of global memory in one launch."""


class UninitializedReadError(KernelError):
    """A thread read shared memory that no thread of its block had written."""


class BarrierDivergenceError(KernelError):
    """Some threads of a block reached a ``syncthreads()`` that others never reach."""


class WarpDivergenceError(KernelError):
    """Lanes of a warp named in a shuffle's mask that do not all call that shuffle, or a
    lane that reads from a lane taking no part in it."""


class KernelArithmeticError(KernelError, ZeroDivisionError):
    """Arithmetic with no value on a GPU: an integer divided by zero. (A float divided by
    zero is inf or nan, as IEEE arithmetic and a GPU make it, and raises nothing.)"""


class LaunchConfigError(KernelError, ValueError):
    """A launch the GPU refuses: too many threads per block, too much shared memory, ..."""


class KernelLanguageError(KernelError, TypeError):
    """Code inside a kernel that a GPU cannot run: numpy calls, whole-array operations, ..."""
