"""Automatic mixed precision, the recipe's steps on the CPU (autocast to bfloat16): a
default-precision baseline, autocast for the forward pass, GradScaler, gradient clipping
after unscale_, and saving/resuming the scaler with the model and optimizer.

Source: PyTorch recipe "Automatic Mixed Precision" (small sizes; device "cpu"; the
recipe's CUDA timing utilities left out).
"""
# compare: masked

import torch


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers))


torch.manual_seed(0)
batch_size = 64
in_size = 128
out_size = 128
num_layers = 3
num_batches = 5
epochs = 2

device = "cpu"
torch.set_default_device(device)

# Creates data in default precision.
# The same data is used for both default and mixed precision trials below.
# You don't need to manually change inputs' ``dtype`` when enabling mixed precision.
data = [torch.randn(batch_size, in_size) for _ in range(num_batches)]
targets = [torch.randn(batch_size, out_size) for _ in range(num_batches)]

loss_fn = torch.nn.MSELoss()

# Default precision
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
for epoch in range(epochs):
    for input, target in zip(data, targets):
        output = net(input)
        loss = loss_fn(output, target)
        loss.backward()
        opt.step()
        opt.zero_grad()  # set_to_none=True here can modestly improve performance
print("Default precision:", output.dtype, loss.dtype)

# Adding autocast
for epoch in range(1):
    for input, target in zip(data, targets):
        # Runs the forward pass under ``autocast``.
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            output = net(input)
            # output is bfloat16 because linear layers ``autocast`` to bfloat16.
            assert output.dtype is torch.bfloat16

            loss = loss_fn(output, target)
            # loss is float32 because ``mse_loss`` layers ``autocast`` to float32.
            assert loss.dtype is torch.float32

        # Exits ``autocast`` before backward().
        # Backward passes under ``autocast`` are not recommended.
        # Backward ops run in the same ``dtype`` ``autocast`` chose for corresponding forward ops.
        loss.backward()
        opt.step()
        opt.zero_grad()
print("autocast:", output.dtype, loss.dtype, net[0].weight.grad, net[0].weight.dtype)

# All together: "Automatic Mixed Precision"
use_amp = True
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
losses = []
for epoch in range(epochs):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()  # set_to_none=True here can modestly improve performance
        losses.append(loss.item())
print("Mixed precision:", scaler.get_scale(), len(losses), losses[-1] > 0)

# Inspecting/modifying gradients (e.g., clipping)
for epoch in range(1):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()

        # Unscales the gradients of optimizer's assigned parameters in-place
        scaler.unscale_(opt)

        # Since the gradients of optimizer's assigned parameters are now unscaled, clips as usual.
        # You may use the same value for max_norm here as you would without gradient scaling.
        norm = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)

        scaler.step(opt)
        scaler.update()
        opt.zero_grad()  # set_to_none=True here can modestly improve performance
print("clipped:", norm.dtype, bool(torch.isfinite(norm)))

# Saving/Resuming
checkpoint = {
    "model": net.state_dict(),
    "optimizer": opt.state_dict(),
    "scaler": scaler.state_dict(),
}
torch.save(checkpoint, "filename")
checkpoint = torch.load("filename", weights_only=True)
net.load_state_dict(checkpoint["model"])
opt.load_state_dict(checkpoint["optimizer"])
scaler.load_state_dict(checkpoint["scaler"])
print(sorted(checkpoint["scaler"].keys()), scaler.get_scale())

# Inference/Evaluation
with torch.autocast(device_type=device, dtype=torch.bfloat16):
    print(net(data[0]).dtype)
