"""torch.fx, Proxy/retracing: rewrite a graph by running decomposition rules on Proxies
that append to a new graph (``F.relu(x)`` becomes ``(x > 0) * x``), copying every other
node with ``node_copy``.

Source: torch.fx documentation, "Proxy/Retracing" (the relu decomposition example; a small
model and the printing added).
"""
# compare: exact

import torch
import torch.fx as fx
import torch.nn.functional as F


# Note that this decomposition rule can be read as regular Python
def relu_decomposition(x):
    return (x > 0) * x


decomposition_rules = {}
decomposition_rules[F.relu] = relu_decomposition


def decompose(model: torch.nn.Module, tracer_class: type = fx.Tracer) -> torch.nn.Module:
    """
    Decompose `model` into smaller constituent operations.
    Currently,this only supports decomposing ReLU into its
    mathematical definition: (x > 0) * x
    """
    graph: fx.Graph = tracer_class().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = torch.fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            # By wrapping the arguments with proxies,
            # we can dispatch to the appropriate
            # decomposition rule and implicitly add it
            # to the Graph by symbolically tracing it.
            proxy_args = [
                fx.Proxy(env[x.name], tracer) if isinstance(x, fx.Node) else x for x in node.args
            ]
            output_proxy = decomposition_rules[node.target](*proxy_args)

            # Operations on `Proxy` always yield new `Proxy`s, and the
            # return value of our decomposition rule is no exception.
            # We need to extract the underlying `Node` from the `Proxy`
            # to use it in subsequent iterations of this transform.
            new_node = output_proxy.node
            env[node.name] = new_node
        else:
            # Default case: we don't have a decomposition rule for this
            # node, so just copy the node over into the new graph.
            new_node = new_graph.node_copy(node, lambda x: env[x.name])
            env[node.name] = new_node
    return fx.GraphModule(model, new_graph)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 4)
        self.fc2 = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.tensor([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]])
decomposed = decompose(net)
print(decomposed.code)
print([(n.op, n.name) for n in decomposed.graph.nodes])
print(net(x))
print(decomposed(x))
print(torch.allclose(net(x), decomposed(x)))
