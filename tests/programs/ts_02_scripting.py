"""Introduction to TorchScript, part 2: script a module with control flow, mix scripting
and tracing (a scripted loop over a traced cell, a traced wrapper around a scripted
loop), then save and load the result.

Source: PyTorch tutorial "Introduction to TorchScript" (printing .code is left out).
"""
# compare: masked

import warnings

import torch

torch.manual_seed(191009)
x, h = torch.rand(3, 4), torch.rand(3, 4)


class MyDecisionGate(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class MyCell(torch.nn.Module):
    def __init__(self, dg):
        super(MyCell, self).__init__()
        self.dg = dg
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the TracerWarning about the data-dependent if
    my_cell = MyCell(MyDecisionGate())
    traced_cell = torch.jit.trace(my_cell, (x, h))

scripted_gate = torch.jit.script(MyDecisionGate())

my_cell = MyCell(scripted_gate)
scripted_cell = torch.jit.script(my_cell)

# New inputs
x, h = torch.rand(3, 4), torch.rand(3, 4)
print(scripted_cell(x, h))
print(all(torch.allclose(a, b) for a, b in zip(scripted_cell(x, h), my_cell(x, h))))


class MyRNNLoop(torch.nn.Module):
    def __init__(self):
        super(MyRNNLoop, self).__init__()
        self.cell = torch.jit.trace(MyCell(scripted_gate), (x, h))

    def forward(self, xs):
        h, y = torch.zeros(3, 4), torch.zeros(3, 4)
        for i in range(xs.size(0)):
            y, h = self.cell(xs[i], h)
        return y, h


rnn_loop = torch.jit.script(MyRNNLoop())
xs = torch.rand(10, 3, 4)
y, h_out = rnn_loop(xs)
print(y.shape, h_out.shape)


class WrapRNN(torch.nn.Module):
    def __init__(self):
        super(WrapRNN, self).__init__()
        self.loop = torch.jit.script(MyRNNLoop())

    def forward(self, xs):
        y, h = self.loop(xs)
        return torch.relu(y)


traced = torch.jit.trace(WrapRNN(), (torch.rand(10, 3, 4)))
print(torch.allclose(traced(xs), torch.relu(traced.loop(xs)[0])))

traced.save("wrapped_rnn.pt")

loaded = torch.jit.load("wrapped_rnn.pt")

print(torch.allclose(loaded(xs), traced(xs)))
print(loaded(torch.zeros(5, 3, 4)).shape)
