"""Scripting keeps data-dependent control flow: the compiled function takes the branch
each input asks for; a scripted function can be scripted again and saved.

Source: hybrid frontend, 2.2 (control_flow_fn).
"""
# compare: exact

import torch


@torch.jit.script
def control_flow_fn(x, threshold: float):
    # TorchScript supports control flow, with types it can determine
    if torch.sum(x) > threshold:
        result = x * 2
    else:
        result = x / 2
    return result


# callable at once: it is compiled already
x = torch.randn(5)
output = control_flow_fn(x, 0.5)
print(torch.equal(output, x * 2) if x.sum() > 0.5 else torch.equal(output, x / 2))
print(control_flow_fn(torch.ones(5), 0.5))
print(control_flow_fn(-torch.ones(5), 0.5))
# it can be saved too
torch.jit.save(torch.jit.script(control_flow_fn), "scripted_model.pt")
loaded = torch.jit.load("scripted_model.pt")
print(loaded(torch.ones(3), 10.0), loaded(torch.ones(3), 1.0))
