"""``QConfig``: which observers quantize a module's activations and its weight.

A QConfig holds observer *factories* (``MinMaxObserver.with_args(...)``), not observers:
every module it is applied to makes its own. Dynamic quantization uses two:

- ``default_dynamic_qconfig``: int8 weights, one scale for the whole weight (symmetric
  min/max), activations quantized to uint8 at run time from each batch's range;
- ``per_channel_dynamic_qconfig``: the same with one scale per output channel, which
  keeps rows of small weights from losing their precision to one large row.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..dtypes import float16
from .observer import (
    ObserverBase,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
    float16_weight_observer,
)


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """``QConfig(activation=..., weight=...)``: observer factories, as in PyTorch."""

    __slots__ = ()

    def __new__(cls, activation: Any, weight: Any) -> QConfig:
        if isinstance(activation, ObserverBase) or isinstance(weight, ObserverBase):
            raise ValueError(
                "QConfig received observer instance, please pass observer class instead. Use "
                "MyObserver.with_args(x=1) to override arguments to constructor if needed"
            )
        return super().__new__(cls, activation, weight)


default_dynamic_qconfig = QConfig(
    activation=default_dynamic_quant_observer, weight=default_weight_observer
)
per_channel_dynamic_qconfig = QConfig(
    activation=default_dynamic_quant_observer, weight=default_per_channel_weight_observer
)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=float16, is_dynamic=True),
    weight=float16_weight_observer,
)
