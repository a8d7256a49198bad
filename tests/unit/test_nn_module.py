"""nn.Module: registration, traversal, modes, state dicts, hooks and repr."""

import numpy as np
import pytest

import minitorch
from minitorch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = nn.Parameter(minitorch.ones(3))
        self.register_buffer("steps", minitorch.zeros(1))
        self.register_buffer("scratch", minitorch.zeros(2), persistent=False)
        self.plain = minitorch.ones(5)  # a bare tensor: not registered

    def forward(self, x):
        return self.fc(x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(3, 2))


def test_parameters_are_registered_by_assignment():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == [
        "block.scale",
        "block.fc.weight",
        "block.fc.bias",
        "head.1.weight",
        "head.1.bias",
    ]
    assert all(p.requires_grad and p.is_leaf for p in net.parameters())
    assert "plain" not in dict(net.block.named_parameters())


def test_shared_parameters_are_listed_once():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    net[1].weight = net[0].weight
    assert len(list(net.parameters())) == 3


def test_modules_children_and_buffers():
    net = Net()
    assert [n for n, _ in net.named_modules()] == [
        "",
        "block",
        "block.fc",
        "head",
        "head.0",
        "head.1",
    ]
    assert [type(c).__name__ for c in net.children()] == ["Block", "Sequential"]
    assert [n for n, _ in net.named_buffers()] == ["block.steps", "block.scratch"]


def test_state_dict_keys_skip_non_persistent_buffers():
    sd = Net().state_dict()
    assert list(sd) == [
        "block.scale", "block.steps", "block.fc.weight", "block.fc.bias",
        "head.1.weight", "head.1.bias",
    ]  # fmt: skip
    assert not any(t.requires_grad for t in sd.values())


def test_load_state_dict_copies_values_in_place():
    a, b = Net(), Net()
    weight = b.block.fc.weight
    b.load_state_dict(a.state_dict())
    assert b.block.fc.weight is weight
    for (_, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert np.array_equal(x.numpy(), y.numpy())


def test_load_state_dict_names_missing_and_unexpected_keys():
    sd = Net().state_dict()
    del sd["head.1.bias"]
    sd["head.2.weight"] = minitorch.zeros(1)
    with pytest.raises(RuntimeError) as err:
        Net().load_state_dict(sd)
    assert "Missing key(s) in state_dict: 'head.1.bias'" in str(err.value)
    assert "Unexpected key(s) in state_dict: 'head.2.weight'" in str(err.value)
    result = Net().load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head.1.bias"] and result.unexpected_keys == ["head.2.weight"]


def test_load_state_dict_shape_mismatch():
    sd = Net().state_dict()
    sd["block.fc.weight"] = minitorch.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for block.fc.weight"):
        Net().load_state_dict(sd)


def test_train_eval_propagates():
    net = Net().eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_zero_grad_and_apply():
    net = Net()
    out = net.head(net.block(minitorch.ones(2, 4))).sum()
    out.backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 2


def test_forward_hooks_can_change_inputs_and_outputs():
    lin = nn.Linear(2, 2)
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = lin.register_forward_hook(lambda m, args, out: out + 1)
    out = lin(minitorch.ones(1, 2))
    expected = lin.bias.detach().numpy() + 1
    assert np.allclose(out.detach().numpy(), expected)
    pre.remove()
    post.remove()
    assert np.allclose(lin(minitorch.zeros(1, 2)).detach().numpy(), lin.bias.detach().numpy())


def test_repr_like_pytorch():
    net = nn.Sequential(nn.Linear(784, 10), nn.ReLU(), nn.Dropout(0.1))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=784, out_features=10, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Dropout(p=0.1, inplace=False)\n"
        ")"
    )


def test_assigning_before_init_is_a_clear_error():
    class Broken(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\)"):
        Broken()


def test_to_keeps_parameter_identity_and_casts():
    net = Net()
    weight = net.block.fc.weight
    net.double()
    assert net.block.fc.weight is weight and weight.dtype == minitorch.float64
    assert net.block.steps.dtype == minitorch.float64


def test_module_list_and_dict_register():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1)})

    names = [n for n, _ in M().named_parameters()]
    assert len(names) == 8 and "heads.a.weight" in names and "layers.2.bias" in names


def test_a_module_assigned_over_a_module_keeps_its_place_as_in_pytorch():
    # fine-tuning replaces a head (``model.fc = nn.Linear(...)``): it stays where it was in
    # the children's order (printing, state_dict); a new name goes last

    model = nn.Module()
    model.a, model.b = nn.Linear(2, 2), nn.ReLU()
    model.a = nn.Linear(2, 3)
    model.a.weight = nn.Parameter(minitorch.zeros(3, 2))
    model.c = nn.Tanh()
    assert [n for n, _ in model.named_children()] == ["a", "b", "c"]
    assert list(model.state_dict()) == ["a.weight", "a.bias"]
    assert model.a.out_features == 3 and float(model.a.weight.sum()) == 0.0
