"""The older AMP spellings on a machine without CUDA: torch.cuda.amp.autocast() as a
context manager and decorator, torch.autocast("cpu") positional, torch.cpu.amp.autocast,
autocast's enabled=False, and float16 inputs of matmul under bfloat16 autocast.

Source: the engineering notes' 4.4 loop and the AMP recipe (CPU).
"""
# compare: exact

import warnings

import torch

warnings.simplefilter("ignore")

a = torch.linspace(-1, 1, 6).view(2, 3)
b = torch.linspace(0, 1, 12).view(3, 4)

with torch.autocast("cpu"):
    c = a @ b
    d = torch.mm(a, b)
    e = a + a
print(c.dtype, d.dtype, e.dtype)

with torch.autocast("cpu", enabled=False):
    print((a @ b).dtype)

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    lin = torch.nn.Linear(3, 2)
    out = lin(a)
    print(out.dtype, lin.weight.dtype, out.float().dtype)
    print(torch.softmax(out, dim=1).dtype, torch.relu(out).dtype)
    with torch.autocast(device_type="cpu", enabled=False):
        print(lin(a).dtype)


@torch.autocast(device_type="cpu")
def forward(x, y):
    return x @ y


print(forward(a, b).dtype)
with torch.cuda.amp.autocast():
    print((a @ b).dtype)
with torch.cpu.amp.autocast():
    print((a @ b).dtype)
scaler = torch.cuda.amp.GradScaler()
print(scaler.is_enabled())
x = torch.ones(2, 2, dtype=torch.bfloat16)
print(x, x.float(), x.to(torch.float16), x.half().dtype, x.bfloat16().dtype)
print(torch.tensor([1.0, 2.5]).to(dtype=torch.float64))
