"""The original Blitz "Autograd: automatic differentiation": y = x + 2 and its grad_fn,
z = y * y * 3, out = z.mean(), requires_grad_, a vector-Jacobian product through a
while loop on y.data.norm(), no_grad and detach.

Source: Deep Learning with PyTorch: A 60 Minute Blitz, "Autograd" (older version).
"""
# compare: masked

import torch

x = torch.ones(2, 2, requires_grad=True)
print(x)
y = x + 2
print(y)
print(y.grad_fn)
z = y * y * 3
out = z.mean()
print(z, out)

a = torch.randn(2, 2)
a = (a * 3) / (a - 1)
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

out.backward()
print(x.grad)

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y.shape, y.grad_fn)

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad.shape)

print(x.requires_grad)
print((x**2).requires_grad)

with torch.no_grad():
    print((x**2).requires_grad)

print(x.requires_grad)
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
print(x.is_leaf, y.is_leaf, (x * 2).is_leaf)
