"""The 1.0 API: torch.sigmoid/torch.tanh rather than F.sigmoid/F.tanh, torch.tensor as
the way to make a tensor (dtype and device given), factory functions that take device=,
*_like functions that keep dtype and device, and device-agnostic code.

Source: hybrid frontend, 5.1 and 5.2.
"""
# compare: exact

import warnings

import torch
import torch.nn.functional as F

x = torch.tensor([-2.0, 0.0, 2.0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(torch.equal(F.sigmoid(x), torch.sigmoid(x)), torch.equal(F.tanh(x), torch.tanh(x)))
print(torch.sigmoid(x), torch.tanh(x))

device = "cuda:0" if torch.cuda.is_available() else "cpu"
x = torch.tensor([1, 2, 3], dtype=torch.float32, device=device)  # made on the device
y = torch.randn(2, 3, device=device)  # factories take device= too
z = torch.ones_like(x)  # z keeps x's dtype and device
print(x, y.shape, y.device, z, z.dtype, z.device)
print(torch.zeros_like(x, dtype=torch.int64), torch.full_like(x, 7))
print(torch.tensor([1, 2, 3]).dtype, torch.tensor([1.0, 2]).dtype, torch.tensor(True).dtype)
print(torch.tensor([[1, 2], [3, 4]], dtype=torch.float64, device=torch.device("cpu")))
model_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(model_device, torch.nn.Linear(2, 2).to(model_device).weight.device)
