"""The original 60-minute Blitz "What is PyTorch?": empty/zeros(dtype=long)/new_ones/
randn_like, size(), the add spellings (out=, in-place), view(-1, 8), item(), the numpy
bridge and the CUDA block's .to("cpu", torch.double).

Source: Deep Learning with PyTorch: A 60 Minute Blitz, "What is PyTorch?" (older version).
"""
# compare: masked

import numpy as np
import torch

x = torch.empty(5, 3)
print(x.shape, x.dtype)

x = torch.rand(5, 3)
print(x)

x = torch.zeros(5, 3, dtype=torch.long)
print(x)

x = torch.tensor([5.5, 3])
print(x)

x = x.new_ones(5, 3, dtype=torch.double)  # new_* methods take in sizes
print(x)

x = torch.randn_like(x, dtype=torch.float)  # override dtype!
print(x)  # result has the same size

print(x.size())
y = torch.rand(5, 3)
print(x + y)
print(torch.add(x, y))
result = torch.empty(5, 3)
torch.add(x, y, out=result)
print(result)
# adds x to y
y.add_(x)
print(y)
print(x[:, 1])

x = torch.randn(4, 4)
y = x.view(16)
z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
print(x.size(), y.size(), z.size())

x = torch.randn(1)
print(x)
print(x.item())

a = torch.ones(5)
print(a)
b = a.numpy()
print(b)
a.add_(1)
print(a)
print(b)

a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)

device = torch.device("cpu")  # the tutorial's "cuda" block, on the CPU
y = torch.ones_like(x, device=device)  # directly create a tensor on the device
x = x.to(device)  # or just use strings ``.to("cuda")``
z = x + y
print(z)
print(z.to("cpu", torch.double))  # ``.to`` can also change dtype together!
print(torch.is_tensor(z), torch.numel(torch.zeros(2, 3)), x.type(), z.double().type())
