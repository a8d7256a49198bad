"""A loss chosen by plain Python `if` inside forward: eager mode runs it as written.

Source: engineering notes, 2.1 (the lung-nodule example: Dice loss x1.5 for nodules
under 3 mm, focal loss otherwise).
"""
# compare: exact

import torch
import torch.nn as nn
import torch.nn.functional as F


def dice_loss(pred, target, eps=1.0):
    prob = torch.sigmoid(pred)
    inter = (prob * target).sum()
    return 1 - (2 * inter + eps) / (prob.sum() + target.sum() + eps)


def focal_loss(pred, target, gamma=2.0):
    bce = F.binary_cross_entropy_with_logits(pred, target, reduction="none")
    p_t = torch.exp(-bce)
    return ((1 - p_t) ** gamma * bce).mean()


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = nn.Conv2d(1, 1, 3, padding=1)
        with torch.no_grad():
            self.unet.weight.copy_(torch.linspace(-0.2, 0.2, 9).view(1, 1, 3, 3))
            self.unet.bias.fill_(0.1)

    def forward(self, x, y, target_size):
        pred = self.unet(x)
        if target_size < 3:  # a plain Python if
            loss = 1.5 * dice_loss(pred, y)
        else:
            loss = focal_loss(pred, y)
        return loss


model = Segmenter()
x = torch.linspace(-1, 1, 64).view(1, 1, 8, 8)
y = (x > 0.25).float()
for size in (2.0, 5.0):
    loss = model(x, y, size)
    print(f"target_size={size}: loss={loss.item():.6f}")
    loss.backward()
    print("bias grad:", round(model.unet.bias.grad.item(), 6))
    model.zero_grad()
