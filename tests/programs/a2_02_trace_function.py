"""Tracing a function on example inputs, saving it, and running the loaded copy with no
Python source.

Source: hybrid frontend, 2.2 (simple_fn).
"""
# compare: exact

import torch


def simple_fn(x, y):
    return torch.relu(x) + y * 2


# example inputs
example_input = (torch.randn(3, 4), torch.randn(3, 4))
# trace it
traced_fn = torch.jit.trace(simple_fn, example_input)
# save the traced model
traced_fn.save("traced_model.pt")
# load and run it, no Python code needed
loaded_fn = torch.jit.load("traced_model.pt")
result = loaded_fn(torch.ones(3, 4), torch.ones(3, 4))
print(result)
print(loaded_fn(-torch.ones(2, 2), torch.full((2, 2), 0.5)))
