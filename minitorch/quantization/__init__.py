"""``minitorch.quantization``: dynamic quantization, as ``torch.ao.quantization`` does it.

``quantize_dynamic(model, {nn.Linear}, dtype=minitorch.qint8)`` stores each Linear's
weight as 8-bit integers with a scale (one per tensor, or one per output channel with
``per_channel_dynamic_qconfig``) and quantizes each input batch on the fly from its own
range: about 4x smaller weights, outputs within PyTorch's tolerance of the float model's,
and the same integers and scales PyTorch's ``quantize_dynamic`` chooses.

- ``qtypes``: ``qint8``, ``quint8`` and the schemes (``per_tensor_affine``, ...);
- ``observer``: min/max observers choosing scale and zero point, ``with_args`` factories;
- ``qconfig``: ``QConfig`` and the default dynamic configurations;
- ``qtensor``: ``quantize_per_tensor`` / ``quantize_per_channel`` and ``QuantizedTensor``;
- ``linear_dynamic``: the int8 matmul op (``linear_dynamic``), fbgemm's arithmetic;
- ``dynamic``: ``DynamicQuantizedLinear``, the module that holds the int8 weight;
- ``quantize``: ``quantize_dynamic``, which swaps the modules.
"""

from .dynamic import Linear as DynamicQuantizedLinear
from .dynamic import LinearPackedParams, quantize_weight
from .linear_dynamic import LinearDynamic, choose_qparams
from .observer import (
    MinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
    float16_weight_observer,
)
from .qconfig import (
    QConfig,
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    per_channel_dynamic_qconfig,
)
from .qtensor import QuantizedTensor, quantize_per_channel, quantize_per_tensor
from .qtypes import (
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    qscheme,
    quint8,
)
from .quantize import get_default_dynamic_quant_module_mappings, quantize_dynamic

__all__ = [
    "DynamicQuantizedLinear",
    "LinearDynamic",
    "LinearPackedParams",
    "MinMaxObserver",
    "ObserverBase",
    "PerChannelMinMaxObserver",
    "PlaceholderObserver",
    "QConfig",
    "QuantizedTensor",
    "choose_qparams",
    "default_dynamic_qconfig",
    "default_dynamic_quant_observer",
    "default_observer",
    "default_per_channel_weight_observer",
    "default_placeholder_observer",
    "default_weight_observer",
    "float16_dynamic_qconfig",
    "float16_weight_observer",
    "get_default_dynamic_quant_module_mappings",
    "per_channel_affine",
    "per_channel_dynamic_qconfig",
    "per_channel_symmetric",
    "per_tensor_affine",
    "per_tensor_symmetric",
    "qint8",
    "qscheme",
    "quantize_dynamic",
    "quantize_per_channel",
    "quantize_per_tensor",
    "quantize_weight",
    "quint8",
]
