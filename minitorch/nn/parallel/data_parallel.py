"""``nn.DataParallel``: PyTorch's one-line multi-GPU wrapper, on one device.

PyTorch's ``DataParallel`` splits each batch over ``device_ids``, runs a replica of the
module on each GPU and gathers the outputs on the first. On a machine without a GPU it
just calls the module (``device_ids`` is ``[]``), and with one GPU it moves the inputs
to it and calls the module there. minitorch does exactly those two; splitting over
several GPUs is what chapter 06's ``DistributedDataParallel`` is for (one process per
device, which PyTorch recommends over ``DataParallel`` too).
"""

from __future__ import annotations

from typing import Any

from ... import cuda
from ...device import as_device
from ...tensor import Tensor
from ..module import Module


class DataParallel(Module):
    """Wraps ``module`` (kept as ``self.module``, so state dict keys gain ``module.``)."""

    def __init__(
        self,
        module: Module,
        device_ids: list | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected an nn.Module, got {type(module).__name__}")
        self.module = module
        self.dim = dim
        if not cuda.is_available():  # PyTorch: no accelerator, no devices, a plain call
            self.device_ids: list = []
            self.output_device = None
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        ids = [as_device(d if not isinstance(d, int) else f"cuda:{d}").index for d in device_ids]
        if len(ids) > 1:
            raise NotImplementedError(
                f"DataParallel: running replicas on {len(ids)} GPUs ({device_ids}) is not "
                "supported; use minitorch.nn.parallel.DistributedDataParallel (one process "
                "per GPU, chapter 06), or DataParallel(module, device_ids=[0])"
            )
        self.device_ids = ids
        self.output_device = ids[0] if output_device is None else output_device

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        device = f"cuda:{self.device_ids[0]}"
        inputs = tuple(_to(x, device) for x in inputs)
        kwargs = {k: _to(v, device) for k, v in kwargs.items()}
        return self.module(*inputs, **kwargs)


def _to(x: Any, device: str) -> Any:
    """Move the tensors of an input (inside tuples, lists and dicts too) to ``device``."""
    if isinstance(x, Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, device) for k, v in x.items()}
    return x
