"""nn.DataParallel in one line. Without GPUs it wraps the model and calls it directly;
the wrapped model lives in .module and its state_dict keys gain a "module." prefix.

Source: hybrid frontend, 3.1 (model = nn.DataParallel(model, device_ids=[0, 1, 2, 3]);
.cuda() is left out: this machine has no GPU).
"""
# compare: exact

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]))
    model[0].bias.copy_(torch.tensor([0.0, -1.0]))
if torch.cuda.device_count() > 1:
    parallel = nn.DataParallel(model, device_ids=[0, 1, 2, 3]).cuda()
else:
    parallel = nn.DataParallel(model)
x = torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
print(parallel(x))
print(torch.equal(parallel(x), model(x)), parallel.module is model)
print(list(parallel.state_dict().keys()))
print(parallel)
out = parallel(x).sum()
out.backward()
print(model[0].weight.grad)
