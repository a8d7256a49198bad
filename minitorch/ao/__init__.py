"""``minitorch.ao``: PyTorch's ``torch.ao`` path ("architecture optimization"), so that
``minitorch.ao.quantization`` is where ``torch.ao.quantization`` is."""

from . import quantization

__all__ = ["quantization"]
