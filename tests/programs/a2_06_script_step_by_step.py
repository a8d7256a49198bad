"""Scripting a model step by step: a submodule scripted first, then the whole model,
whose forward has an if/else of its own.

Source: hybrid frontend, 2.2 (torch.jit.script also works on classes, so a model can be
scripted bit by bit).
"""
# compare: exact

import torch
import torch.nn as nn


class Decide(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            return x
        else:
            return -x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.decide = torch.jit.script(Decide())  # step 1: the submodule
        self.scale = nn.Linear(3, 3, bias=False)
        with torch.no_grad():
            self.scale.weight.copy_(torch.eye(3) * 2)

    def forward(self, x):
        y = self.decide(x)
        if y.sum() > 3:
            y = self.scale(y)
        else:
            y = y + 1
        return y


scripted = torch.jit.script(Model())  # step 2: the whole model
for x in (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([-1.0, -0.5, 0.0]), torch.zeros(3)):
    print(scripted(x))
