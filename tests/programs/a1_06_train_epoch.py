"""The standard training loop: zero_grad, forward, backward, clip_grad_norm_, step.

Source: engineering notes, 3.2 (def train_epoch(...)).
"""
# compare: masked

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train_epoch(model, dataloader, optimizer, criterion, device):
    model.train()
    total_loss = 0
    for batch_idx, (data, target) in enumerate(dataloader):  # noqa: B007 - as written
        data, target = data.to(device), target.to(device)
        # 1. clear last step's gradients (essential!)
        optimizer.zero_grad()
        # 2. forward
        output = model(data)
        loss = criterion(output, target)
        # 3. backward
        loss.backward()
        # 4. gradient clipping (keeps RNN gradients from exploding)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        # 5. update
        optimizer.step()
        total_loss += loss.item()
    return total_loss / len(dataloader)


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
inputs = torch.randn(256, 20)
labels = (inputs[:, :5].sum(dim=1) > 0).long()  # a rule the model can learn
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
history = [train_epoch(model, loader, optimizer, criterion, device) for _ in range(8)]
print("batches per epoch:", len(loader))
print("epoch losses:", [round(h, 4) for h in history])
print("loss went down:", history[-1] < history[0] * 0.6)
norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print("total norm is a tensor:", isinstance(norm, torch.Tensor), norm.dim())
with torch.no_grad():
    accuracy = (model(inputs).argmax(dim=1) == labels).float().mean().item()
print("train accuracy over 0.8:", accuracy > 0.8)
