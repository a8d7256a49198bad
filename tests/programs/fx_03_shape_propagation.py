"""torch.fx, the Interpreter pattern: a shape-propagation pass that runs a GraphModule node
by node on example inputs and records each result's shape and dtype on its node; then the
same with ``torch.fx.passes.shape_prop.ShapeProp`` and an ``fx.Interpreter`` subclass.

Source: torch.fx documentation, "The Interpreter Pattern" (the ShapeProp class as given;
a small CNN instead of a torchvision model).
"""
# compare: exact

from typing import Dict

import torch
import torch.fx
from torch.fx.node import Node


class ShapeProp:
    """
    Shape propagation. This class takes a `GraphModule`.
    Then, its `propagate` method executes the `GraphModule`
    node-by-node with the given arguments. As each operation
    executes, the ShapeProp class stores away the shape and
    element type for the output values of each operation on
    the `shape` and `dtype` attributes of the operation's
    `Node`.
    """

    def __init__(self, mod):
        self.mod = mod
        self.graph = mod.graph
        self.modules = dict(self.mod.named_modules())

    def propagate(self, *args):
        args_iter = iter(args)
        env: Dict[str, Node] = {}

        def load_arg(a):
            return torch.fx.graph.map_arg(a, lambda n: env[n.name])

        def fetch_attr(target: str):
            target_atoms = target.split(".")
            attr_itr = self.mod
            for i, atom in enumerate(target_atoms):
                if not hasattr(attr_itr, atom):
                    raise RuntimeError(
                        f"Node referenced nonexistant target {'.'.join(target_atoms[:i])}"
                    )
                attr_itr = getattr(attr_itr, atom)
            return attr_itr

        for node in self.graph.nodes:
            if node.op == "placeholder":
                result = next(args_iter)
            elif node.op == "get_attr":
                result = fetch_attr(node.target)
            elif node.op == "call_function":
                result = node.target(*load_arg(node.args), **load_arg(node.kwargs))
            elif node.op == "call_method":
                self_obj, *args = load_arg(node.args)
                kwargs = load_arg(node.kwargs)
                result = getattr(self_obj, node.target)(*args, **kwargs)
            elif node.op == "call_module":
                result = self.modules[node.target](*load_arg(node.args), **load_arg(node.kwargs))
            elif node.op == "output":
                return load_arg(node.args[0])

            # This is the only code specific to shape propagation.
            # you can delete this `if` branch and this becomes
            # a generic GraphModule interpreter.
            if isinstance(result, torch.Tensor):
                node.shape = result.shape
                node.dtype = result.dtype

            env[node.name] = result

        return None


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        x = torch.flatten(x, 1)
        return self.fc(x).softmax(dim=-1)


torch.manual_seed(0)
model = SmallCNN().eval()
gm = torch.fx.symbolic_trace(model)
sample = torch.zeros(2, 1, 8, 8)
ShapeProp(gm).propagate(sample)
for node in gm.graph.nodes:
    if hasattr(node, "shape"):
        print(f"{node.op:14} {node.name:10} {list(node.shape)} {node.dtype}")

from torch.fx.passes.shape_prop import ShapeProp as LibraryShapeProp  # noqa: E402

LibraryShapeProp(gm).propagate(sample)
for node in gm.graph.nodes:
    meta = node.meta.get("tensor_meta")
    if meta is not None:
        print(node.name, tuple(meta.shape), meta.dtype, meta.requires_grad)


class CountingInterpreter(torch.fx.Interpreter):
    """Counts the calls of each kind while the graph runs."""

    def __init__(self, module):
        super().__init__(module)
        self.counts = {}

    def run_node(self, n):
        self.counts[n.op] = self.counts.get(n.op, 0) + 1
        return super().run_node(n)


interp = CountingInterpreter(gm)
out = interp.run(sample)
print(tuple(out.shape), sorted(interp.counts.items()))
