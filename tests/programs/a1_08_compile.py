"""torch.compile: the basic call and the configured one (backend, mode, fullgraph,
dynamic); the compiled model computes what the eager one does.

Source: engineering notes, 3.3.
"""
# compare: exact

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).view_as(p))
x = torch.linspace(-1, 1, 24).view(3, 8)

# the basic call
compiled_model = torch.compile(model)
print(torch.allclose(compiled_model(x), model(x), atol=1e-6))

# configured: backend and optimisation level
compiled_model = torch.compile(
    model,
    backend="inductor",  # the default
    mode="default",  # default / max-autotune / max-autotune-no-cudagraphs
    fullgraph=True,  # the whole forward as one graph
    dynamic=True,  # shapes may change (batch size)
)
for batch in (3, 5):
    inputs = torch.linspace(-1, 1, batch * 8).view(batch, 8)
    out = compiled_model(inputs)
    print(batch, out.shape, torch.allclose(out, model(inputs), atol=1e-6))
print(model(x))
