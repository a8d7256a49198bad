"""The AMP recipe's full shape on the CPU: timing utilities guarded for CUDA, make_model
with .to(device), the default-precision loop with set_to_none, autocast with the
device's default dtype, GradScaler() enabled flag, and resuming with a map_location
function.

Source: PyTorch recipe "Automatic Mixed Precision".
"""
# compare: masked

import gc
import time

import torch

start_time = None


def start_timer():
    global start_time
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_max_memory_allocated()
        torch.cuda.synchronize()
    start_time = time.time()


def end_timer_and_print(local_msg):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    end_time = time.time()
    print("\n" + local_msg)
    print("Total execution time = {:.3f} sec".format(0.0 * (end_time - start_time)))  # noqa: UP032
    print("Max memory used by tensors = {} bytes".format(torch.cuda.max_memory_allocated()))  # noqa: UP032, E501 - the recipe's spelling


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers)).to("cpu")


torch.manual_seed(0)
batch_size = 32
in_size = 64
out_size = 64
num_layers = 3
num_batches = 4
epochs = 2
device = "cpu"

data = [torch.randn(batch_size, in_size, device=device) for _ in range(num_batches)]
targets = [torch.randn(batch_size, out_size, device=device) for _ in range(num_batches)]
loss_fn = torch.nn.MSELoss().cuda() if torch.cuda.is_available() else torch.nn.MSELoss()

net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
start_timer()
for epoch in range(epochs):
    for input, target in zip(data, targets):
        output = net(input)
        loss = loss_fn(output, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
end_timer_and_print("Default precision:")
print(net[0].weight.grad)

for epoch in range(0):  # 0 epochs, this section is for illustration only
    pass

with torch.autocast(device_type=device):
    out = net(data[0])
    print(out.dtype, torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
print(torch.is_autocast_enabled(device))

use_amp = True
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
start_timer()
for epoch in range(epochs):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
end_timer_and_print("Mixed precision:")
print(
    scaler.get_scale(), scaler.is_enabled(), scaler.get_growth_factor(), scaler.get_backoff_factor()
)
print(scaler.get_growth_interval())

checkpoint = {
    "model": net.state_dict(),
    "optimizer": opt.state_dict(),
    "scaler": scaler.state_dict(),
}
torch.save(checkpoint, "filename")
checkpoint = torch.load("filename", map_location=lambda storage, loc: storage, weights_only=True)
net.load_state_dict(checkpoint["model"])
opt.load_state_dict(checkpoint["optimizer"])
scaler.load_state_dict(checkpoint["scaler"])
print(checkpoint["scaler"])
print(checkpoint["optimizer"]["param_groups"][0]["lr"], checkpoint["model"]["0.weight"].dtype)
print(checkpoint["model"]["0.weight"].device)
