"""Bare tensor maths versus an nn.Module: the module registers its parameters, so the
optimizer finds them and train()/eval() switch dropout and batch norm.

Source: engineering notes, 3.1 (the wrong way, then MNISTClassifier).
"""
# compare: masked

import torch
import torch.nn as nn

torch.manual_seed(0)

# the wrong way: bare tensors, every parameter managed by hand
x = torch.randn(32, 784)
w1 = torch.randn(784, 128, requires_grad=True)
b1 = torch.randn(128, requires_grad=True)
h1 = torch.relu(x @ w1 + b1)
print("bare h1:", h1.shape, h1.grad_fn)


# the right way: nn.Module
class MNISTClassifier(nn.Module):
    def __init__(self, hidden_dim=128):
        super().__init__()
        self.fc1 = nn.Linear(784, hidden_dim)  # parameters registered automatically
        self.fc2 = nn.Linear(hidden_dim, 10)
        self.dropout = nn.Dropout(0.2)
        self.bn = nn.BatchNorm1d(hidden_dim)

    def forward(self, x):
        x = x.view(x.size(0), -1)  # flatten
        x = self.bn(torch.relu(self.fc1(x)))
        x = self.dropout(x)
        x = self.fc2(x)
        return x


model = MNISTClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)  # finds every parameter
print(model)
for name, p in model.named_parameters():
    print(name, tuple(p.shape), p.grad is None)
print("buffers:", [name for name, _ in model.named_buffers()])

images = torch.randn(16, 1, 28, 28)
labels = torch.randint(0, 10, (16,))
losses = []
for _ in range(5):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("fc1.weight.grad is None:", model.fc1.weight.grad is None)
print("loss went down:", losses[-1] < losses[0])
model.eval()
with torch.no_grad():
    a, b = model(images), model(images)
print("eval is deterministic:", torch.equal(a, b), a.shape)
print("running_mean moved:", bool(model.bn.running_mean.abs().sum() > 0))
print("num_batches_tracked:", model.bn.num_batches_tracked)
