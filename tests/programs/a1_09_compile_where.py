"""torch.where inside a compiled function, with the condition made a tensor of the
right shape (condition.unsqueeze(0)), as the notes' tip does.

Source: engineering notes, 3.3 (the torch.where tip).
"""
# compare: exact

import torch


def select(condition, a, b):
    return torch.where(condition.unsqueeze(0), a, b)


compiled = torch.compile(select)
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = -a
condition = torch.tensor([True, False, True])
print(select(condition, a, b))
print(compiled(condition, a, b))
print(torch.where(a > 2, a, torch.zeros_like(a)))
print(torch.where(a > 2, a, 0.0))
