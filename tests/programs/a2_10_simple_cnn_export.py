"""Export for LibTorch: define SimpleCNN, switch to eval, trace it on a 1x3x32x32
example and save simple_cnn.pt.

Source: hybrid frontend, 4.2 step one (train_and_export.py; torchvision is not needed).
"""
# compare: exact

import torch


# 1. a simple model
class SimpleCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2, 2)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = torch.nn.Linear(32 * 8 * 8, 128)  # 32x32 input, pooled twice: 8x8
        self.fc2 = torch.nn.Linear(128, 10)
        self.relu = torch.nn.ReLU()
        self.flatten = torch.nn.Flatten()

    def forward(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.fc2(x)
        return x


model = SimpleCNN()
# ... training left out ...
# 2. evaluation mode, then trace
model.eval()
example_input = torch.randn(1, 3, 32, 32)
traced_script_module = torch.jit.trace(model, example_input)
# 3. save the TorchScript model
traced_script_module.save("simple_cnn.pt")
print("model exported to simple_cnn.pt")
print(torch.allclose(traced_script_module(example_input), model(example_input), atol=1e-5))
print(tuple(traced_script_module(torch.zeros(2, 3, 32, 32)).shape))
