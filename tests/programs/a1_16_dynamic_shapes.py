"""A compiled model with dynamic=True called on sequences of different lengths
(input_ids of length 8, 16 and 32), matching eager mode each time.

Source: engineering notes, 5.3 (dynamic shapes for variable-length NLP inputs).
"""
# compare: exact

import torch
import torch.nn as nn


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        return self.norm(h + torch.tanh(self.proj(h))).mean(dim=1)


model = TinyEncoder()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p))
compiled_model = torch.compile(model, dynamic=True)
for length in (8, 16, 32):
    input_ids = (torch.arange(length) * 7 % 50).view(1, length)
    out = compiled_model(input_ids)
    print(length, tuple(out.shape), torch.allclose(out, model(input_ids), atol=1e-5))
print(model(torch.arange(8).view(1, 8)))
