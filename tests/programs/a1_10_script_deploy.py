"""Deployment: eval(), script (not trace), optimise the graph, save, and load the file
back, which runs without the Python class.

Source: engineering notes, 3.4 (the five-step TorchScript chain, with a small CNN for
ResNet-50). PyTorch 2.13 cannot load a saved optimize_for_inference module on the CPU
(its MKL-DNN constants do not serialise), so the frozen module is what is saved here,
and the optimize_for_inference one is run in place.
"""
# compare: exact

import torch
import torch.nn as nn


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(x.flatten(1))


model = SmallNet()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.1, 0.1, p.numel()).view_as(p))

# 1. prepare the model
model.eval()
example_input = torch.linspace(-1, 1, 3 * 8 * 8).view(1, 3, 8, 8)
# 2. script it
scripted_model = torch.jit.script(model)
# 3. optimise the graph (optional)
optimized = torch.jit.optimize_for_inference(torch.jit.script(model))
frozen = torch.jit.freeze(scripted_model)
# 4. save
frozen.save("resnet50.pt")
# 5. load (a C++ program would call torch::jit::load)
loaded = torch.jit.load("resnet50.pt")
expected = model(example_input)
print(expected)
print(torch.allclose(loaded(example_input), expected, atol=1e-5))
print(torch.allclose(optimized(example_input), expected, atol=1e-5))
print(torch.allclose(scripted_model(example_input), expected, atol=1e-5))
