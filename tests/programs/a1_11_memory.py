"""Memory debugging without a GPU: empty_cache and the memory counters behave as they do
on a CPU-only machine; gradients left behind show as p.grad is not None; interpolate resizes.

Source: engineering notes, 4.1.
"""
# compare: exact

import torch
import torch.nn as nn
import torch.nn.functional as F

print("cuda available:", torch.cuda.is_available())
torch.cuda.empty_cache()  # frees cached, unused memory (nothing to do without CUDA)
print("allocated:", torch.cuda.memory_allocated())
print("peak:", torch.cuda.max_memory_allocated(), "reserved:", torch.cuda.memory_reserved())
if torch.cuda.is_available():  # (memory_summary needs a CUDA device)
    print(torch.cuda.memory_summary())

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
print("grads left:", any(p.grad is not None for p in model.parameters()))
model(torch.ones(2, 4)).sum().backward()
print("grads left:", any(p.grad is not None for p in model.parameters()))
model.zero_grad(set_to_none=True)
print("grads left:", any(p.grad is not None for p in model.parameters()))

# resize with F.interpolate instead of a transform that leaks temporaries
image = torch.arange(16, dtype=torch.float32).view(1, 1, 4, 4)
temp_tensor = F.interpolate(image, size=(2, 2), mode="bilinear", align_corners=False)
print(temp_tensor)
print(F.interpolate(image, scale_factor=0.5, mode="nearest"))
print(F.interpolate(image[:, :, :2, :2], size=(3, 3), mode="bilinear", align_corners=True))
del temp_tensor
