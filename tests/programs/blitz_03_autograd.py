"""autograd: one training step of a pretrained-style model, gradients of Q = 3a^3 - b^2
checked against the hand-derived ones, what is left out of the graph, and fine-tuning
with the rest frozen.

Source: Deep Learning with PyTorch: A 60 Minute Blitz, "A Gentle Introduction to
torch.autograd" (a small ResNet-shaped model stands in for torchvision's resnet18).
"""
# compare: masked

import torch
from torch import nn, optim


class TinyResNet(nn.Module):
    """resnet18's outline in miniature: stem, pooling to 1x1, a 512-wide fc."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.proj = nn.Linear(8, 512)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(self.proj(x))


torch.manual_seed(0)
model = TinyResNet()
data = torch.rand(1, 3, 64, 64)
labels = torch.rand(1, 1000)

prediction = model(data)  # forward pass
loss = (prediction - labels).sum()
loss.backward()  # backward pass
optim_ = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
before = model.fc.weight.detach().clone()
optim_.step()  # gradient descent
print(prediction.shape, not torch.equal(before, model.fc.weight))

# Differentiation in autograd
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a**3 - b**2
external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)
# check if collected gradients are correct
print(9 * a**2 == a.grad)
print(-2 * b == b.grad)

# Exclusion from the DAG
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

# Freeze all the parameters in the network
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(512, 10)
# Optimize only the classifier
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
model(data).sum().backward()
print([name for name, p in model.named_parameters() if p.grad is not None])
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
