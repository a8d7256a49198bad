"""d2l, chapter 6 "Builders' Guide": modules, parameters, initialisation, lazy layers, custom
layers and file I/O, as the chapter's PyTorch code does them.

Source: Dive into Deep Learning (d2l.ai), sections 6.1 (layers and modules: a hand-written
Sequential, a module with a constant weight and a while loop), 6.2 (parameter access, shared
layers), 6.3 (built-in and custom initialisation, setting .data), 6.4 (lazy initialisation),
6.5 (layers with and without parameters) and 6.6 (saving tensors, lists, dicts and a
state_dict, loading them back). Written in the same shape with the same calls. Changes: the
printed tensors are summarised (their shapes, dtypes and checks), since the values come from the
random generator; files go to a temporary folder.
"""
# compare: masked

import os
import tempfile

import torch
from torch import nn
from torch.nn import functional as F

# --- 6.1 layers and modules ------------------------------------------------------------------
net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
X = torch.rand(2, 20)
print(net(X).shape)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.out = nn.LazyLinear(10)

    def forward(self, X):
        return self.out(F.relu(self.hidden(X)))


net = MLP()
print(net(X).shape)


class MySequential(nn.Module):
    def __init__(self, *args):
        super().__init__()
        for idx, module in enumerate(args):
            self.add_module(str(idx), module)

    def forward(self, X):
        for module in self.children():
            X = module(X)
        return X


net = MySequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(net(X).shape)


class FixedHiddenMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.rand_weight = torch.rand((20, 20))  # a constant: no gradient, not a parameter
        self.linear = nn.LazyLinear(20)

    def forward(self, X):
        X = self.linear(X)
        X = F.relu(X @ self.rand_weight + 1)
        X = self.linear(X)  # the same layer again: its parameters are shared
        while X.abs().sum() > 1:
            X /= 2
        return X.sum()


net = FixedHiddenMLP()
out = net(X)
print(out.shape, out.dtype, bool(out.abs() <= 1))


class NestMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.LazyLinear(64), nn.ReLU(), nn.LazyLinear(32), nn.ReLU())
        self.linear = nn.LazyLinear(16)

    def forward(self, X):
        return self.linear(self.net(X))


chimera = nn.Sequential(NestMLP(), nn.LazyLinear(20), FixedHiddenMLP())
print(chimera(X).shape)

# --- 6.2 parameter management ----------------------------------------------------------------
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
X = torch.rand(size=(2, 4))
print(net(X).shape)
print(list(net[2].state_dict().keys()), [v.shape for v in net[2].state_dict().values()])
print(type(net[2].bias).__name__, net[2].bias.data.shape, net[2].weight.grad is None)
print([(name, param.shape) for name, param in net.named_parameters()])

shared = nn.LazyLinear(8)
net = nn.Sequential(
    nn.LazyLinear(8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(), nn.LazyLinear(1)
)
net(X)
print(bool((net[2].weight.data[0] == net[4].weight.data[0]).all()))
net[2].weight.data[0, 0] = 100
print(bool((net[2].weight.data[0] == net[4].weight.data[0]).all()), net[4].weight.data[0, 0])
print(len(list(net.parameters())), "parameter tensors (the shared layer's once)")

# --- 6.3 parameter initialisation ------------------------------------------------------------
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
net(X)


def init_normal(module):
    if type(module) is nn.Linear:
        nn.init.normal_(module.weight, mean=0, std=0.01)
        nn.init.zeros_(module.bias)


net.apply(init_normal)
print(bool(net[0].weight.data.abs().max() < 0.1), net[0].bias.data[0])


def init_constant(module):
    if type(module) is nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_xavier(module):
    if type(module) is nn.Linear:
        nn.init.xavier_uniform_(module.weight)


def init_42(module):
    if type(module) is nn.Linear:
        nn.init.constant_(module.weight, 42)


net[0].apply(init_xavier)
net[2].apply(init_42)
bound = (6 / (4 + 8)) ** 0.5
print(bool(net[0].weight.data.abs().max() <= bound), net[2].weight.data)


def my_init(module):
    if type(module) is nn.Linear:
        print("Init", *[(name, param.shape) for name, param in module.named_parameters()][0])
        nn.init.uniform_(module.weight, -10, 10)
        module.weight.data *= module.weight.data.abs() >= 5


net.apply(my_init)
w = net[0].weight
print(bool(((w == 0) | (w.abs() >= 5)).all()))
net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
print(net[0].weight.data[0, 0])

# --- 6.4 lazy initialisation -----------------------------------------------------------------
net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(type(net[0].weight).__name__)
X = torch.rand(2, 20)
net(X)
print(type(net[0].weight).__name__, net[0].weight.shape)

# --- 6.5 custom layers -----------------------------------------------------------------------


class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()


layer = CenteredLayer()
print(layer(torch.tensor([1.0, 2, 3, 4, 5])))
net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
Y = net(torch.rand(4, 8))
print(bool(Y.mean().abs() < 1e-6))


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)


linear = MyLinear(5, 3)
print(linear.weight.shape, [name for name, _ in linear.named_parameters()])
print(linear(torch.rand(2, 5)).shape)
net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.rand(2, 64)).shape)

# --- 6.6 file I/O ----------------------------------------------------------------------------
folder = tempfile.mkdtemp()
x = torch.arange(4)
torch.save(x, os.path.join(folder, "x-file"))
x2 = torch.load(os.path.join(folder, "x-file"))
print(x2)
y = torch.zeros(4)
torch.save([x, y], os.path.join(folder, "x-files"))
x2, y2 = torch.load(os.path.join(folder, "x-files"))
print((x2, y2))
mydict = {"x": x, "y": y}
torch.save(mydict, os.path.join(folder, "mydict"))
mydict2 = torch.load(os.path.join(folder, "mydict"))
print(mydict2)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.output = nn.LazyLinear(10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))


net = MLP()
X = torch.randn(size=(2, 20))
Y = net(X)
torch.save(net.state_dict(), os.path.join(folder, "mlp.params"))
clone = MLP()
clone.load_state_dict(torch.load(os.path.join(folder, "mlp.params")))
clone.eval()
Y_clone = clone(X)
print(Y_clone == Y)
