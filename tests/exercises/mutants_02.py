"""Wrong answers to chapter 02's exercises, written the way learners write them.

``MUTANTS[exercise_id] = {name: source}``: each source redefines the exercise's Function
or function in a copy of the solution notebook's namespace (see ``mutants.py``); names
starting with ``delegates`` hand the piece to a ready-made implementation and must get no
points. ``CORRECT`` holds legitimate alternatives, which must keep full marks.
"""


def _binary(name, backward, forward="a * b"):
    return f"""
class {name}(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return {forward}

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        {backward}
"""


def _mul(backward):
    return _binary("Mul", backward)


def _div(backward):
    return _binary("Div", backward, "a / b")


def _exp(backward):
    return f"""
class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        {backward}
"""


def _log(backward):
    return f"""
class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        {backward}
"""


def _matmul(backward):
    return f"""
class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        {backward}
"""


def _sum(backward):
    return f"""
class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if dim is None:
            dims = tuple(range(a.ndim))
        elif isinstance(dim, int):
            dims = (dim % a.ndim,)
        else:
            dims = tuple(sorted(d % a.ndim for d in dim))
        ctx.input_shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        {backward}
"""


def _clip(
    forward="return a.copy()",
    backward="return minitorch.minimum(minitorch.maximum(grad, -1.0), 1.0)",
):
    return f"""
class ClipGrad(Function):
    @staticmethod
    def forward(ctx, a):
        {forward}

    @staticmethod
    def backward(ctx, grad):
        {backward}
"""


MUL_DIV = {
    "mul_factors_swapped": _mul("return grad * a, grad * b"),
    "mul_forgets_grad": _mul("return b, a"),
    "mul_detaches_saved": _mul("return grad * b.detach(), grad * a.detach()"),
    "mul_through_numpy": _mul(
        "g = grad.numpy()\n"
        "        return minitorch.tensor(g * b.numpy()), minitorch.tensor(g * a.numpy())"
    ),
    "mul_one_gradient": _mul("return grad * b"),
    "mul_adds_instead": _mul("return grad + b, grad + a"),
    "div_sign_lost": _div("return grad / b, grad * a / (b * b)"),
    "div_not_squared": _div("return grad / b, -grad * a / b"),
    "div_roles_swapped": _div("return grad / a, -grad * b / (a * a)"),
    "div_through_numpy": _div(
        "g, x, y = grad.numpy(), a.numpy(), b.numpy()\n"
        "        return minitorch.tensor(g / y), minitorch.tensor(-g * x / (y * y))"
    ),
    "div_first_only": _div("return grad / b, None"),
    # the rule of the chapter: a tuple, never a list (the engine reads a list as one value)
    "mul_returns_a_list": _mul("return [grad * b, grad * a]"),
    "div_returns_a_list": _div("return [grad / b, -grad * a / (b * b)]"),
    "delegates_mul_by_subclass": """
from minitorch.ops import elementwise

class Mul(elementwise.Mul):
    pass
""",
    "delegates_mul_backward": _mul(
        "from minitorch.ops import elementwise\n        return elementwise.Mul.backward(ctx, grad)"
    ),
    "delegates_div_by_alias": "from minitorch.ops.elementwise import Div\n",
}

EXP_LOG = {
    "exp_recomputed_from_output": _exp("return grad * out.exp()"),
    "exp_forgets_grad": _exp("return out"),
    "exp_through_numpy": _exp("return minitorch.tensor(grad.numpy() * out.numpy())"),
    "exp_detached": _exp("return grad * out.detach()"),
    "log_times_input": _log("return grad * a"),
    "log_forgets_grad": _log("return 1.0 / a"),
    "log_squared": _log("return grad / (a * a)"),
    "log_through_numpy": _log("return grad * minitorch.tensor(1.0 / a.numpy())"),
    "log_detached": _log("return grad / a.detach()"),
    "log_of_the_grad": _log("return grad.log() / a"),
    "exp_returns_a_list": _exp("return [grad * out]"),
    "log_returns_a_list": _log("return [grad / a]"),
    "delegates_exp_by_subclass": """
from minitorch.ops.elementwise import Exp as _PackageExp

class Exp(_PackageExp):
    pass
""",
    "delegates_log_backward": _log(
        "from minitorch.ops import elementwise\n        return elementwise.Log.backward(ctx, grad)"
    ),
}

_UNBROADCAST_HEAD = """
def unbroadcast(grad, shape):
    shape = tuple(shape)
"""

UNBROADCAST = {
    "leading_dims_only": _UNBROADCAST_HEAD
    + """
    lead = grad.ndim - len(shape)
    if lead:
        grad = grad.sum(tuple(range(lead)))
    return grad
""",
    "size_one_dims_only": _UNBROADCAST_HEAD
    + """
    if tuple(grad.shape) == shape:
        return grad
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape)
""",
    "size_one_aligned_on_the_left": _UNBROADCAST_HEAD
    + """
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[i] != 1:
            dims.append(lead + i)
    return grad.sum(tuple(dims), keepdim=True).reshape(shape)
""",
    "through_numpy": _UNBROADCAST_HEAD
    + """
    g = grad.numpy()
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return minitorch.tensor(g.sum(axis=dims, keepdims=True).reshape(shape), dtype=grad.dtype)
""",
    "detached": _UNBROADCAST_HEAD
    + """
    grad = grad.detach()
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    return grad.reshape(shape)
""",
    "mean_instead_of_sum": _UNBROADCAST_HEAD
    + """
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            dims.append(lead + i)
    return grad.mean(tuple(dims), keepdim=True).reshape(shape)
""",
    "size_one_dims_dropped": _UNBROADCAST_HEAD
    + """
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            dims.append(lead + i)
    return grad.sum(tuple(dims))
""",
    # catches: the size-1 dims kept where the target has none: (2, 3) to () gives (1, 1)
    "no_final_reshape": _UNBROADCAST_HEAD
    + """
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            dims.append(lead + i)
    return grad.sum(tuple(dims), keepdim=True)
""",
    "delegates_to_minitorch": """
from minitorch.autograd import unbroadcast
""",
    "delegates_inside": _UNBROADCAST_HEAD
    + """
    import minitorch.ops
    return minitorch.ops.unbroadcast(grad, shape)
""",
}

MATMUL = {
    "no_transposes": _matmul(
        "return unbroadcast(grad @ b, a.shape), unbroadcast(a @ grad, b.shape)"
    ),
    "transposes_on_the_wrong_side": _matmul(
        "return unbroadcast(b.mT @ grad, a.shape), unbroadcast(grad @ a.mT, b.shape)"
    ),
    "batch_dims_not_summed": _matmul("return grad @ b.mT, a.mT @ grad"),
    "only_a_unbroadcast": _matmul("return unbroadcast(grad @ b.mT, a.shape), a.mT @ grad"),
    "through_numpy": _matmul(
        "g, x, y = grad.numpy(), a.numpy(), b.numpy()\n"
        "        ga = minitorch.tensor(g @ np.swapaxes(y, -1, -2), dtype=grad.dtype)\n"
        "        gb = minitorch.tensor(np.swapaxes(x, -1, -2) @ g, dtype=grad.dtype)\n"
        "        return unbroadcast(ga, a.shape), unbroadcast(gb, b.shape)"
    ),
    "detached": _matmul(
        "a, b = a.detach(), b.detach()\n"
        "        return unbroadcast(grad @ b.mT, a.shape), unbroadcast(a.mT @ grad, b.shape)"
    ),
    "sum_over_dim_0_only": _matmul(
        "ga, gb = grad @ b.mT, a.mT @ grad\n"
        "        if ga.ndim > a.ndim:\n"
        "            ga = ga.sum(0)\n"
        "        if gb.ndim > b.ndim:\n"
        "            gb = gb.sum(0)\n"
        "        return ga, gb"
    ),
    "outputs_swapped": _matmul(
        "return unbroadcast(a.mT @ grad, b.shape), unbroadcast(grad @ b.mT, a.shape)"
    ),
    "grad_ignored": _matmul(
        "ones = minitorch.ones_like(grad)\n"
        "        return unbroadcast(ones @ b.mT, a.shape), unbroadcast(a.mT @ ones, b.shape)"
    ),
    "delegates_to_the_package_matmul": """
from minitorch.ops import linalg

class MatMul(linalg.MatMul):
    pass
""",
    "delegates_to_the_package_unbroadcast": _matmul(
        "from minitorch.autograd import unbroadcast as sum_back\n"
        "        return sum_back(grad @ b.mT, a.shape), sum_back(a.mT @ grad, b.shape)"
    ),
}

SUM = {
    "no_unsqueeze": _sum("return grad.expand(ctx.input_shape), None, None"),
    "unsqueeze_even_with_keepdim": _sum(
        "for d in ctx.dims:\n"
        "            grad = grad.unsqueeze(d)\n"
        "        return grad.expand(ctx.input_shape), None, None"
    ),
    "unsqueeze_in_reverse": _sum(
        "if not ctx.keepdim:\n"
        "            for k, d in enumerate(reversed(ctx.dims)):\n"
        "                grad = grad.unsqueeze(d - k)\n"
        "        return grad.expand(ctx.input_shape), None, None"
    ),
    "ones_instead_of_grad": _sum(
        "return minitorch.ones(*ctx.input_shape, dtype=grad.dtype), None, None"
    ),
    "through_numpy": _sum(
        "g = grad.numpy()\n"
        "        if not ctx.keepdim:\n"
        "            g = np.expand_dims(g, ctx.dims)\n"
        "        out = np.broadcast_to(g, ctx.input_shape).copy()\n"
        "        return minitorch.tensor(out, dtype=grad.dtype), None, None"
    ),
    "returns_a_list": _sum(
        "if not ctx.keepdim:\n"
        "            for d in ctx.dims:\n"
        "                grad = grad.unsqueeze(d)\n"
        "        return [grad.expand(ctx.input_shape), None, None]"
    ),
    "one_gradient_only": _sum(
        "if not ctx.keepdim:\n"
        "            for d in ctx.dims:\n"
        "                grad = grad.unsqueeze(d)\n"
        "        return grad.expand(ctx.input_shape)"
    ),
    "no_expand": _sum(
        "if not ctx.keepdim:\n"
        "            for d in ctx.dims:\n"
        "                grad = grad.unsqueeze(d)\n"
        "        return grad, None, None"
    ),
    "detached": _sum(
        "grad = grad.detach()\n"
        "        if not ctx.keepdim:\n"
        "            for d in ctx.dims:\n"
        "                grad = grad.unsqueeze(d)\n"
        "        return grad.expand(ctx.input_shape), None, None"
    ),
    "divided_by_count": _sum(
        "count = 1\n"
        "        for d in ctx.dims:\n"
        "            count *= ctx.input_shape[d]\n"
        "        if not ctx.keepdim:\n"
        "            for d in ctx.dims:\n"
        "                grad = grad.unsqueeze(d)\n"
        "        return grad.expand(ctx.input_shape) / count, None, None"
    ),
    "delegates_to_the_package_sum": """
from minitorch.ops.reduce import Sum as _PackageSum

class Sum(_PackageSum):
    pass
""",
    "delegates_to_the_package_helper": _sum(
        "from minitorch.ops.reduce import _expand_back\n"
        "        return _expand_back(grad, ctx.input_shape, ctx.dims, ctx.keepdim), None, None"
    ),
}

_ORDER_HEAD = """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
"""

_KAHN_COUNT = """
    incoming = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child not in incoming:
                incoming[child] = 0
                stack.append(child)
            incoming[child] += 1
"""

ORDER = {
    "recursive_dfs": _ORDER_HEAD
    + """
    seen, post = set(), []

    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        post.append(node)

    visit(root)
    return post[::-1]
""",
    "recursion_with_a_raised_limit": _ORDER_HEAD
    + """
    import sys
    sys.setrecursionlimit(100_000)
    seen, post = set(), []

    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        post.append(node)

    visit(root)
    return post[::-1]
""",
    "recursion_limit_raised_by_the_cell": """
import sys
sys.setrecursionlimit(100_000)
"""
    + _ORDER_HEAD
    + """
    seen, post = set(), []

    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        post.append(node)

    visit(root)
    return post[::-1]
""",
    "breadth_first": _ORDER_HEAD
    + """
    order, seen = [root], {root}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                order.append(child)
    return order
""",
    "preorder_dfs": _ORDER_HEAD
    + """
    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    return order
""",
    "no_seen_set": _ORDER_HEAD
    + """
    order, queue = [], [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        queue += [child for child, _ in node.next_functions if child is not None]
        if len(order) > 100_000:
            break
    return order
""",
    "leaves_left_out": _ORDER_HEAD
    + _KAHN_COUNT
    + """
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        if type(node).__name__ != "AccumulateGrad":
            order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return order
""",
    "reversed_order": _ORDER_HEAD
    + _KAHN_COUNT
    + """
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return order[::-1]
""",
    "edges_counted_once": _ORDER_HEAD
    + """
    incoming = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None and child not in incoming:
                incoming[child] = 1
                stack.append(child)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child in incoming:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return order
""",
    "delegates_to_the_engine": _ORDER_HEAD
    + """
    from minitorch.autograd import engine
    deps = engine._dependencies([root])
    incoming = {node: 0 for node in deps}
    for node in deps:
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] = incoming.get(child, 0) + 1
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return order
""",
}

_BACKWARD_HEAD = """
def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
    if tensor.grad_fn is None:  # a leaf as the root
        gradient = gradient.detach()
        tensor.grad = gradient if tensor.grad is None else tensor.grad + gradient
        return
"""
# The head of the old reference answer: no case for a leaf as the root.
_NO_LEAF_HEAD = """
def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
"""
_WALK = """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
"""

BACKWARD = {
    # catches: the root taken to have a grad_fn (a leaf as the root gets no .grad)
    "leaf_root_ignored": _NO_LEAF_HEAD + _WALK,
    # catches: a leaf root's .grad that keeps the graph of a gradient that requires grad
    "leaf_root_grad_keeps_the_graph": _NO_LEAF_HEAD
    + """
    if tensor.grad_fn is None:
        tensor.grad = gradient if tensor.grad is None else tensor.grad + gradient
        return
"""
    + _WALK,
    # catches: a leaf root's .grad overwritten instead of accumulated
    "leaf_root_grad_overwritten": _NO_LEAF_HEAD
    + """
    if tensor.grad_fn is None:
        tensor.grad = gradient.detach()
        return
"""
    + _WALK,
    "leaf_grad_overwritten": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            node.variable.grad = grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    "leaf_grad_added_in_place": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            if leaf.grad is None:
                leaf.grad = grad
            else:
                with minitorch.no_grad():
                    leaf.grad.add_(grad)
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    "pending_added_in_place": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is None or g is None:
                continue
            if child in pending:
                with minitorch.no_grad():
                    pending[child].add_(g)
            else:
                pending[child] = g
""",
    "pending_overwritten": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g
""",
    "given_gradient_ignored": """
def backward(tensor, gradient=None):
    gradient = minitorch.ones_like(tensor)
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    "reverse_topological_order": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    for node in reversed(topological_order(tensor)):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    "recursive_walk": _BACKWARD_HEAD
    + """
    def send(node, grad):
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            return
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                send(child, g)

    send(tensor.grad_fn, gradient)
""",
    "grads_of_every_path_separately_first_only": _BACKWARD_HEAD
    + """
    pending = {tensor.grad_fn: gradient}
    done = set()
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None or node in done:
            continue
        done.add(node)
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            if leaf.grad is None:
                leaf.grad = grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    "delegates_to_tensor_backward": """
def backward(tensor, gradient=None):
    tensor.backward(gradient, retain_graph=True)
""",
    "delegates_to_the_engine": """
from minitorch.autograd import engine

def backward(tensor, gradient=None):
    engine.backward(tensor, gradient, retain_graph=True)
""",
}

CLIP = {
    "forward_returns_its_input": _clip(forward="return a"),
    "forward_clips_the_values": _clip(forward="return np.clip(a, -1.0, 1.0)"),
    "one_sided_clip": _clip(backward="return minitorch.minimum(grad, 1.0)"),
    "clip_through_numpy": _clip(
        backward="return minitorch.tensor(np.clip(grad.numpy(), -1.0, 1.0), dtype=grad.dtype)"
    ),
    "norm_clipping": _clip(
        backward="norm = float((grad * grad).sum().sqrt().item())\n"
        "        return grad / max(norm, 1.0)"
    ),
    "identity_backward": _clip(backward="return grad"),
    "clip_to_zero_one": _clip(
        backward="return minitorch.minimum(minitorch.maximum(grad, 0.0), 1.0)"
    ),
    "sign_of_the_gradient": _clip(backward="return grad.sign()"),
    "clip_detached": _clip(
        backward="return minitorch.minimum(minitorch.maximum(grad.detach(), -1.0), 1.0)"
    ),
}

GRADCHECK = {
    "one_sided_difference": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    f0 = f(minitorch.tensor(base)).item()
    for index in np.ndindex(*base.shape):
        plus = base.copy()
        plus[index] += eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f0) / eps
    return grad
""",
    "eps_ignored": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += 1e-6
        minus[index] -= 1e-6
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / 2e-6
    return grad
""",
    "perturbs_float32_in_place": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().numpy()
    grad = np.zeros(base.shape)
    for index in np.ndindex(*base.shape):
        old = base[index]
        base[index] = old + eps
        f_plus = f(x).item()
        base[index] = old - eps
        f_minus = f(x).item()
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
""",
    "element_not_restored": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        base[index] += eps
        f_plus = f(minitorch.tensor(base)).item()
        base[index] -= 2 * eps
        f_minus = f(minitorch.tensor(base)).item()
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
""",
    "outputs_weighted_by_ones": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    f(*xs).sum().backward()
    for i, x in enumerate(xs):
        def projected(xi, i=i):
            args = xs[:i] + [xi] + xs[i + 1 :]
            with minitorch.no_grad():
                return f(*args).sum()
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical_grad(projected, x, eps), atol=atol, rtol=rtol):
            return False
    return True
""",
    "runs_on_the_callers_tensors": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    out = f(*inputs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(out.shape), dtype=out.dtype)
    (out * v).sum().backward()
    for i, x in enumerate(inputs):
        def projected(xi, i=i):
            args = list(inputs[:i]) + [xi.to(dtype=x.dtype)] + list(inputs[i + 1 :])
            with minitorch.no_grad():
                return (f(*args) * v).sum().double()
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.double().numpy()
        if not np.allclose(analytic, numerical_grad(projected, x, eps), atol=atol, rtol=rtol):
            return False
    return True
""",
    "first_input_only": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(out.shape))
    (out * v).sum().backward()

    def projected(x0):
        with minitorch.no_grad():
            return (f(x0, *xs[1:]) * v).sum()

    analytic = xs[0].grad.numpy()
    return bool(np.allclose(analytic, numerical_grad(projected, xs[0], eps), atol=atol, rtol=rtol))
""",
    "exact_comparison": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(out.shape))
    (out * v).sum().backward()
    for i, x in enumerate(xs):
        def projected(xi, i=i):
            args = xs[:i] + [xi] + xs[i + 1 :]
            with minitorch.no_grad():
                return (f(*args) * v).sum()
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.array_equal(analytic, numerical_grad(projected, x, eps)):
            return False
    return True
""",
    "in_float32": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().float().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(out.shape), dtype=out.dtype)
    (out * v).sum().backward()
    for i, x in enumerate(xs):
        def projected(xi, i=i):
            args = xs[:i] + [xi.float()] + xs[i + 1 :]
            with minitorch.no_grad():
                return (f(*args) * v).sum()
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical_grad(projected, x, eps), atol=atol, rtol=rtol):
            return False
    return True
""",
    "returns_nothing": """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(out.shape))
    (out * v).sum().backward()
    for i, x in enumerate(xs):
        def projected(xi, i=i):
            args = xs[:i] + [xi] + xs[i + 1 :]
            with minitorch.no_grad():
                return (f(*args) * v).sum()
        if not np.allclose(x.grad.numpy(), numerical_grad(projected, x, eps), atol=atol, rtol=rtol):
            print("gradcheck failed for input", i)
""",
    "delegates_to_minitorch": """
from minitorch.autograd import gradcheck as _package_gradcheck

def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    return _package_gradcheck(f, xs, eps=eps, atol=atol, rtol=rtol, raise_exception=False)
""",
}

MUTANTS = {
    "02.1": MUL_DIV,
    "02.2": EXP_LOG,
    "02.3": UNBROADCAST,
    "02.4": MATMUL,
    "02.5": SUM,
    "02.6": ORDER,
    "02.7": BACKWARD,
    "02.8": CLIP,
    "02.9": GRADCHECK,
}

CORRECT = {
    # `@` between tensors is allowed inside backward, under any of its names (only
    # minitorch's MatMul Function itself and its array helper are refused)
    "02.4": {
        "matmul_as_a_function_and_a_method": _matmul(
            "grad_a = minitorch.matmul(grad, b.mT)\n"
            "        grad_b = a.mT.matmul(grad)\n"
            "        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)"
        ),
    },
    # the other half of the chapter's rule: a one-argument backward may return a 1-tuple
    # as well as the gradient alone
    "02.2": {
        "one_tuples": _exp("return (grad * out,)") + _log("return (grad / a,)"),
    },
    "02.3": {
        "every_size_one_dim_summed_from_grad": _UNBROADCAST_HEAD
        + """
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1]
    return grad.sum(tuple(dims), keepdim=True)[(0,) * lead].reshape(shape)
""",
        "sum_without_keepdim_then_reshape": _UNBROADCAST_HEAD
        + """
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1]
    dims = [d for d in dims if grad.shape[d] != 1 or d < lead]
    return grad.sum(tuple(dims)).reshape(shape) if dims else grad.reshape(shape)
""",
    },
    "02.5": {
        "expand_by_multiplying_ones": _sum(
            "if not ctx.keepdim:\n"
            "            for d in ctx.dims:\n"
            "                grad = grad.unsqueeze(d)\n"
            "        ones = minitorch.ones(*ctx.input_shape, dtype=grad.dtype)\n"
            "        return grad * ones, None, None"
        ),
    },
    "02.8": {
        "where": _clip(
            backward="inner = minitorch.where(grad < -1.0, -1.0, grad)\n"
            "        return minitorch.where(inner > 1.0, 1.0, inner)"
        ),
    },
}


# --- A second round, written fresh from the exercise text (red team) ----------------------
_DIV_HEAD = """
class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
"""

_LOG_HEAD = """
class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
"""

_NUMERICAL = """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * eps
        )
    return grad
"""

_GRADCHECK_HEAD = """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.asarray(np.random.default_rng(0).standard_normal(out.shape)))
"""

_GRADCHECK_COMPARE = """
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * v).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
"""

ROUND_2 = {
    "02.1": {
        "div_b_forgets_grad": _DIV_HEAD + "        return grad / b, -a / (b * b)\n",
        "div_squares_b_in_place": _DIV_HEAD
        + """
        grad_a = grad / b
        b *= b
        return grad_a, -grad * a / b
""",
        "mul_under_no_grad": """
class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        with minitorch.no_grad():
            return grad * b, grad * a
""",
        "delegates_div_to_autograd_grad": _DIV_HEAD
        + """
        with minitorch.enable_grad():
            a2 = a.detach().requires_grad_() if isinstance(a, minitorch.Tensor) else a
            b2 = b.detach().requires_grad_() if isinstance(b, minitorch.Tensor) else b
            wanted = [t for t in (a2, b2) if isinstance(t, minitorch.Tensor)]
            grads = list(minitorch.autograd.grad(a2 / b2, wanted, grad))
        return tuple(grads.pop(0) if isinstance(t, minitorch.Tensor) else None for t in (a2, b2))
""",
    },
    "02.2": {
        "exp_under_no_grad": """
class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        with minitorch.no_grad():
            return grad * out
""",
        "log_divides_grad_in_place": _LOG_HEAD
        + """
        grad /= a
        return grad
""",
        "delegates_log_to_tensor_backward": _LOG_HEAD
        + """
        with minitorch.enable_grad():
            a2 = a.detach().requires_grad_()
            a2.log().backward(grad)
        return a2.grad
""",
    },
    "02.3": {
        "same_ndim_returned_as_is": """
def unbroadcast(grad, shape):
    shape = tuple(shape)
    if grad.ndim == len(shape):
        return grad
    return grad.sum(tuple(range(grad.ndim - len(shape)))).reshape(shape)
""",
        "grad_dims_not_offset_by_the_leading_ones": """
def unbroadcast(grad, shape):
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    return grad.reshape(shape)
""",
        "size_zero_dims_not_summed": """
def unbroadcast(grad, shape):
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] > 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    return grad.reshape(shape)
""",
        "delegates_to_expand_backward": """
def unbroadcast(grad, shape):
    from types import SimpleNamespace

    from minitorch.ops.views import Expand

    return Expand.backward(SimpleNamespace(shape=tuple(shape)), grad)[0]
""",
    },
    "02.4": {
        "T_instead_of_mT": _matmul(
            "return unbroadcast(grad @ b.T, a.shape), unbroadcast(a.T @ grad, b.shape)"
        ),
        "delegates_matmul_to_autograd_grad": _matmul(
            """with minitorch.enable_grad():
            a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
            return minitorch.autograd.grad(a2 @ b2, [a2, b2], grad)"""
        ),
        "through_numpy_einsum": _matmul(
            """ga = np.einsum("...ij,...kj->...ik", grad.detach().numpy(), b.detach().numpy())
        gb = np.einsum("...ji,...jk->...ik", a.detach().numpy(), grad.detach().numpy())
        return (
            unbroadcast(minitorch.tensor(ga), a.shape),
            unbroadcast(minitorch.tensor(gb), b.shape),
        )"""
        ),
        "leading_batch_dims_only": _matmul(
            """grad_a, grad_b = grad @ b.mT, a.mT @ grad
        while grad_a.ndim > a.ndim:
            grad_a = grad_a.sum(0)
        while grad_b.ndim > b.ndim:
            grad_b = grad_b.sum(0)
        return grad_a, grad_b"""
        ),
    },
    "02.5": {
        "delegates_sum_to_autograd_grad": _sum(
            """with minitorch.enable_grad():
            x = minitorch.zeros(ctx.input_shape, dtype=grad.dtype, requires_grad=True)
            (g,) = minitorch.autograd.grad(x.sum(ctx.dims, keepdim=ctx.keepdim), [x], grad)
        return g, None, None"""
        ),
        "unsqueezes_at_the_end": _sum(
            """if not ctx.keepdim:
            for d in ctx.dims:
                grad = grad.unsqueeze(-1)
        return grad.expand(ctx.input_shape), None, None"""
        ),
    },
    "02.6": {
        "keyed_by_name": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming = {root.name(): 0}
    nodes = {root.name(): root}
    stack = [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child.name() not in incoming:
                incoming[child.name()] = 0
                nodes[child.name()] = child
                stack.append(child)
            incoming[child.name()] += 1
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child is nodes[child.name()]:
                incoming[child.name()] -= 1
                if incoming[child.name()] == 0:
                    ready.append(child)
    return order
""",
        "none_children_kept": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        for child, _ in getattr(node, "next_functions", ()):
            if child not in incoming:
                incoming[child] = 0
                stack.append(child)
            incoming[child] += 1
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in getattr(node, "next_functions", ()):
            incoming[child] -= 1
            if incoming[child] == 0:
                ready.append(child)
    return order
""",
        "sorted_by_in_degree": _ORDER_HEAD
        + _KAHN_COUNT
        + """
    return sorted(incoming, key=incoming.get)
""",
        "sorted_by_bfs_depth": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    depth = {root: 0}
    queue = [root]
    for node in queue:
        for child, _ in node.next_functions:
            if child is not None and child not in depth:
                depth[child] = depth[node] + 1
                queue.append(child)
    return sorted(depth, key=depth.get)
""",
        "seen_set_kept_between_calls": """
def topological_order(tensor, _seen=set()):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming = {root: 0}
    stack = [root]
    _seen.add(root)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child not in _seen:
                _seen.add(child)
                incoming[child] = 0
                stack.append(child)
            if child in incoming:
                incoming[child] += 1
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child in incoming:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return order
""",
    },
    "02.7": {
        "leaf_grads_collected_then_set": _BACKWARD_HEAD
        + """
    pending, leaf_grads = {tensor.grad_fn: gradient}, {}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf_grads[node] = grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = pending[child] + g if child in pending else g
    for node, grad in leaf_grads.items():
        node.variable.grad = grad
""",
        "pending_indexed_directly": _BACKWARD_HEAD
        + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending[node]
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is None or g is None:
                continue
            pending[child] = g if child not in pending else pending[child] + g
""",
        "none_gradients_not_skipped": _BACKWARD_HEAD
        + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is None:
                continue
            pending[child] = g if pending.get(child) is None else pending[child] + g
""",
        "delegates_to_autograd_grad": _BACKWARD_HEAD
        + """
    leaves = [n.variable for n in topological_order(tensor) if isinstance(n, AccumulateGrad)]
    grads = minitorch.autograd.grad(tensor, leaves, gradient, retain_graph=True)
    for leaf, g in zip(leaves, grads):
        leaf.grad = g if leaf.grad is None else leaf.grad + g
""",
        "delegates_accumulation_to_the_engine": _BACKWARD_HEAD
        + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            engine._accumulate_into(node.variable, grad, False, set())
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is None or g is None:
                continue
            pending[child] = g if child not in pending else pending[child] + g
""",
    },
    "02.8": {
        "soft_clip_with_tanh": _clip(backward="return grad.tanh()"),
        "clip_bounds_swapped": _clip(
            backward="return minitorch.maximum(minitorch.minimum(grad, -1.0), 1.0)"
        ),
        "forward_float32_copy": _clip(forward="return a.astype(np.float32)"),
        "forward_returns_a_numpy_view": _clip(forward="return a.reshape(a.shape)"),
        "clips_grad_in_place_by_masks": _clip(
            backward="""grad[grad > 1.0] = 1.0
        grad[grad < -1.0] = -1.0
        return grad"""
        ),
    },
    "02.9": {
        "relative_eps": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        h = eps * max(1.0, abs(base[index]))
        plus, minus = base.copy(), base.copy()
        plus[index] += h
        minus[index] -= h
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * h
        )
    return grad
""",
        "numerical_of_the_unweighted_sum": _NUMERICAL
        + _GRADCHECK_HEAD
        + """
    (out * v).sum().backward()
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            with minitorch.no_grad():
                return f(*xs[:i], xi, *xs[i + 1 :]).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
        "divided_by_eps": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / eps
    return grad
""",
        "perturbs_x_itself": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().numpy()
    grad = np.zeros(base.shape)
    for index in np.ndindex(*base.shape):
        base[index] += eps
        f_plus = f(minitorch.tensor(base.astype(np.float64))).item()
        base[index] -= 2 * eps
        f_minus = f(minitorch.tensor(base.astype(np.float64))).item()
        base[index] += eps
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
""",
        "loops_over_the_first_dim": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for i in range(len(base)):
        plus, minus = base.copy(), base.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * eps
        )
    return grad
""",
        "numpy_arrays_passed_to_f": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (float(f(plus)) - float(f(minus))) / (2 * eps)
    return grad
""",
        "returns_a_tensor": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * eps
        )
    return minitorch.tensor(grad)
""",
        "unused_input_crashes": _NUMERICAL
        + _GRADCHECK_HEAD
        + """
    (out * v).sum().backward()
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * v).sum()

        if not np.allclose(x.grad.numpy(), numerical_grad(projected, x, eps), atol=atol, rtol=rtol):
            return False
    return True
""",
        "backward_once_per_input": _NUMERICAL
        + _GRADCHECK_HEAD
        + """
    for i, x in enumerate(xs):
        (f(*xs) * v).sum().backward()

        def projected(xi, i=i):
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * v).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
        "tolerances_swapped": _NUMERICAL
        + _GRADCHECK_HEAD
        + "    (out * v).sum().backward()\n"
        + _GRADCHECK_COMPARE
        + """
        if not np.allclose(analytic, numerical, atol=rtol, rtol=atol):
            return False
    return True
""",
        "compares_the_sums": _NUMERICAL
        + _GRADCHECK_HEAD
        + "    (out * v).sum().backward()\n"
        + _GRADCHECK_COMPARE
        + """
        if not np.isclose(analytic.sum(), numerical.sum(), atol=atol, rtol=rtol):
            return False
    return True
""",
        "absolute_tolerance_only": _NUMERICAL
        + _GRADCHECK_HEAD
        + "    (out * v).sum().backward()\n"
        + _GRADCHECK_COMPARE
        + """
        if np.abs(analytic - numerical).max(initial=0.0) > atol:
            return False
    return True
""",
        "fresh_random_weights_for_the_differences": _NUMERICAL
        + _GRADCHECK_HEAD
        + """
    (out * v).sum().backward()
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            w = minitorch.tensor(np.asarray(np.random.default_rng().standard_normal(out.shape)))
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * w).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
        "inputs_kept_in_their_dtype": _NUMERICAL
        + """
def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.asarray(np.random.default_rng(0).standard_normal(out.shape)))
    (out * v).sum().backward()
"""
        + _GRADCHECK_COMPARE
        + """
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
    },
}

ROUND_2_CORRECT = {
    "02.1": {
        "div_through_the_output": _DIV_HEAD + "        return grad / b, -grad * (a / b) / b\n",
    },
    "02.2": {
        "log_times_a_reciprocal_power": _LOG_HEAD + "        return grad * a**-1.0\n",
    },
    "02.3": {
        "leading_dims_summed_one_at_a_time": """
def unbroadcast(grad, shape):
    shape = tuple(shape)
    while grad.ndim > len(shape):
        grad = grad.sum(0)
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[i] != 1:
            grad = grad.sum(i, keepdim=True)
    return grad if tuple(grad.shape) == shape else grad.reshape(shape)
""",
    },
    "02.4": {
        "transpose_of_the_last_two_dims": _matmul(
            """grad_a = grad @ b.transpose(-1, -2)
        grad_b = a.transpose(-2, -1) @ grad
        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)"""
        ),
    },
    "02.5": {
        "broadcast_to": _sum(
            """kept = [1 if d in ctx.dims else n for d, n in enumerate(ctx.input_shape)]
        return minitorch.broadcast_to(grad.reshape(kept), ctx.input_shape), None, None"""
        ),
        "reshaped_to_the_kept_shape": _sum(
            """kept = list(ctx.input_shape)
        for d in ctx.dims:
            kept[d] = 1
        return grad.reshape(kept).expand(ctx.input_shape), None, None"""
        ),
    },
    "02.6": {
        "iterative_postorder_reversed": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    done, post = set(), []
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            post.append(node)
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in done:
                stack.append((child, False))
    return post[::-1]
""",
        "kahn_with_a_ready_set": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming, stack = {root: 0}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                if child not in incoming:
                    incoming[child] = 0
                    stack.append(child)
                incoming[child] += 1
    order, ready = [], {root}
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.add(child)
    return order
""",
        "kahn_with_a_queue": """
from collections import deque


def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming, stack = {root: 0}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                if child not in incoming:
                    stack.append(child)
                incoming[child] = incoming.get(child, 0) + 1
    order, ready = [], deque([root])
    while ready:
        node = ready.popleft()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if not incoming[child]:
                    ready.append(child)
    return order
""",
    },
    "02.7": {
        "pending_keyed_by_id": _BACKWARD_HEAD
        + """
    pending = {id(tensor.grad_fn): gradient}
    for node in topological_order(tensor):
        grad = pending.pop(id(node), None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            node.variable.grad = grad if node.variable.grad is None else node.variable.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                key = id(child)
                pending[key] = pending[key] + g if key in pending else g
""",
        "leaves_told_apart_by_name": _BACKWARD_HEAD
        + """
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if type(node).__name__ == "AccumulateGrad":
            node.variable.grad = grad if node.variable.grad is None else node.variable.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = pending[child] + g if child in pending else g
""",
    },
    "02.8": {
        "backward_returns_a_one_tuple": _clip(
            backward="return (minitorch.minimum(minitorch.maximum(grad, -1.0), 1.0),)"
        ),
        "sign_times_clipped_magnitude": _clip(
            backward="return grad.sign() * minitorch.minimum(grad.abs(), 1.0)"
        ),
        "forward_np_array_backward_where": _clip(
            forward="return np.array(a, copy=True)",
            backward="return minitorch.where(grad.abs() > 1.0, grad.sign(), grad)",
        ),
    },
    "02.9": {
        "flat_walk_and_one_v_per_input": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    flat = base.reshape(-1)
    grad = np.zeros(flat.size)
    for k in range(flat.size):
        keep = flat[k]
        flat[k] = keep + eps
        f_plus = f(minitorch.tensor(base.copy())).item()
        flat[k] = keep - eps
        f_minus = f(minitorch.tensor(base.copy())).item()
        flat[k] = keep
        grad[k] = (f_plus - f_minus) / (2 * eps)
    return grad.reshape(base.shape)


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)))
    (out * v).sum().backward()
    ok = True
    for i, x in enumerate(xs):
        with minitorch.no_grad():
            numerical = numerical_grad(lambda t: (f(*xs[:i], t, *xs[i + 1 :]) * v).sum(), x, eps)
        analytic = x.grad.numpy() if x.grad is not None else np.zeros(tuple(x.shape))
        ok = ok and bool(np.allclose(analytic, numerical, atol=atol, rtol=rtol))
    return ok
""",
    },
}

for _table, _extra in ((MUTANTS, ROUND_2), (CORRECT, ROUND_2_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}


# --- A third round (red team): state kept on a class, a function or a module global (a
# second call or a second graph goes wrong), the caller's tensors or list changed in place,
# delegation in disguise, an unused import of a package class -------------------------------
ROUND_3 = {
    "02.1": {
        "mul_saved_on_the_class": """
class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        Mul.saved = (a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = Mul.saved
        a = minitorch.tensor(a) if not isinstance(a, (int, float)) else a
        b = minitorch.tensor(b) if not isinstance(b, (int, float)) else b
        return grad * b, grad * a
""",
        "mul_scales_the_incoming_grad_in_place": """
class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad * b
        grad_b = grad.mul_(a)
        return grad_a, grad_b
""",
    },
    "02.2": {
        "exp_output_kept_on_the_class": """
class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        Exp.out = np.exp(a)
        return Exp.out

    @staticmethod
    def backward(ctx, grad):
        return grad * minitorch.tensor(Exp.out, dtype=grad.dtype)
""",
    },
    "02.3": {
        "dims_cached_by_target_shape": """
_dims = {}


def unbroadcast(grad, shape):
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    if shape not in _dims:
        lead = grad.ndim - len(shape)
        dims = list(range(lead))
        for i, size in enumerate(shape):
            if size == 1 and grad.shape[lead + i] != 1:
                dims.append(lead + i)
        _dims[shape] = tuple(dims)
    dims = _dims[shape]
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape)
""",
        "delegates_to_autograd_grad_of_expand": """
def unbroadcast(grad, shape):
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    with minitorch.enable_grad():
        x = minitorch.zeros(shape, dtype=grad.dtype, requires_grad=True)
        (g,) = minitorch.autograd.grad(x.expand(grad.shape), x, grad, create_graph=True)
    return g
""",
    },
    "02.4": {
        "inputs_kept_on_the_class": """
class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        MatMul.inputs = (a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = (minitorch.tensor(v, dtype=grad.dtype) for v in MatMul.inputs)
        return unbroadcast(grad @ b.mT, a.shape), unbroadcast(a.mT @ grad, b.shape)
""",
        "delegates_to_the_package_backward_by_attribute": """
from minitorch.ops import linalg


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    backward = linalg.MatMul.__dict__["backward"]
""",
    },
    "02.5": {
        "input_shape_kept_on_the_class": """
class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if dim is None:
            dims = tuple(range(a.ndim))
        elif isinstance(dim, int):
            dims = (dim % a.ndim,)
        else:
            dims = tuple(sorted(d % a.ndim for d in dim))
        Sum.input_shape, Sum.dims, Sum.keepdim = a.shape, dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        if not Sum.keepdim:
            for d in Sum.dims:
                grad = grad.unsqueeze(d)
        return grad.expand(Sum.input_shape), None, None
""",
        "expand_shape_cached_by_grad_shape": """
_targets = {}


class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if dim is None:
            dims = tuple(range(a.ndim))
        elif isinstance(dim, int):
            dims = (dim % a.ndim,)
        else:
            dims = tuple(sorted(d % a.ndim for d in dim))
        ctx.input_shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        key = tuple(grad.shape)
        if key not in _targets:
            _targets[key] = (ctx.dims, ctx.keepdim, ctx.input_shape)
        dims, keepdim, shape = _targets[key]
        if not keepdim:
            for d in dims:
                grad = grad.unsqueeze(d)
        return grad.expand(shape), None, None
""",
    },
    "02.6": {
        "visited_kept_on_the_function": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    seen = topological_order.__dict__.setdefault("seen", set())
    post, stack = [], [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            post.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append((child, False))
    return post[::-1]
""",
        "order_list_kept_in_a_global": """
_order = []


def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    incoming, stack = {root: 0}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                if child not in incoming:
                    incoming[child] = 0
                    stack.append(child)
                incoming[child] += 1
    ready = [root]
    while ready:
        node = ready.pop()
        _order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                incoming[child] -= 1
                if incoming[child] == 0:
                    ready.append(child)
    return _order
""",
    },
    "02.7": {
        "grads_totalled_in_a_global": """
from minitorch.autograd import AccumulateGrad


def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            _totals[leaf] = grad if leaf not in _totals else _totals[leaf] + grad
            leaf.grad = _totals[leaf]
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g


_totals = {}
""",
        "detaches_the_callers_loss": """
from minitorch.autograd import AccumulateGrad


def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
    pending = {tensor.grad_fn: gradient}
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
    tensor.detach_()  # free the graph
""",
    },
    "02.9": {
        "inputs_list_replaced_in_place": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * eps
        )
    return grad


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    for i in range(len(inputs)):
        inputs[i] = inputs[i].detach().double().requires_grad_()
    xs = inputs
    out = f(*xs)
    v = minitorch.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)))
    (out * v).sum().backward()
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * v).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
        "delegates_central_difference_to_np_gradient": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        values = []
        for step in (-eps, 0.0, eps):
            moved = base.copy()
            moved[index] += step
            values.append(f(minitorch.tensor(moved)).item())
        grad[index] = np.gradient(np.array(values), eps)[1]
    return grad
""",
    },
}

ROUND_3_CORRECT = {
    "02.1": {
        "unused_import_of_the_package_mul": """
from minitorch.ops.elementwise import Mul as PackageMul  # noqa: F401


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a
""",
        "div_by_a_reciprocal": """
class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        inv = 1.0 / b
        return grad * inv, -grad * a * inv * inv
""",
    },
    "02.2": {
        "unused_import_of_the_package_log": """
from minitorch.ops.elementwise import Log as ReferenceLog  # noqa: F401


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a
""",
        "exp_recomputed_from_the_input": """
class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.exp(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.exp()
""",
    },
    "02.3": {
        "unused_import_of_expand": """
from minitorch.ops.views import Expand  # noqa: F401


def unbroadcast(grad, shape):
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    return grad.reshape(shape)
""",
    },
    "02.4": {
        "unused_import_of_the_package_matmul": """
from minitorch.ops.linalg import MatMul as ReferenceMatMul  # noqa: F401


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return unbroadcast(grad @ b.mT, a.shape), unbroadcast(a.mT @ grad, b.shape)
""",
        "last_two_dims_swapped_by_permute": """
class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors

        def swap(t):
            dims = list(range(t.ndim))
            dims[-1], dims[-2] = dims[-2], dims[-1]
            return t.permute(*dims)

        return unbroadcast(grad @ swap(b), a.shape), unbroadcast(swap(a) @ grad, b.shape)
""",
    },
    "02.5": {
        "unused_import_of_the_package_sum": """
from minitorch.ops.reduce import Sum as PackageSum  # noqa: F401


class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if dim is None:
            dims = tuple(range(a.ndim))
        elif isinstance(dim, int):
            dims = (dim % a.ndim,)
        else:
            dims = tuple(sorted(d % a.ndim for d in dim))
        ctx.input_shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        if not ctx.keepdim:
            for d in ctx.dims:
                grad = grad.unsqueeze(d)
        return grad.expand(ctx.input_shape), None, None
""",
        "added_to_zeros": """
class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if dim is None:
            dims = tuple(range(a.ndim))
        elif isinstance(dim, int):
            dims = (dim % a.ndim,)
        else:
            dims = tuple(sorted(d % a.ndim for d in dim))
        ctx.input_shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        kept = [1 if d in ctx.dims else n for d, n in enumerate(ctx.input_shape)]
        zeros = minitorch.zeros(ctx.input_shape, dtype=grad.dtype)
        return zeros + grad.reshape(kept), None, None
""",
    },
    "02.6": {
        "dfs_with_an_iterator_stack": """
def topological_order(tensor):
    root = tensor.grad_fn
    if root is None:
        return []
    done, post = {root}, []
    stack = [(root, iter(node for node, _ in root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child is not None and child not in done:
                done.add(child)
                stack.append((child, iter(c for c, _ in child.next_functions)))
                break
        else:
            stack.pop()
            post.append(node)
    post.reverse()
    return post
""",
    },
    "02.7": {
        "contributions_listed_then_summed": """
from minitorch.autograd import AccumulateGrad


def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
    if tensor.grad_fn is None:  # a leaf as the root
        with minitorch.no_grad():
            tensor.grad = gradient.clone() if tensor.grad is None else tensor.grad + gradient
        return
    arrived = {tensor.grad_fn: [gradient]}
    for node in topological_order(tensor):
        grads = arrived.pop(node, [])
        if not grads:
            continue
        grad = grads[0]
        for g in grads[1:]:
            grad = grad + g
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                arrived.setdefault(child, []).append(g)
""",
        "unused_import_of_the_engine_backward": """
from minitorch.autograd.engine import backward as reference_backward  # noqa: F401
from minitorch.autograd import AccumulateGrad


def backward(tensor, gradient=None):
    if gradient is None:
        gradient = minitorch.ones_like(tensor)
    pending = {tensor.grad_fn: gradient}
    if tensor.grad_fn is None:  # a leaf as the root: its own AccumulateGrad has no edge here
        old = tensor.grad
        tensor.grad = gradient.detach() if old is None else old + gradient.detach()
        return
    for node in topological_order(tensor):
        grad = pending.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            continue
        for (child, _), g in zip(node.next_functions, call_backward(node, grad)):
            if child is not None and g is not None:
                pending[child] = g if child not in pending else pending[child] + g
""",
    },
    "02.8": {
        "clip_by_relus": """
class ClipGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad - (grad - 1.0).relu() + (-grad - 1.0).relu()
""",
    },
    "02.9": {
        "one_generator_for_every_call": """
def numerical_grad(f, x, eps=1e-6):
    base = x.detach().double().numpy().copy()
    grad = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(minitorch.tensor(plus)).item() - f(minitorch.tensor(minus)).item()) / (
            2 * eps
        )
    return grad


_rng = np.random.default_rng(0)


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [x.detach().double().requires_grad_() for x in inputs]
    out = f(*xs)
    v = minitorch.tensor(_rng.standard_normal(tuple(out.shape)))
    (out * v).sum().backward()
    for i, x in enumerate(xs):

        def projected(xi, i=i):
            with minitorch.no_grad():
                return (f(*xs[:i], xi, *xs[i + 1 :]) * v).sum()

        numerical = numerical_grad(projected, x, eps)
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        if not np.allclose(analytic, numerical, atol=atol, rtol=rtol):
            return False
    return True
""",
    },
}

for _table, _extra in ((MUTANTS, ROUND_3), (CORRECT, ROUND_3_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}
