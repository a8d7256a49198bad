"""Creating tensors: from data, filled with a value, ranges, and random numbers.

Random numbers are drawn on the CPU from a seedable generator and then moved, so the
same seed gives the same values on every device. ``tensor`` and the fill under ``full``,
``zeros`` and ``ones`` are the constructors of ``ops/factory.py``, which the random ops share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import as_number
from .checks import as_tensor as check_tensor
from .device import as_device
from .dtypes import as_dtype, get_default_dtype, int64
from .ops.factory import from_host, tensor
from .ops.factory import full as _full
from .ops.random import Normal, Rand, Randint, Randn, Randperm
from .random import Generator
from .shape import as_size, as_sizes
from .tensor import Tensor


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a C-contiguous numpy array (changes show in both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.name != "bfloat16" and (
        array.dtype.kind not in "biuf"
        or array.dtype.byteorder == ">"
        or array.dtype.name
        in (
            "uint16",
            "uint32",
            "uint64",
            "float128",
            "longdouble",
        )
    ):
        raise TypeError(
            f"from_numpy: can't convert a numpy array of dtype {array.dtype.str} "
            f"({array.dtype.name}); the supported types are: float64, float32, float16, int64, "
            "int32, int16, int8, uint8 and bool (native byte order)"
        )
    if not array.flags.c_contiguous:
        raise ValueError(
            f"from_numpy: the array (shape {array.shape}, strides {array.strides}) is not "
            "C-contiguous; pass np.ascontiguousarray(array)"
        )
    return Tensor._from_array(array)


def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return _full(size, fill_value, dtype, device, requires_grad, "full")


def zeros(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    return _full(_shape(size, keywords, "zeros"), 0.0, dtype, device, requires_grad, "zeros")


def ones(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    return _full(_shape(size, keywords, "ones"), 1.0, dtype, device, requires_grad, "ones")


def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    """Uninitialised in PyTorch; zeros here, so that nothing depends on leftover memory."""
    return _full(_shape(size, keywords, "empty"), 0.0, dtype, device, requires_grad, "empty")


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    n = as_size(n, "eye", "n")
    m = None if m is None else as_size(m, "eye", "m")
    return from_host(np.eye(n, m), dtype or get_default_dtype(), device, requires_grad, op="eye")


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``arange(5)`` is 0..4; integers give int64, any float argument gives the default float."""
    if end is None:
        start, end = 0, start
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"arange: {name} must be a number, got {type(v).__name__} {v!r}")
        if not np.isfinite(v):
            raise RuntimeError(f"arange: {name} must be finite, got {v}")
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange: upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    array = np.arange(start, end, step)
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if floats else int64
    return from_host(array, dtype, device, requires_grad, op="arange")


def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    steps = as_size(steps, "linspace", "steps")
    array = np.linspace(start, end, steps)
    return from_host(array, dtype or get_default_dtype(), device, requires_grad, op="linspace")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, without a copy when it already is one of that dtype and
    device (a numpy array of a supported dtype shares its memory, as ``from_numpy``)."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if dtype or device else data
    if isinstance(data, np.ndarray) and dtype is None and device is None:
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype, device=device)


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    """Uniform on [0, 1)."""
    dtype = _floating(dtype, "rand")
    return Rand.apply(_shape(size, keywords, "rand"), generator, dtype, device, requires_grad)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    """Standard normal."""
    dtype = _floating(dtype, "randn")
    return Randn.apply(_shape(size, keywords, "randn"), generator, dtype, device, requires_grad)


def _shape(args: tuple, keywords: dict, op: str) -> tuple[int, ...]:
    """The shape a factory was given: ``zeros(2, 3)``, ``zeros((2, 3))`` or, as PyTorch also
    takes it, ``zeros(size=(2, 3))``."""
    unknown = sorted(set(keywords) - {"size"})
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {unknown[0]!r}")
    if "size" in keywords:
        if args:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        args = (keywords["size"],)
    return as_sizes(args, op)


def _floating(dtype: Any, op: str) -> Any:
    """The dtype of a random float op: floating only (uniform ints would all be 0)."""
    d = get_default_dtype() if dtype is None else as_dtype(dtype, op)
    if not d.is_floating_point:
        raise TypeError(f"{op}: expected a floating point dtype, but got dtype={d}")
    return d


def randint(
    *args: Any,
    low: int | None = None,
    high: int | None = None,
    size: Any = None,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high,
    size)`` (``low`` defaults to 0; each may be given by keyword)."""
    low, high, size = _randint_args(args, low, high, size)
    as_number(low, "randint", "low", integer=True)
    as_number(high, "randint", "high", integer=True)
    if not low < high:
        raise RuntimeError(f"randint: expects low < high, but got low={low}, high={high}")
    dtype = int64 if dtype is None else as_dtype(dtype, "randint")
    out = Randint.apply(low, high, as_sizes((size,), "randint"), generator, dtype, device)
    return out.requires_grad_() if requires_grad else out


def _randint_args(args: tuple, low: Any, high: Any, size: Any) -> tuple:
    """(low, high, size) from randint's two overloads, positional or by keyword."""
    if len(args) > 3:
        raise TypeError(f"randint: takes at most 3 positional arguments, but got {len(args)}")
    three = len(args) == 3 or (len(args) == 2 and size is not None)
    given = {"low": low, "high": high, "size": size}
    names = ("low", "high", "size") if three else ("high", "size")
    for name, value in zip(names[: len(args)], args, strict=True):
        if given[name] is not None:
            raise TypeError(f"randint: got multiple values for argument {name!r}")
        given[name] = value
    if given["high"] is None or given["size"] is None:
        raise TypeError(
            "randint: expected (high, size) or (low, high, size), e.g. randint(10, (3,)) "
            f"or randint(0, 10, (3,)); got {len(args)} positional arguments {args!r:.60}"
        )
    if not isinstance(given["size"], (tuple, list)) and not hasattr(given["size"], "__len__"):
        raise TypeError(
            f"randint: argument 'size' must be a tuple of ints, not "
            f"{type(given['size']).__name__} (write ({given['size']!r},) for one dim)"
        )
    return (0 if given["low"] is None else given["low"]), given["high"], given["size"]


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Draws from N(mean, std): ``mean`` and/or ``std`` a tensor (they broadcast; the
    draw's gradient with respect to them is zero, as PyTorch's), or both numbers and a
    ``size``. ``std`` must not be negative."""
    from .ops import write_out

    tensors = [a for a in (mean, std) if isinstance(a, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError(
                "normal: with a float mean and std, give a size too, e.g. normal(0.0, 1.0, "
                "(2, 3)); or pass mean or std as a tensor"
            )
        as_number(mean, "normal", "mean")
        _check_std(std)
        t = randn(size, generator=generator, dtype=dtype, device=device)
        from .autograd import no_grad

        with no_grad():
            t = t * std + mean
        t = write_out(t, out, "normal")
        return t.requires_grad_() if requires_grad else t
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError(
            "normal: size, dtype, device and requires_grad go with a float mean and std only; "
            "a tensor mean or std gives the shape, dtype and device"
        )
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor):
            if not value.dtype.is_floating_point:
                raise NotImplementedError(
                    f"normal: {name} must be a floating point tensor, but got {value.dtype} "
                    f"(shape {tuple(value.shape)})"
                )
        else:
            as_number(value, "normal", name)
    _check_std(std)
    return write_out(Normal.apply(mean, std, generator), out, "normal")


def _check_std(std: Any) -> None:
    low = float(std.detach().min().item()) if isinstance(std, Tensor) and std.numel() else std
    if isinstance(std, Tensor) and not std.numel():
        return
    if low < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {low}")


def randperm(
    n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    n = as_size(n, "randperm", "n")
    dtype = int64 if dtype is None else as_dtype(dtype, "randperm")
    if dtype.name == "bool":
        raise TypeError(f"randperm: dtype must be numeric, but got dtype={dtype}")
    return Randperm.apply(n, generator, dtype, device)


def _like(fn: Any, t: Tensor, dtype: Any, device: Any, **kwargs: Any) -> Tensor:
    check_tensor(t, f"{fn.__name__}_like")
    return fn(t.shape, dtype=dtype or t.dtype, device=device or t.device, **kwargs)


def zeros_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad=requires_grad)


def ones_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad=requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    return _like(zeros, t, dtype, device)


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    check_tensor(t, "full_like")
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device)


def rand_like(
    t: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    return _like(rand, t, dtype, device, generator=generator)


def randn_like(
    t: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    return _like(randn, t, dtype, device, generator=generator)


def get_default_device() -> Any:
    """The device factory functions make tensors on when no ``device=`` is given: the CPU."""
    return as_device(None)


def set_default_device(device: Any) -> None:
    """PyTorch's default device for factory functions. minitorch's is the CPU, always:
    ``set_default_device("cpu")`` (or None) is accepted; another device is refused (give
    ``device=`` to the factory, or move tensors with ``.to(device)``)."""
    target = as_device(device, "set_default_device")
    if target.type != "cpu":
        raise NotImplementedError(
            f"set_default_device: minitorch makes tensors on the CPU unless a factory is given "
            f"device=; pass device={str(target)!r} to it (or use .to({str(target)!r})) instead"
        )
