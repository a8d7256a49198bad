"""``autocast``: run each op in the precision that suits it, decided in ``Function.apply``.

Inside ``with autocast("cpu"):`` every op looks up its *category* in the policy below
(PyTorch's lists, for the ops minitorch has) and gets its floating inputs cast first:

- **lower precision**: matmul, linear (and conv2d, a matmul over im2col columns) run in
  float16/bfloat16, where tensor cores make them fast;
- **float32**: ops whose results need range or precision (losses everywhere; on CUDA also
  exp, log, pow, softmax, log_softmax and sums) run in float32;
- **promote**: ops that join several inputs (cat, stack) cast them all to the widest type.

Every other op runs in the dtype its inputs have, and binary ops promote mixed inputs as
usual (``float16 + float32`` is float32). float64 inputs are never cast.

The casts are ``ToCopy`` ops, so autograd sends each gradient back through them: a
float32 master weight gets a float32 gradient. Within one autocast region a weight is cast
once and the cast reused (the cast cache), however many ops read it.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..backend import get as _backend
from ..checks import as_bool, describe
from ..dtypes import as_dtype, bfloat16, float16, float32, float64, promote_types
from ..function import Function, Layer
from ..state import grad as _grad
from ..tensor import Tensor


class _AutocastState(threading.local):
    """Autocast's switches, per thread (as PyTorch's)."""

    def __init__(self) -> None:
        self.dtypes: dict = {}  # device type -> the low-precision dtype; absent: autocast off
        self.cache_enabled = True
        self.depth = 0  # how many autocast regions are open
        self.cache: dict = {}  # id(weight) -> (weight, version, dtype, its cast)


#: ``_state.dtypes``: where the autocast layer casts inputs by the policy (this thread).
_state = _AutocastState()

LOWER_PRECISION = "lower_precision_fp"
FP32 = "fp32"
PROMOTE = "promote"

#: The autocast policy: for each device type, op name -> category (PyTorch's lists,
#: restricted to the ops minitorch has). Ops not listed run in their inputs' dtype.
POLICY: dict[str, dict[str, str]] = {
    "cpu": {
        "matmul": LOWER_PRECISION,
        "linear": LOWER_PRECISION,
        "conv2d": LOWER_PRECISION,
        "mse_loss": FP32,
        "nll_loss": FP32,
        "cross_entropy": FP32,
        "binary_cross_entropy_with_logits": FP32,
        "binary_cross_entropy": FP32,
        "smooth_l1_loss": FP32,
        "cat": PROMOTE,
        "stack": PROMOTE,
    },
    "cuda": {
        "matmul": LOWER_PRECISION,
        "linear": LOWER_PRECISION,
        "conv2d": LOWER_PRECISION,
        "exp": FP32,
        "log": FP32,
        "pow": FP32,
        "softmax": FP32,
        "log_softmax": FP32,
        "sum": FP32,
        "mse_loss": FP32,
        "nll_loss": FP32,
        "cross_entropy": FP32,
        "binary_cross_entropy_with_logits": FP32,
        "smooth_l1_loss": FP32,
        "cat": PROMOTE,
        "stack": PROMOTE,
        "index_put": PROMOTE,
        "scatter_add": PROMOTE,
    },
}

#: The dtype autocast uses when none is given, as in PyTorch.
DEFAULT_DTYPE = {"cpu": bfloat16, "cuda": float16}


def category(op: str, device_type: str) -> str | None:
    """The autocast category of op ``op`` on ``device_type`` (None: runs as it is)."""
    return POLICY[device_type].get(op)


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for tensors of ``device_type`` in this thread."""
    return _check_device_type(device_type) in _state.dtypes


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype autocast uses (or would use) on ``device_type``."""
    return _state.dtypes.get(device_type, DEFAULT_DTYPE[_check_device_type(device_type)])


def clear_autocast_cache() -> None:
    """Forget the casts of weights made so far (done on leaving the outermost region)."""
    _state.cache.clear()


def cuda_available() -> bool:
    """Is there a GPU (cupy with a working device)? As ``minitorch.cuda.is_available()``."""
    return _backend("cuda").is_available()


def _check_device_type(device_type: str) -> str:
    if not isinstance(device_type, str) or device_type not in POLICY:
        raise ValueError(
            f"autocast: device_type must be one of {sorted(POLICY)}, got {device_type!r}"
        )
    return device_type


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast("cpu"):`` (or ``@autocast("cpu")`` on a function) runs the ops inside
    in mixed precision: see the module docstring. Regions nest; ``enabled=False`` turns
    autocast off inside a region (cast low-precision tensors back with ``.float()`` there).
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool = True,
    ) -> None:
        self.device_type = _check_device_type(getattr(device_type, "type", device_type))
        self.fast_dtype = (
            DEFAULT_DTYPE[self.device_type] if dtype is None else as_dtype(dtype, "autocast")
        )
        if self.fast_dtype not in (float16, bfloat16):
            raise ValueError(
                f"autocast: dtype must be minitorch.float16 or minitorch.bfloat16, got "
                f"{self.fast_dtype}"
            )
        self.enabled = as_bool(enabled, "autocast", "enabled")
        self.cache_enabled = as_bool(cache_enabled, "autocast", "cache_enabled")
        if self.device_type == "cuda" and self.enabled and not cuda_available():
            warnings.warn(  # as PyTorch: a CUDA region on a machine without one does nothing
                "CUDA is not available. Disabling autocast.",
                UserWarning,
                stacklevel=2 + int(type(self) is not autocast),  # (cuda.amp's: its caller)
            )
            self.enabled = False
        if self.device_type == "cuda" and self.enabled and self.fast_dtype is bfloat16:
            raise ValueError(
                "autocast: cupy has no bfloat16, so CUDA autocast supports float16 only"
            )
        self._saved: list = []

    def __enter__(self) -> autocast:
        self._saved.append((_state.dtypes, _state.cache_enabled))
        dtypes = dict(_state.dtypes)  # a new dict: the enclosing region's stays as it was
        if self.enabled:
            dtypes[self.device_type] = self.fast_dtype
        else:
            dtypes.pop(self.device_type, None)
        _state.dtypes, _state.cache_enabled = dtypes, self.cache_enabled
        _state.depth += 1
        _LAYER.engage()
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._saved:
            raise RuntimeError("autocast: __exit__ without a matching __enter__")
        _state.dtypes, _state.cache_enabled = self._saved.pop()
        _state.depth -= 1
        _LAYER.disengage()
        if _state.depth == 0:
            clear_autocast_cache()

    def __call__(self, func: Callable) -> Callable:
        """Use as a decorator: ``func`` runs inside a fresh region each call."""
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {describe(func)}; use "
                "`with autocast(...):` to autocast a block"
            )
        settings = (self.device_type, self.fast_dtype, self.enabled, self.cache_enabled)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(*settings):
                return func(*args, **kwargs)

        return wrapper


@contextlib.contextmanager
def state_kept() -> Iterator[None]:
    """Put this thread's autocast state back as it was when the block ends, however it
    ends: a region a learner's code opened and never closed, or one a time limit's signal
    interrupted inside ``__enter__`` (where ``with`` never calls ``__exit__``), is closed,
    and the layer's users counted again."""
    saved = (_state.dtypes, _state.cache_enabled, _state.depth)
    try:
        yield
    finally:
        for _ in range(_state.depth - saved[2]):  # regions left open
            _LAYER.disengage()
        for _ in range(saved[2] - _state.depth):  # regions closed that were open before
            _LAYER.engage()
        _state.dtypes, _state.cache_enabled, _state.depth = saved
        if _state.depth == 0:
            _state.cache.clear()


# --- the policy, as Function.apply runs it -------------------------------------------------
class Autocast(Layer):
    """Chapter 04's layer: cast each op's inputs as the op's autocast category says.

    It is on ``apply``'s stack only while an autocast region is open (``engage`` on entering
    one, ``disengage`` on leaving; in any thread, while the casts follow the calling
    thread's regions), so ops outside a region pay nothing.
    """

    order = 10
    reads_parts = True  # (the policy names the ops a LayerNorm or a GELU is made of)

    def __call__(self, op: type[Function], args: tuple, kwargs: dict, ctx: Any) -> Any:
        if _state.dtypes:
            args = cast_inputs(op.name, args)
        return self.below(op, args, kwargs, ctx)


_LAYER = Autocast()


def cast_inputs(op: str, args: tuple) -> tuple:
    """``args`` with their floating tensors cast for op ``op``'s category."""
    device_type = next((a.device.type for a in args if isinstance(a, Tensor)), None)
    if device_type not in _state.dtypes:
        return args  # no tensors, or autocast is off for their device
    kind = POLICY[device_type].get(op)
    if kind is None:
        return args
    if kind == LOWER_PRECISION:
        target = _state.dtypes[device_type]
    elif kind == FP32:
        target = float32
    else:
        target = _widest(args)
        if target is None:
            return args
    return tuple(_cast(a, target, kind) for a in args)


def _widest(args: tuple) -> Any:
    widest = None
    for a in args:
        if isinstance(a, Tensor) and a.dtype.is_floating_point:
            widest = a.dtype if widest is None else promote_types(widest, a.dtype)
    return widest


def _eligible(a: Any, kind: str) -> bool:
    """Floating tensors are cast; float64 only by ``promote`` (PyTorch never narrows it)."""
    if not isinstance(a, Tensor):
        return False
    dt = a.dtype
    return dt.is_floating_point and (dt is not float64 or kind == PROMOTE)


def _cast(a: Any, target: Any, kind: str) -> Any:
    if not _eligible(a, kind) or a.dtype is target:
        return a
    cacheable = (
        _state.cache_enabled
        and kind == LOWER_PRECISION
        and a.dtype is float32
        and a.is_leaf
        and a.requires_grad
        and _grad.enabled  # a cast made under no_grad has no graph: never reuse it later
    )
    if not cacheable:
        return a.to(target)
    hit = _state.cache.get(id(a))
    version = a._version
    if hit is not None and hit[0] is a and hit[1] == version and hit[2] is target:
        return hit[3]
    cast = a.to(target)
    _state.cache[id(a)] = (a, version, target, cast)
    return cast
