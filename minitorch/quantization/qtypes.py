"""Quantized element types (``qint8``, ``quint8``) and quantization schemes (``qscheme``).

A quantized value is an 8-bit integer ``q`` standing for the real number
``(q - zero_point) * scale``. ``qint8`` stores ``q`` in ``[-128, 127]`` (weights),
``quint8`` in ``[0, 255]`` (activations). The scheme says whether one ``scale`` and
``zero_point`` serve the whole tensor or each channel has its own, and whether the zero
point is pinned to the middle of the range (symmetric) or chosen to fit the data (affine).
"""

from __future__ import annotations

import numpy as np

import minitorch
from minitorch import dtypes


def _prefix() -> str:
    """The package name reprs print (``minitorch``, or ``torch`` where PyTorch code runs on
    minitorch), as ``minitorch.dtypes`` prints its own."""
    return getattr(dtypes, "display_name", "minitorch")


class QuantizedDtype:
    """``qint8`` / ``quint8`` when ``minitorch.dtypes`` has none: the name and the integer
    storage type, a singleton (copies are the same object)."""

    is_floating_point = False
    itemsize = 1

    def __init__(self, name: str, storage: np.dtype) -> None:
        self.name = name
        self.np = np.dtype(storage)

    def __repr__(self) -> str:
        return f"{_prefix()}.{self.name}"

    def __copy__(self) -> QuantizedDtype:
        return self

    def __deepcopy__(self, memo: dict) -> QuantizedDtype:
        return self


def _shared(name: str, storage: type) -> object:
    """minitorch's own ``qint8``/``quint8`` where it has them, else a stand-in."""
    found = getattr(minitorch, name, None) or getattr(dtypes, name, None)
    return found or QuantizedDtype(name, storage)


qint8 = _shared("qint8", np.int8)
quint8 = _shared("quint8", np.uint8)

#: The integer range of each quantized type, by name: ``(quant_min, quant_max)``.
RANGES = {"qint8": (-128, 127), "quint8": (0, 255)}


def range_of(dtype: object) -> tuple[int, int]:
    """``(quant_min, quant_max)`` of a quantized dtype (``qint8`` or ``quint8``)."""
    return RANGES[dtype_name(dtype)]


def dtype_name(dtype: object) -> str:
    """The name of a dtype (``"qint8"``), whichever object spells it."""
    return getattr(dtype, "name", None) or str(dtype)


def is_qdtype(dtype: object, name: str | None = None) -> bool:
    """Whether ``dtype`` is a quantized dtype (the one called ``name``, if given)."""
    found = getattr(dtype, "name", None)
    return found in RANGES if name is None else found == name


class qscheme:  # noqa: N801 - PyTorch's spelling
    """How a tensor is quantized: ``minitorch.quantization.per_tensor_affine`` and friends."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def per_channel(self) -> bool:
        return self.name.startswith("per_channel")

    @property
    def symmetric(self) -> bool:
        return self.name.endswith("symmetric")

    def __repr__(self) -> str:
        return f"{_prefix()}.{self.name}"

    def __copy__(self) -> qscheme:
        return self

    def __deepcopy__(self, memo: dict) -> qscheme:
        return self


per_tensor_affine = qscheme("per_tensor_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_affine = qscheme("per_channel_affine")
per_channel_symmetric = qscheme("per_channel_symmetric")
