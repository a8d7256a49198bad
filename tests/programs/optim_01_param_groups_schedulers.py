"""Optimizers as the tutorials print and configure them: print(optimizer), param groups
with per-group lr, add_param_group, state_dict, StepLR/ExponentialLR/MultiStepLR/
LambdaLR with get_last_lr, and a scheduler's state_dict.

Source: the optim tutorials (Learning PyTorch with Examples; the AMP recipe's optimizer).
"""
# compare: exact

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.2, 0.2, p.numel()).view_as(p))

opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
print(opt)
opt = torch.optim.Adam(
    [
        {"params": model[0].parameters()},
        {"params": model[2].parameters(), "lr": 1e-3},
    ],
    lr=1e-2,
)
print(opt)
print(len(opt.param_groups), [g["lr"] for g in opt.param_groups])
print(opt.defaults["lr"], opt.defaults["betas"])

scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
x = torch.linspace(-1, 1, 6).view(2, 3)
for epoch in range(5):
    opt.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    opt.step()
    scheduler.step()
    print(epoch, scheduler.get_last_lr(), round(loss.item(), 6))
print(scheduler.state_dict()["last_epoch"], scheduler.state_dict()["step_size"])

opt2 = torch.optim.SGD(model.parameters(), lr=1.0)
sched = torch.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.9)
multi = torch.optim.lr_scheduler.MultiStepLR(
    torch.optim.SGD(model.parameters(), lr=1.0), milestones=[1, 3], gamma=0.1
)
lam = torch.optim.lr_scheduler.LambdaLR(
    torch.optim.SGD(model.parameters(), lr=1.0), lr_lambda=lambda e: 1 / (e + 1)
)
for _ in range(4):
    opt2.step()
    sched.step()
    multi.optimizer.step()
    multi.step()
    lam.optimizer.step()
    lam.step()
    print(sched.get_last_lr(), multi.get_last_lr(), lam.get_last_lr())

cos = torch.optim.lr_scheduler.CosineAnnealingLR(
    torch.optim.SGD(model.parameters(), lr=1.0), T_max=4
)
for _ in range(4):
    cos.optimizer.step()
    cos.step()
print([round(v, 6) for v in cos.get_last_lr()])

sd = opt.state_dict()
print(sd["param_groups"])
print(sorted(sd["state"].keys()), sorted(sd["state"][0].keys()))
opt.add_param_group({"params": [nn.Parameter(torch.zeros(2))], "lr": 0.5})
print(len(opt.param_groups), opt.param_groups[-1]["lr"], opt.param_groups[-1]["betas"])
for g in opt.param_groups:
    g["lr"] = 0.05
print([g["lr"] for g in opt.param_groups])
