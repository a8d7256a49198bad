"""torch.fx's Interpreter and Transformer: override ``call_function``/``call_method`` to swap
``torch.sigmoid`` and ``Tensor.neg``, once while running the graph (Interpreter) and once
into a new GraphModule (Transformer).

Source: torch.fx documentation, ``torch.fx.Interpreter`` and ``torch.fx.Transformer``
(the NegSigmSwap examples as given; printing added).
"""
# compare: masked

from typing import Any, Dict, Tuple

import torch
from torch.fx import Interpreter, Transformer
from torch.fx.node import Argument, Target

torch.manual_seed(0)


class NegSigmSwapInterpreter(Interpreter):
    def call_function(self, target: Target, args: Tuple, kwargs: Dict) -> Any:
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)

    def call_method(self, target: Target, args: Tuple, kwargs: Dict) -> Any:
        if target == "neg":
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)


def fn(x):
    return torch.sigmoid(x).neg()


gm = torch.fx.symbolic_trace(fn)
input = torch.randn(3, 4)
result = NegSigmSwapInterpreter(gm).run(input)
torch.testing.assert_close(result, torch.neg(input).sigmoid())
print(result)


class NegSigmSwapXformer(Transformer):
    def call_function(
        self, target: "Target", args: Tuple[Argument, ...], kwargs: Dict[str, Any]
    ) -> Any:
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)

    def call_method(
        self, target: "Target", args: Tuple[Argument, ...], kwargs: Dict[str, Any]
    ) -> Any:
        if target == "neg":
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)


transformed: torch.nn.Module = NegSigmSwapXformer(gm).transform()
print(transformed.code)
input = torch.randn(3, 4)
torch.testing.assert_close(transformed(input), torch.neg(input).sigmoid())
print(transformed(input))
print(
    [
        (n.op, n.name, str(n.target) if n.op != "call_function" else n.target.__name__)
        for n in transformed.graph.nodes
    ]
)
