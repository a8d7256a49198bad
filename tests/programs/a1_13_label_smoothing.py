"""cross_entropy with label_smoothing and ignore_index targets (-100), and the notes'
work-around of remapping the ignored labels first (target[target == -100] = 0).

Source: engineering notes, 4.2 (the label_smoothing story).
"""
# compare: exact

import torch
import torch.nn.functional as F

logits = torch.tensor(
    [[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [-1.0, 3.0, 0.5], [1.0, 1.0, 1.0]], requires_grad=True
)
target = torch.tensor([0, -100, 1, 2])
loss = F.cross_entropy(logits, target, label_smoothing=0.1)
print(loss, torch.isnan(loss).item())
loss.backward()
print(logits.grad)
print(F.cross_entropy(logits, target, label_smoothing=0.1, reduction="none"))
print(F.cross_entropy(logits, target, reduction="sum"))

target[target == -100] = 0  # the work-around
print(target)
print(F.cross_entropy(logits, target, label_smoothing=0.1))
