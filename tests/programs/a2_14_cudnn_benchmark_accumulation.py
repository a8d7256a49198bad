"""Two tuning tips: torch.backends.cudnn.benchmark = True for fixed input sizes (no
effect on a CPU), and gradient accumulation: accumulation_steps small batches, one
optimizer step, the same gradient as one big batch.

Source: hybrid frontend, 6.3.
"""
# compare: exact

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
print("cudnn benchmark:", torch.backends.cudnn.benchmark)

inputs = torch.linspace(-2, 2, 16 * 3).view(16, 3)
targets = inputs.sum(dim=1, keepdim=True)
train_loader = DataLoader(TensorDataset(inputs, targets), batch_size=4)


def make_model():
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.2, -0.1, 0.4]]))
        model.bias.fill_(0.3)
    return model


model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.MSELoss()
accumulation_steps = 4
optimizer.zero_grad()
for i, (data, target) in enumerate(train_loader):
    output = model(data)
    loss = criterion(output, target) / accumulation_steps
    loss.backward()  # gradients add up
    if (i + 1) % accumulation_steps == 0:
        accumulated = model.weight.grad.clone()
        optimizer.step()  # one update per accumulation_steps batches
        optimizer.zero_grad()

big = make_model()
criterion(big(inputs), targets).backward()
print(accumulated)
print(torch.allclose(accumulated, big.weight.grad, atol=1e-6))
print(model.weight.data)
