"""Migrating 0.4 code: Variable is only a deprecated alias that returns a Tensor, and
volatile=True becomes torch.no_grad() or torch.set_grad_enabled(False).

Source: hybrid frontend, 6.1.
"""
# compare: exact

import torch
from torch.autograd import Variable

old = Variable(torch.ones(2, 2), requires_grad=True)  # the old spelling
new = torch.ones(2, 2, requires_grad=True)  # what it is now
print(type(old).__name__, isinstance(old, torch.Tensor), old.requires_grad)
print(old)
print(torch.equal(old, new))
(old * 3).sum().backward()
print(old.grad)
print(Variable(torch.zeros(2)).requires_grad)

w = torch.ones(2, requires_grad=True)
with torch.no_grad():  # volatile=True's replacement
    print((w * 2).requires_grad)
torch.set_grad_enabled(False)
print((w * 2).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
print((w * 2).requires_grad, torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print((w * 2).grad_fn)
