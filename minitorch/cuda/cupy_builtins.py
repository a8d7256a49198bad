"""The kernel language's CUDA built-ins as ``cupyx.jit`` objects, for any target, GPU or not.

:mod:`minitorch.cuda.gpu` swaps each name a kernel uses for cupy's counterpart before
``cupyx.jit`` compiles it. cupy's own objects are used as they are, except two, which keep
the kernel language's meaning on the GPU and compile without one:

- **thread coordinates are signed** (``int32``), as in the simulator, where they are Python
  ints. cupy's ``threadIdx.x`` & co. are CUDA's ``unsigned int``: ``tid - 1`` at thread 0
  would wrap to 4294967295 instead of giving -1, and with NumPy 2 cupyx.jit cannot even mix
  them with an ``int`` argument (``row * k`` fails: "Cannot cast from 'int32' to uint32 with
  casting rule same_kind"), so the chapter's matmuls would not compile at all.
- **warp shuffles know the warp**: cupy's ``shfl_*_sync`` ask the driver for the warp size
  (and the full mask) while the kernel is *transpiled*, which fails without a GPU
  (``cudaErrorInsufficientDriver``, re-raised by cupyx.jit as "TypeError: an integer is
  required"). Ours write in 32 lanes and ``0xffffffff``, what every NVIDIA GPU has.
"""

from __future__ import annotations

import functools
from typing import Any

#: Lanes per warp and the mask naming all of them, on every NVIDIA GPU (CUDA's ``warpSize``).
WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF


@functools.cache
def names() -> dict[str, Any]:
    """``threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim``, ``grid`` and the shuffles."""
    from cupyx.jit._internal_types import Data

    dim3 = _signed_dim3()
    found: dict[str, Any] = {
        name: Data(name, dim3) for name in ("threadIdx", "blockIdx", "blockDim", "gridDim")
    }
    found["grid"] = _signed_grid()
    for op in ("down", "xor"):
        found[f"shfl_{op}_sync"] = _shuffle(op)
    return found


def _signed_dim3() -> Any:
    from cupyx.jit import _cuda_types
    from cupyx.jit._internal_types import Data

    class SignedDim3(_cuda_types.Dim3):
        """``dim3`` whose ``.x/.y/.z`` read as ``int``."""

        def x(self, instance: Data) -> Data:
            return Data(f"((int){instance.code}.x)", _cuda_types.int32)

        def y(self, instance: Data) -> Data:
            return Data(f"((int){instance.code}.y)", _cuda_types.int32)

        def z(self, instance: Data) -> Data:
            return Data(f"((int){instance.code}.z)", _cuda_types.int32)

    return SignedDim3()


def _signed_grid() -> Any:
    from cupyx.jit import _builtin_funcs, _cuda_types
    from cupyx.jit._internal_types import Data

    class SignedGrid(_builtin_funcs.GridFunc):
        """``grid(ndim)``: ``blockIdx * blockDim + threadIdx`` per axis, as ``int``."""

        def call_const(self, env: Any, ndim: Any) -> Data:
            if ndim not in (1, 2, 3):
                raise ValueError("grid(ndim): ndim must be 1, 2 or 3")
            codes = [f"((int)(blockIdx.{n} * blockDim.{n} + threadIdx.{n}))" for n in "xyz"[:ndim]]
            if ndim == 1:
                return Data(codes[0], _cuda_types.int32)
            make = "STD::make_pair" if ndim == 2 else "STD::make_tuple"  # STD: cupy's carray.cuh
            return Data(
                f"{make}({', '.join(codes)})", _cuda_types.Tuple([_cuda_types.int32] * ndim)
            )

    return SignedGrid("grid")


@functools.cache
def _shuffle_class() -> type:
    from cupyx.jit import _builtin_funcs, _compile, _cuda_types
    from cupyx.jit._internal_types import Constant, Data

    class TargetShuffle(_builtin_funcs.WarpShuffleOp):
        """cupyx.jit's ``__shfl_*_sync``, with the warp size and full mask written in."""

        def call(self, env: Any, mask: Any, var: Any, val_id: Any, *, width: Any = None) -> Data:
            var = Data.init(var, env)
            if var.ctype.dtype.name not in self._dtypes:
                raise TypeError(f"`{self._name}` does not support {var.ctype.dtype} input.")
            if not isinstance(mask, Constant) or not isinstance(mask.obj, int):
                raise TypeError(f"`{self._name}`: the mask must be an integer constant")
            if not 0 <= mask.obj <= FULL_MASK:
                raise ValueError(f"`{self._name}`: the mask {mask.obj:#x} is out of range")
            width = Constant(WARP_SIZE) if width is None else width
            if isinstance(width, Constant) and width.obj not in (1, 2, 4, 8, 16, 32):
                raise ValueError(f"`{self._name}`: width must be a power of 2 up to 32")
            lane_type = _cuda_types.uint32 if self._op in ("up", "down") else _cuda_types.int32
            # an int lane offset converts as C++ converts it (NumPy 2's same_kind would refuse)
            val_id = Data.init(_compile._astype_scalar(val_id, lane_type, "unsafe", env), env)
            width = Data.init(_compile._astype_scalar(width, _cuda_types.int32, "unsafe", env), env)
            code = f"{self._name}({mask.obj:#x}, {var.code}, {val_id.code}, {width.code})"
            return Data(code, var.ctype)

    return TargetShuffle


def _shuffle(op: str) -> Any:
    """The shuffle ``shfl_<op>_sync`` (``op``: ``"down"`` or ``"xor"``)."""
    from cupyx.jit import _builtin_funcs

    dtypes = getattr(_builtin_funcs, f"shfl_{op}_sync")._dtypes
    return _shuffle_class()(op, dtypes)
