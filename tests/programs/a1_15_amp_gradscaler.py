"""The notes' mixed-precision loop, word for word (torch.cuda.amp.GradScaler and
torch.cuda.amp.autocast), run on a machine without CUDA: both switch themselves off
with a warning and the loop trains in float32.

Source: engineering notes, 4.4.
"""
# compare: exact

import warnings

import torch
import torch.nn as nn

warnings.simplefilter("ignore")  # the "CUDA is not available" warnings
model = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3, 0.05]]))
    model.bias.zero_()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
dataloader = [(torch.linspace(-1, 1, 8).view(2, 4), torch.tensor([[1.0], [-1.0]]))] * 3

scaler = torch.cuda.amp.GradScaler()
for data, target in dataloader:
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        output = model(data)
        loss = criterion(output, target)
    scaler.scale(loss).backward()  # scale the loss
    scaler.step(optimizer)  # unscale, then step
    scaler.update()  # adjust the scale
    print(round(loss.item(), 6), output.dtype)
print("scaler enabled:", scaler.is_enabled())
print(model.weight)
