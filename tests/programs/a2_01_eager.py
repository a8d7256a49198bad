"""Eager mode: every line runs as written, print works anywhere, and the graph is built
behind the scenes for backward.

Source: hybrid frontend, 2.1.
"""
# compare: masked

import torch

torch.manual_seed(0)
# a typical eager computation
x = torch.randn(3, 3, requires_grad=True)
y = x * 2
z = y.mean()
print(f"x: {x}")  # print at any point
print(f"y: {y}")  # the graph is built as we go
z.backward()
print(f"x.grad: {x.grad}")
print(torch.allclose(x.grad, torch.full((3, 3), 2 / 9)))
