"""The hybrid workflow: script the submodule with control flow, trace the model around
it. The scripted part keeps its if inside the trace.

Source: hybrid frontend, 2.2 (the mixed mode: script the control-flow submodules, trace
the main body).
"""
# compare: exact

import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        else:
            return x * 0 + 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.jit.script(Gate())  # the control flow: scripted

    def forward(self, x):
        return self.gate(x) * 2 - 1


model = Model()
traced = torch.jit.trace(model, torch.arange(1.0, 5.0))  # the main body: traced
print(traced(torch.arange(1.0, 5.0)))
print(traced(-torch.arange(1.0, 5.0)))
print(model(-torch.arange(1.0, 5.0)))
