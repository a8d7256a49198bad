"""Before debugging a C++ deployment, load the exported file in Python and run it on the
same input; the C++ program's steps (device, eval, no-grad inference, max over classes)
written in Python; half precision, thread count and batching for serving.

Source: hybrid frontend, 4.2 step two (inference.cpp) and 4.3.
"""
# compare: exact

import torch
import torch.nn as nn

model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 10)
)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.2, 0.2, p.numel()).view_as(p))
model.eval()
torch.jit.trace(model, torch.zeros(1, 3, 4, 4)).save("simple_cnn.pt")

# 1. the device
device = torch.device("cpu")
if torch.cuda.is_available():
    print("CUDA available! Using GPU.")
    device = torch.device("cuda")
# 2. load the TorchScript model
try:
    module = torch.jit.load("simple_cnn.pt")
except RuntimeError as e:
    print("loading the model failed:", e)
    raise
module.to(device)
module.eval()
# 3. the input
inputs = [torch.linspace(-1, 1, 48).view(1, 3, 4, 4).to(device)]
# 4. inference without gradients
with torch.no_grad():
    output = module(*inputs)
# 5. the output
max_result = output.max(1)
predicted_index = max_result[1].item()
confidence = output[0][predicted_index].item()
print("predicted class index:", predicted_index)
print("confidence:", round(confidence, 5))
print("output shape:", output.shape)
print("same as eager:", torch.allclose(output, model(*inputs), atol=1e-5))

# 4.3: threads, batching, half precision
torch.set_num_threads(2)
print("threads:", torch.get_num_threads())
batch = torch.cat([inputs[0], -inputs[0], inputs[0] * 0.5])
with torch.no_grad():
    print(module(batch).argmax(dim=1))
    half = model.half()
    print(half[0].weight.dtype)
    print(half(batch.half()).float().argmax(dim=1))
