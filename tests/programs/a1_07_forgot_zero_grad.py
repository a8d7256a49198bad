"""Forgetting optimizer.zero_grad(): gradients add up (grad = grad + new_grad), which
print(list(model.parameters())[0].grad.norm()) shows as a growing norm.

Source: engineering notes, 3.2.
"""
# compare: exact

import torch
import torch.nn as nn

model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -0.25, 1.0]]))
    model.bias.fill_(0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
target = torch.tensor([[1.0], [0.0]])
criterion = nn.MSELoss()

for step in range(3):
    # optimizer.zero_grad()  <- accidentally commented out
    loss = criterion(model(data), target)
    loss.backward()
    print(step, list(model.parameters())[0].grad.norm())

optimizer.zero_grad()
print("after zero_grad:", list(model.parameters())[0].grad)
loss = criterion(model(data), target)
loss.backward()
print("one step's norm:", list(model.parameters())[0].grad.norm())
optimizer.step()
print(model.weight.data, model.bias.data)
