"""``minitorch.fx`` against ``torch.fx`` (issue 40): the same programs traced give the same
nodes (ops, targets by name, arguments), the same code runs to the same outputs, and the
rewriting examples (swap add for mul, relu for gelu, dead code, a Transformer, shape
propagation) give the same graphs and results."""

import math
import operator

import numpy as np
import pytest

import minitorch as mt
from minitorch import fx

torch = pytest.importorskip("torch")
pytest.importorskip("torch.fx")


def models(lib):
    """The same three programs, written once against ``lib`` (torch or minitorch)."""
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
            self.scale = nn.Parameter(lib.ones(4))

        def forward(self, x):
            y = self.body(x) + x
            return lib.add(y * self.scale, 1.0)

    def function(x, y):
        z = (x + y).view(x.size(0), -1)
        return z.sum(dim=1), lib.relu(z)[:, 0], lib.full((4,), 2.0) * y  # a tensor on the left

    return MLP, Residual, function


def same_weights(theirs, ours):
    for name, t in theirs.state_dict().items():
        ours.state_dict()[name].copy_(mt.tensor(t.detach().numpy()))


def node_view(gm):
    """A graph as comparable rows: (op, name, target by name, args as names)."""

    def target(n):
        if n.op != "call_function":
            return str(n.target)
        return f"{n.target.__module__.split('.')[0]}.{n.target.__name__}".replace(
            "_operator.", "operator."
        ).replace("minitorch.", "torch.")

    inputs = {n: f"input{i}" for i, n in enumerate(gm.graph.find_nodes(op="placeholder"))}

    def name(n):  # inputs by position (minitorch's layers name forward's argument x)
        return inputs.get(n, n.name)

    def arg(a):
        if isinstance(a, (torch.fx.Node, fx.Node)):
            return f"%{name(a)}"
        if isinstance(a, (tuple, list)):
            return tuple(arg(x) for x in a)
        return a

    return [
        (n.op, name(n), target(n) if n.op != "placeholder" else "", arg(n.args))
        for n in gm.graph.nodes
    ]


def trace_both(index):
    torch.manual_seed(0)
    theirs = models(torch)[index]
    ours = models(mt)[index]
    if isinstance(theirs, type):
        theirs, ours = theirs(), ours()
        same_weights(theirs, ours)
    return torch.fx.symbolic_trace(theirs), fx.symbolic_trace(ours)


def run_both(gm_t, gm_m, *shapes):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    a = gm_t(*[torch.tensor(x) for x in xs])
    b = gm_m(*[mt.tensor(x) for x in xs])
    for u, v in zip(
        a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True
    ):
        np.testing.assert_allclose(v.detach().numpy(), u.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("index, shapes", [(0, [(2, 4)]), (1, [(2, 4)]), (2, [(2, 4), (2, 4)])])
def test_symbolic_trace_records_the_same_nodes_and_runs_the_same(index, shapes):
    gm_t, gm_m = trace_both(index)
    rows_t, rows_m = node_view(gm_t), node_view(gm_m)
    # torch's F.relu passes inplace=False on: compare positional args and targets only
    assert rows_m == rows_t
    run_both(gm_t, gm_m, *shapes)


def test_code_and_graph_print_as_torch_fx():
    gm_t, gm_m = trace_both(1)
    assert gm_m.code.replace("minitorch.", "torch.") == gm_t.code
    assert str(gm_m.graph).replace("minitorch.", "torch.") == str(gm_t.graph)


def test_control_flow_on_a_proxy_raises_trace_error():
    def branchy(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(torch.fx.proxy.TraceError, match="control flow"):
        torch.fx.symbolic_trace(branchy)
    with pytest.raises(fx.TraceError, match="cannot be used as inputs to control flow"):
        fx.symbolic_trace(branchy)


def replace_add_with_mul(lib, gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (operator.add, lib.add):
            node.target = operator.mul if node.target is operator.add else lib.mul
    gm.recompile()
    return gm


def test_replace_add_with_mul_and_recompile():
    gm_t, gm_m = trace_both(1)
    replace_add_with_mul(torch, gm_t), replace_add_with_mul(mt, gm_m)
    assert "operator.mul" in [r[2] for r in node_view(gm_m)]
    assert node_view(gm_m) == node_view(gm_t)
    assert " * x" in gm_m.code and "minitorch.mul(" in gm_m.code and " + " not in gm_m.code
    run_both(gm_t, gm_m, (2, 4))


def swap_relu_for_gelu(lib, gm):
    F = lib.nn.functional
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target == F.relu:
            with gm.graph.inserting_after(node):
                gelu = gm.graph.call_function(F.gelu, node.args)
            node.replace_all_uses_with(gelu)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def test_replace_all_uses_with_swaps_relu_for_gelu():
    gm_t, gm_m = trace_both(0)
    swap_relu_for_gelu(torch, gm_t), swap_relu_for_gelu(mt, gm_m)
    assert [r[2] for r in node_view(gm_m)] == [r[2] for r in node_view(gm_t)]
    assert "torch.gelu" in [r[2] for r in node_view(gm_m)]
    run_both(gm_t, gm_m, (2, 4))


def test_fuse_conv_bn_by_folding_the_weights():
    """The FX fuser tutorial's rewrite: a call_module of a BatchNorm reading a Conv2d
    becomes the conv with the norm folded into its weights."""

    def fuse(lib, model):
        gm = (torch.fx if lib is torch else fx).symbolic_trace(model)
        modules = dict(gm.named_modules())
        for node in list(gm.graph.nodes):
            if node.op != "call_module" or not isinstance(modules[node.target], lib.nn.BatchNorm2d):
                continue
            conv_node = node.args[0]
            conv, bn = modules[conv_node.target], modules[node.target]
            scale = bn.weight / lib.sqrt(bn.running_var + bn.eps)
            conv.weight.data = conv.weight.data * scale.detach().reshape(-1, 1, 1, 1)
            conv.bias.data = ((conv.bias - bn.running_mean) * scale + bn.bias).detach()
            node.replace_all_uses_with(conv_node)
            gm.graph.erase_node(node)
        gm.graph.lint()
        gm.delete_all_unused_submodules()
        gm.recompile()
        return gm

    def model(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()).eval()

    torch.manual_seed(0)
    theirs, ours = model(torch), model(mt)
    with torch.no_grad():
        theirs[1].running_mean.uniform_(-1, 1), theirs[1].running_var.uniform_(0.5, 2)
    same_weights(theirs, ours)
    gm_t, gm_m = fuse(torch, theirs), fuse(mt, ours)
    assert [n.op for n in gm_m.graph.nodes] == [
        "placeholder",
        "call_module",
        "call_module",
        "output",
    ]
    assert node_view(gm_m) == node_view(gm_t)
    assert not hasattr(gm_m, "1")
    run_both(gm_t, gm_m, (1, 2, 5, 5))


def test_eliminate_dead_code_erases_unused_nodes_and_erase_node_refuses_used_ones():
    def program(lib):
        def f(x):
            unused = lib.relu(x) * 2  # noqa: F841
            x.add_(1)  # in place, but unused: torch.fx's DCE erases it too
            return x + 1

        return f

    gm_t, gm_m = torch.fx.symbolic_trace(program(torch)), fx.symbolic_trace(program(mt))
    assert gm_m.graph.eliminate_dead_code() is gm_t.graph.eliminate_dead_code() is True
    assert [r[1] for r in node_view(gm_m)] == [r[1] for r in node_view(gm_t)] == [
        "input0", "add", "output"
    ]  # fmt: skip
    placeholder = next(iter(gm_m.graph.nodes))
    with pytest.raises(RuntimeError, match="still had 1 users"):
        gm_m.graph.erase_node(placeholder)


def test_transformer_rewrites_and_shape_prop_records_shapes():
    def make(lib, fxlib):
        class Swap(fxlib.Transformer):
            def call_function(self, target, args, kwargs):
                if target == lib.relu:
                    return lib.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

        return Swap

    gm_t, gm_m = trace_both(2)
    new_t, new_m = make(torch, torch.fx)(gm_t).transform(), make(mt, fx)(gm_m).transform()
    assert node_view(new_m) == node_view(new_t)
    assert "torch.neg" in [r[2] for r in node_view(new_m)]
    run_both(new_t, new_m, (2, 4), (2, 4))

    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    from minitorch.fx.passes.shape_prop import ShapeProp

    x = np.ones((2, 4), np.float32)
    TorchShapeProp(gm_t).propagate(torch.tensor(x), torch.tensor(x))
    ShapeProp(gm_m).propagate(mt.tensor(x), mt.tensor(x))
    shapes = [
        [tuple(n.meta["tensor_meta"].shape) for n in g.graph.nodes if "tensor_meta" in n.meta
         and hasattr(n.meta["tensor_meta"], "shape")]
        for g in (gm_t, gm_m)
    ]  # fmt: skip
    assert shapes[1] == shapes[0] and (2, 4) in shapes[1]


def test_tuple_unpacking_of_a_proxy_and_wrap():
    def f(x):
        a, b = x.chunk(2, dim=1)
        return a * b

    gm_t, gm_m = torch.fx.symbolic_trace(f), fx.symbolic_trace(f)
    assert node_view(gm_m) == node_view(gm_t)
    run_both(gm_t, gm_m, (2, 4))


def test_dynamo_explain_counts_graphs_and_breaks_as_torch_does():
    """torch._dynamo.explain gives the same for this program (2 graphs, 1 break, reason
    'generic_jump TensorVariable()' at the if): running dynamo here costs 3 s, so the
    expectations are the program's structure, read off its source."""
    import inspect

    def f(x):
        x = x * 2
        if x.sum() > 0:  # a graph break: the branch needs a Python bool
            x = x + 1
        return mt.relu(x)

    lines, start = inspect.getsourcelines(f)
    if_line = start + next(i for i, line in enumerate(lines) if "if x.sum()" in line)
    ours = mt._dynamo.explain(f)(mt.ones(3))
    assert (ours.graph_count, ours.graph_break_count) == (2, 1)
    assert [r.reason for r in ours.break_reasons] == ["generic_jump TensorVariable()"]
    assert [(fr.lineno, fr.name) for fr in ours.break_reasons[0].user_stack] == [(if_line, "f")]
    assert ours.ops_per_graph == [["mul", "sum", "gt"], ["add", "relu"]]
    assert ours.op_count == 5 and len(ours.graphs) == 2
    assert str(ours).startswith("Graph Count: 2\nGraph Break Count: 1\nOp Count: 5\n")


def scaled_by_length(x):
    """A helper symbolic tracing cannot go through (len of a Proxy): wrapped, it is one
    call_function node."""
    return x * len(x)


fx.wrap("scaled_by_length")
torch.fx.wrap("scaled_by_length")


def test_wrap_records_a_call_of_the_wrapped_function_and_deepcopy_is_independent():
    import copy

    def f(x):
        return scaled_by_length(x) + 1

    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        fx.symbolic_trace(lambda x: x * len(x))
    gm_t, gm_m = torch.fx.symbolic_trace(f), fx.symbolic_trace(f)
    assert node_view(gm_m) == node_view(gm_t)
    assert gm_m.graph.find_nodes(op="call_function")[0].target is scaled_by_length
    assert gm_m.code.replace("minitorch.", "torch.") == gm_t.code  # (its wrap line too)

    def attention_scale(x):  # math's functions are wrapped for the trace, as torch.fx's
        return x / math.sqrt(x.size(-1))

    scaled_t, scaled_m = (
        torch.fx.symbolic_trace(attention_scale),
        fx.symbolic_trace(attention_scale),
    )
    assert scaled_m.code.replace("minitorch.", "torch.") == scaled_t.code
    run_both(scaled_t, scaled_m, (2, 4))
    run_both(gm_t, gm_m, (3, 2))

    twin = copy.deepcopy(gm_m)
    for node in twin.graph.nodes:
        if node.target is operator.add:
            node.target = operator.sub
    twin.recompile()
    x = mt.ones(3, 2)
    assert twin(x).tolist() == [[2.0, 2.0]] * 3 and gm_m(x).tolist() == [[4.0, 4.0]] * 3


def test_graph_module_keeps_the_roots_submodule_order_and_prints_as_torch():
    """A get_attr of ``fc1.bias`` read before ``fc2`` runs makes ``fc1`` first; the real
    ``fc1`` assigned over its placeholder keeps that place (nn.Module's rule)."""

    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1, self.fc2 = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.fc2(x + self.fc1.bias) + self.fc1(x)

        return Net()

    gm_t, gm_m = torch.fx.symbolic_trace(make(torch)), fx.symbolic_trace(make(mt))
    assert str(gm_m).replace("minitorch.", "torch.") == str(gm_t)
    assert gm_m.print_readable(print_output=False) == gm_t.print_readable(print_output=False)


def test_replace_pattern_rewrites_each_match_where_torch_fx_does():
    """The docs' subgraph-rewriting example, plus a match whose inner value is read
    elsewhere (so it must stay)."""

    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([w1, w2]).sum()
                m2 = lib.cat([w1, w2]).sum()
                kept = lib.cat([x, w1])
                return x + lib.max(m1) + lib.max(m2) + kept.sum() + kept.mean()

        def pattern(w1, w2):
            return lib.cat([w1, w2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])

        return M(), pattern, replacement

    model_t, pattern_t, replacement_t = make(torch)
    model_m, pattern_m, replacement_m = make(mt)
    gm_t, gm_m = torch.fx.symbolic_trace(model_t), fx.symbolic_trace(model_m)
    found_t = torch.fx.subgraph_rewriter.replace_pattern(gm_t, pattern_t, replacement_t)
    found_m = fx.subgraph_rewriter.replace_pattern(gm_m, pattern_m, replacement_m)
    assert len(found_m) == len(found_t) == 2
    assert gm_m.code.replace("minitorch.", "torch.") == gm_t.code
    run_both(gm_t, gm_m, (2,), (2,), (2,))
