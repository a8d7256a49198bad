"""Where a training step's memory goes: parameters, gradients, and saved activations.

Mixed precision saves memory mainly in the *activations*: the values forward keeps for
backward (a linear layer keeps its input, a ReLU its output, ...). Under autocast those are
float16/bfloat16, half the bytes. Parameters and their gradients stay float32 (the master
weights), and autocast even adds the low-precision copies of the weights it saves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..autograd.graph import SavedTensor
from ..checks import describe
from ..tensor import Tensor


@dataclass(frozen=True)
class MemoryReport:
    """Bytes held during one training step, after forward and before backward."""

    parameters: int
    gradients: int
    activations: int

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.activations


def saved_tensor_bytes(output: Tensor, exclude: Iterable[Tensor] = ()) -> int:
    """Bytes of everything the graph behind ``output`` saved for backward, each storage
    counted once; tensors in ``exclude`` (the parameters) are not counted."""
    if not isinstance(output, Tensor):
        raise TypeError(
            f"saved_tensor_bytes: output must be the Tensor of a forward pass, but got "
            f"{describe(output)}"
        )
    if isinstance(exclude, Tensor) or not hasattr(exclude, "__iter__"):
        raise TypeError(
            f"saved_tensor_bytes: exclude must be an iterable of tensors, but got "
            f"{describe(exclude)}"
        )
    exclude = list(exclude)
    for i, t in enumerate(exclude):
        if not isinstance(t, Tensor):
            raise TypeError(f"saved_tensor_bytes: exclude[{i}] is {describe(t)}, not a Tensor")
    skip = {id(t._storage) for t in exclude}
    seen: set[int] = set()
    total = 0
    nodes, visited = [output.grad_fn], set()
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        for saved in node._packed or ():
            array = _saved_array(saved, skip)
            if array is not None and id(array) not in seen:
                seen.add(id(array))
                total += array.nbytes
        nodes.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    return total


def _saved_array(saved: Any, skip: set[int]) -> Any:
    """The memory a saved value keeps alive: its whole storage, or an intermediate array."""
    if type(saved) is not SavedTensor:
        return None
    if saved.tensor is not None:
        storage = saved.tensor._storage
    elif saved.storage is not None:
        storage = saved.storage
    else:
        return saved.array
    return None if id(storage) in skip else storage.array


def memory_report(parameters: Iterable[Tensor], loss: Tensor) -> MemoryReport:
    """Bytes of the parameters, of their gradients (one per parameter that requires grad,
    in its dtype) and of what the graph of ``loss`` saved for backward."""
    if isinstance(parameters, Tensor) or not hasattr(parameters, "__iter__"):
        raise TypeError(
            f"memory_report: parameters must be an iterable of tensors (model.parameters()), "
            f"but got {describe(parameters)}"
        )
    if hasattr(parameters, "parameters") and callable(parameters.parameters):
        raise TypeError(
            "memory_report: pass the module's parameters (model.parameters()), not the module "
            f"{type(parameters).__name__} itself"
        )
    params = list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"memory_report: parameter {i} is {describe(p)}, not a Tensor")
    if not isinstance(loss, Tensor):
        raise TypeError(
            f"memory_report: loss must be the Tensor of a forward pass, got {describe(loss)}"
        )
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    grad_bytes = sum(p.numel() * p.element_size() for p in params if p.requires_grad)
    return MemoryReport(param_bytes, grad_bytes, saved_tensor_bytes(loss, exclude=params))
