"""Hunting NaN/inf: anomaly detection, isnan/isinf over the gradients, the layer it is
in, and gradcheck for a custom Function.

Source: engineering notes, 4.2 (the three-step method).
"""
# compare: exact

import torch
import torch.nn as nn


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight):
        ctx.save_for_backward(input, weight)
        return (input * weight) ** 2

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        common = 2 * input * weight * grad_output
        return common * weight, common * input


# 1. switch anomaly detection on (before training)
torch.autograd.set_detect_anomaly(True)

model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[1.0, -1.0], [0.5, 2.0]]))
    model[0].bias.zero_()
    model[1].weight.copy_(torch.tensor([[1.0, 1.0]]))
    model[1].bias.zero_()
    model[0].weight[1, 1] = float("inf")  # a broken weight

loss = model(torch.tensor([[1.0, 0.0]])).sum()
try:
    # 2. check after backward
    loss.backward()
except RuntimeError as err:
    print("anomaly detected:", type(err).__name__)
torch.autograd.set_detect_anomaly(False)

loss = model(torch.tensor([[1.0, -1.0]])).sum()
loss.backward()
if any(torch.isnan(p.grad).any() or torch.isinf(p.grad).any() for p in model.parameters()):
    print("gradient anomaly!")
# 3. find the layer
for name, param in model.named_parameters():
    if param.grad is not None and (torch.isnan(param.grad).any() or torch.isinf(param.grad).any()):
        print(f"anomalous layer: {name}")
print(
    torch.isnan(torch.tensor([1.0, float("nan")])),
    torch.isfinite(torch.tensor([1.0, float("inf")])),
)

# 4. gradcheck a custom Function
input = torch.tensor([0.5, -1.5, 2.0], dtype=torch.double, requires_grad=True)
weight = torch.tensor([1.5, 0.25, -1.0], dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Square.apply, (input, weight)))
