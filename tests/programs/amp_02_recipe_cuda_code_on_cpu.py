"""The recipe's CUDA code (float16 autocast, torch.amp.GradScaler("cuda")) on a machine
without CUDA: the device falls back to the CPU, and the CUDA scaler warns and disables
itself, so scale() returns the loss unchanged.

Source: PyTorch recipe "Automatic Mixed Precision" ("All together"), as written.
"""
# compare: exact

import warnings

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p))
net = net.to(device)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
loss_fn = torch.nn.MSELoss()
input = torch.linspace(-1, 1, 8, device=device).view(2, 4)
target = torch.ones(2, 2, device=device)

use_amp = True
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
print("warned:", any("CUDA" in str(w.message) for w in caught))
print("enabled:", scaler.is_enabled())

with torch.autocast(device_type=device, dtype=torch.float16, enabled=use_amp):
    output = net(input)
    loss = loss_fn(output, target)
print(output.dtype, loss.dtype)
scaled = scaler.scale(loss)
print("scale() is a no-op:", scaled is loss or torch.equal(scaled, loss))
scaled.backward()
scaler.step(opt)
scaler.update()
opt.zero_grad()
print(round(loss.item(), 3))
