"""torch.fx, direct graph manipulation: trace a module, swap every ``torch.add`` call for
``torch.mul``, lint the graph and wrap it in a GraphModule that runs the new code.

Source: torch.fx documentation, "Writing Transformations: Direct Graph Manipulation"
(the sample module and transform as given; printing the graph and code added).
"""
# compare: exact

import torch
import torch.fx as fx


# Sample module
class M(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)


def transform(m: torch.nn.Module, tracer_class: type = fx.Tracer) -> torch.nn.Module:
    graph: fx.Graph = tracer_class().trace(m)
    # FX represents its Graph as an ordered list of
    # nodes, so we can iterate through them.
    for node in graph.nodes:
        # Checks if we're calling a function (i.e:
        # torch.add)
        if node.op == "call_function":
            # The target attribute is the function
            # that call_function calls.
            if node.target == torch.add:
                node.target = torch.mul

    graph.lint()  # Does some checks to make sure the
    # Graph is well-formed.

    return fx.GraphModule(m, graph)


m = M()
x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0])
print("before:", m(x, y))
transformed = transform(m)
print(transformed.graph)
print(transformed.code)
print("after:", transformed(x, y))
for node in transformed.graph.nodes:
    print(node.op, node.name, node.args)

# The same rewrite on symbolic_trace's GraphModule, then recompile()
gm = fx.symbolic_trace(M())
for node in gm.graph.nodes:
    if node.op == "call_function" and node.target == torch.add:
        node.target = torch.mul
gm.recompile()
print(gm(x, y))
