"""The fatal flaw of tracing: only the path the example input took is recorded, so a
data-dependent if is baked in. Scripting the same function keeps both branches.

Source: hybrid frontend, 2.2 (tracing records one execution path) and the rule of thumb
that follows it.
"""
# compare: exact

import warnings

import torch


def gate(x):
    if x.sum() > 0:
        return x * 2
    return x - 10


warnings.simplefilter("ignore")  # the TracerWarning about the Python bool
traced = torch.jit.trace(gate, (torch.ones(3),))
scripted = torch.jit.script(gate)
negative = -torch.ones(3)
print("eager:   ", gate(negative))
print("traced:  ", traced(negative))  # wrong branch: recorded on a positive input
print("scripted:", scripted(negative))
print("positive:", traced(torch.ones(3)), scripted(torch.ones(3)))
