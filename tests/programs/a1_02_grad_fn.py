"""Eager execution: each line runs at once, and print(y.grad_fn) shows the graph node.

Source: engineering notes, 1 (y = x @ w + b runs immediately; print(y.grad_fn)).
"""
# compare: exact

import torch

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
w = torch.tensor([[0.5], [-1.0]], requires_grad=True)
b = torch.tensor([0.25], requires_grad=True)
y = x @ w + b
print(y)
print(y.grad_fn)
print(y.grad_fn.next_functions)
z = (y * y).sum()
print(z, z.grad_fn)
z.backward()
print(w.grad)
print(b.grad)
print(x.grad_fn, x.requires_grad, w.is_leaf, y.is_leaf)
