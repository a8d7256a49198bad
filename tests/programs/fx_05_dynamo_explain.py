"""torch._dynamo.explain: how torch.compile captures a function with a data-dependent
branch (two graphs and one graph break, at the ``if``).

Source: PyTorch tutorial "Introduction to torch.compile" (the ``bar`` example and its
``explain`` call; the counts and reasons printed rather than the whole report, whose
guards are PyTorch's internals).
"""
# compare: masked

import torch
import torch._dynamo

torch.manual_seed(0)


def bar(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


explanation = torch._dynamo.explain(bar)(torch.randn(10), torch.randn(10))
print(explanation.graph_count)
print(explanation.graph_break_count)
print([reason.reason for reason in explanation.break_reasons])
print([frame.lineno for reason in explanation.break_reasons for frame in reason.user_stack])
print(len(explanation.graphs), len(explanation.ops_per_graph))
print(str(explanation).splitlines()[:2])

torch._dynamo.reset()
opt_bar = torch.compile(bar)
a, b = torch.randn(10), torch.randn(10)
print(torch.allclose(opt_bar(a, b), bar(a, b)))
