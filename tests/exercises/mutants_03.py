"""Wrong answers to chapter 03's exercises, written the way learners write them.

``MUTANTS[exercise_id] = {name: source}``: each source redefines the exercise's function
or class in a copy of the solution notebook's namespace (see ``mutants.py``); names
starting with ``delegates`` hand the piece to a ready-made implementation and must get no
points. ``CORRECT`` holds legitimate alternatives, which must keep full marks.
"""


def _walk(params_loop, children_loop=None, prefix_join='f"{prefix}.{name}" if prefix else name'):
    children_loop = children_loop or (
        "for name, child in mod._modules.items():\n"
        "            if child is not None:\n"
        f"                yield from walk(child, {prefix_join})"
    )
    return f"""
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            {params_loop}
        {children_loop}

    yield from walk(module, prefix)
"""


_OWN = (
    "if param is None or id(param) in seen:\n"
    "                continue\n"
    "            seen.add(id(param))\n"
    '            yield (f"{prefix}.{name}" if prefix else name), param'
)

NAMED_PARAMETERS = {
    "frozen_parameters_skipped": _walk(
        "if param is None or not param.requires_grad or id(param) in seen:\n"
        "                continue\n"
        "            seen.add(id(param))\n"
        '            yield (f"{prefix}.{name}" if prefix else name), param'
    ),
    "direct_children_only": _walk(
        _OWN,
        "for name, child in mod._modules.items():\n"
        "            if child is not None and mod is module:\n"
        "                for n, p in child._parameters.items():\n"
        "                    if p is not None:\n"
        '                        yield f"{name}.{n}", p',
    ),
    "shared_parameters_twice": _walk(
        "if param is None:\n"
        "                continue\n"
        '            yield (f"{prefix}.{name}" if prefix else name), param'
    ),
    "prefix_without_a_dot": _walk(
        "if param is None or id(param) in seen:\n"
        "                continue\n"
        "            seen.add(id(param))\n"
        "            yield prefix + name, param",
        prefix_join="prefix + name",
    ),
    "none_not_skipped": _walk(
        "if id(param) in seen:\n"
        "                continue\n"
        "            seen.add(id(param))\n"
        '            yield (f"{prefix}.{name}" if prefix else name), param'
    ),
    "yields_copies": _walk(
        "if param is None or id(param) in seen:\n"
        "                continue\n"
        "            seen.add(id(param))\n"
        '            yield (f"{prefix}.{name}" if prefix else name), nn.Parameter(param.detach())'
    ),
    "children_before_own": """
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, prefix):
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, f"{prefix}.{name}" if prefix else name)
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{prefix}.{name}" if prefix else name), param

    yield from walk(module, prefix)
""",
    "breadth_first": """
def named_parameters(module, prefix=""):
    seen, queue = set(), [(prefix, module)]
    while queue:
        pre, mod = queue.pop(0)
        for name, param in mod._parameters.items():
            if param is not None and id(param) not in seen:
                seen.add(id(param))
                yield (f"{pre}.{name}" if pre else name), param
        for name, child in mod._modules.items():
            if child is not None:
                queue.append((f"{pre}.{name}" if pre else name, child))
""",
    "buffers_yielded_too": _walk(
        _OWN,
        "for name, buf in mod._buffers.items():\n"
        "            if buf is not None:\n"
        '                yield (f"{prefix}.{name}" if prefix else name), buf\n'
        "        for name, child in mod._modules.items():\n"
        "            if child is not None:\n"
        '                yield from walk(child, f"{prefix}.{name}" if prefix else name)',
    ),
    "delegates_to_the_module": """
def named_parameters(module, prefix=""):
    yield from module.named_parameters(prefix)
""",
    "delegates_to_state_dict": """
def named_parameters(module, prefix=""):
    params = {id(p) for p in module.parameters()}
    for name, value in module.state_dict().items():
        if id(value) in params:
            yield (f"{prefix}.{name}" if prefix else name), value
""",
}


def _linear(
    init,
    forward="out = x @ self.weight.T\n        return out if self.bias is None else out + self.bias",
):
    return f"""
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        {init}

    def forward(self, x):
        {forward}
"""


_INIT = """k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)"""

LINEAR = {
    "weight_in_by_out": _linear(
        _INIT.replace(
            "minitorch.empty(out_features, in_features)",
            "minitorch.empty(in_features, out_features)",
        ),
        "out = x @ self.weight\n        return out if self.bias is None else out + self.bias",
    ),
    "randn_init": _linear(
        """self.weight = nn.Parameter(minitorch.randn(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(minitorch.randn(out_features))
        else:
            self.register_parameter("bias", None)"""
    ),
    "bound_from_fan_out": _linear(
        _INIT.replace("math.sqrt(in_features)", "math.sqrt(out_features)")
    ),
    "bias_starts_at_zero": _linear(
        _INIT.replace(
            "self.bias = nn.Parameter(minitorch.empty(out_features))\n"
            "            nn.init.uniform_(self.bias, -k, k)",
            "self.bias = nn.Parameter(minitorch.zeros(out_features))",
        )
    ),
    "numpy_random_numbers": _linear(
        """import numpy as np
        k = 1 / math.sqrt(in_features)
        w = np.random.uniform(-k, k, size=(out_features, in_features)).astype(np.float32)
        self.weight = nn.Parameter(minitorch.from_numpy(w))
        if bias:
            b = np.random.uniform(-k, k, size=out_features).astype(np.float32)
            self.bias = nn.Parameter(minitorch.from_numpy(b))
        else:
            self.register_parameter("bias", None)"""
    ),
    "bias_left_out_of_forward": _linear(_INIT, "return x @ self.weight.T"),
    "plain_tensors": _linear(
        _INIT.replace(
            "nn.Parameter(minitorch.empty(out_features, in_features))",
            "minitorch.empty(out_features, in_features)",
        )
    ),
    "bias_false_ignored": _linear(
        """k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        self.bias = nn.Parameter(minitorch.empty(out_features))
        nn.init.uniform_(self.bias, -k, k)"""
    ),
    "delegates_to_f_linear": _linear(
        _INIT, "return minitorch.nn.functional.linear(x, self.weight, self.bias)"
    ),
    "delegates_by_subclass": """
class Linear(nn.Linear):
    pass
""",
    "delegates_by_rebinding_forward": """
import minitorch.nn.functional as F

class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        """
    + _INIT
    + """

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)
""",
}

CROSS_ENTROPY = {
    "no_max_shift": """
def cross_entropy(logits, target):
    log_sum_exp = logits.exp().sum(dim=1).log()
    picked = logits[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
    "sum_not_mean": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).sum()
""",
    "target_not_subtracted": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    return shifted.exp().sum(dim=1).log().mean()
""",
    "wrong_axis": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=0, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=0).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp.mean() - picked.mean())
""",
    "one_global_max": """
def cross_entropy(logits, target):
    shifted = logits - logits.max().detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
    "through_numpy": """
import numpy as np

def cross_entropy(logits, target):
    z = logits.detach().numpy().astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    picked = z[np.arange(len(z)), target.numpy()]
    return minitorch.tensor(float((lse - picked).mean()))
""",
    "max_only_for_the_sum": """
def cross_entropy(logits, target):
    m = logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = (logits - m).exp().sum(dim=1).log()
    picked = logits[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
    "delegates_to_f_cross_entropy": """
import minitorch.nn.functional as F

def cross_entropy(logits, target):
    return F.cross_entropy(logits, target)
""",
    "delegates_to_log_softmax": """
def cross_entropy(logits, target):
    logp = logits.log_softmax(dim=1)
    return -logp[minitorch.arange(logits.shape[0]), target].mean()
""",
}


def _sgd(body):
    return f"""
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        with minitorch.no_grad():
            {body}
"""


_SGD_LOOP = """for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad"""

SGD = {
    "adds_the_gradient": _sgd(
        _SGD_LOOP
        + """
                    p.add_(lr * g)"""
    ),
    "buffer_aliases_the_gradient": _sgd(
        _SGD_LOOP
        + """
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = g
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(g)
                        g = state["momentum_buffer"]
                    p.sub_(lr * g)"""
    ),
    "defaults_instead_of_the_group": _sgd("""lr = self.defaults["lr"]
            momentum = self.defaults["momentum"]
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = g.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(g)
                        g = state["momentum_buffer"]
                    p.sub_(lr * g)"""),
    "lr_folded_into_the_buffer": _sgd(
        _SGD_LOOP
        + """
                    state = self.state.setdefault(p, {})
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = (lr * g).clone()
                    else:
                        state["momentum_buffer"].mul_(momentum).add_(lr * g)
                    p.sub_(state["momentum_buffer"])"""
    ),
    "dampened_momentum": _sgd(
        _SGD_LOOP
        + """
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = g.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_((1 - momentum) * g)
                        g = state["momentum_buffer"]
                    p.sub_(lr * g)"""
    ),
    "buffers_in_a_private_dict": """
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))
        self.buffers = {}

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    if momentum:
                        if p not in self.buffers:
                            self.buffers[p] = g.clone()
                        else:
                            self.buffers[p].mul_(momentum).add_(g)
                        g = self.buffers[p]
                    p.sub_(lr * g)
""",
    "parameter_rebound": """
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                for i, p in enumerate(group["params"]):
                    if p.grad is not None:
                        group["params"][i] = p - group["lr"] * p.grad
""",
    "none_grads_not_skipped": _sgd("""for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    g = p.grad if p.grad is not None else minitorch.zeros_like(p)
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = g.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(g)
                        g = state["momentum_buffer"]
                    p.sub_(lr * g)"""),
    "delegates_to_optim_sgd": """
from minitorch import optim

class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        optim.SGD.step(self)
""",
    "delegates_by_subclass": """
from minitorch import optim

class SGD(optim.SGD):
    pass
""",
}


def _adam(body, init=""):
    return f"""
class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))
        {init or "pass"}

    def step(self):
        with minitorch.no_grad():
            {body}
"""


def _adam_loop(
    read='lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]',
    count='state["step"] += 1\n                    t = state["step"]',
    update="p.sub_(lr * m_hat / (v_hat.sqrt() + eps))",
    bias="m_hat = m / (1 - beta1**t)\n                    v_hat = v / (1 - beta2**t)",
    prelude="",
):
    return f"""{prelude}for group in self.param_groups:
                {read}
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    state = self.state.setdefault(p, {{}})
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = minitorch.zeros_like(p)
                        state["exp_avg_sq"] = minitorch.zeros_like(p)
                    {count}
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    {bias}
                    {update}"""


ADAM = {
    "no_bias_correction": _adam(_adam_loop(bias="m_hat, v_hat = m, v")),
    "one_global_step_count": _adam(
        _adam_loop(
            prelude="self.t = getattr(self, 't', 0) + 1\n            ",
            count='state["step"] = self.t\n                    t = self.t',
        )
    ),
    "eps_inside_the_root": _adam(_adam_loop(update="p.sub_(lr * m_hat / (v_hat + eps).sqrt())")),
    "defaults_instead_of_the_group": _adam(
        _adam_loop(
            read='lr, eps = self.defaults["lr"], self.defaults["eps"]\n'
            '                beta1, beta2 = self.defaults["betas"]'
        )
    ),
    "bias_correction_off_by_one": _adam(
        _adam_loop(
            bias="m_hat = m / (1 - beta1 ** (t + 1))\n"
            "                    v_hat = v / (1 - beta2 ** (t + 1))"
        )
    ),
    "betas_swapped": _adam(
        _adam_loop(read='lr, (beta2, beta1), eps = group["lr"], group["betas"], group["eps"]')
    ),
    "step_never_counted": _adam(_adam_loop(count="t = 1")),
    "gradient_not_squared": _adam(
        _adam_loop(update="p.sub_(lr * m_hat / (v_hat.abs().sqrt() + eps))").replace(
            "v.mul_(beta2).add_((1 - beta2) * g * g)", "v.mul_(beta2).add_((1 - beta2) * g.abs())"
        )
    ),
    "delegates_to_optim_adam": """
from minitorch import optim

class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def step(self):
        return optim.Adam.step(self)
""",
}

_CLIP_TAIL = """
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
"""

CLIP = {
    "each_gradient_on_its_own": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = 0.0
    with minitorch.no_grad():
        for g in grads:
            norm = (g * g).sum().sqrt().item()
            total += norm**2
            g.mul_(min(max_norm / (norm + 1e-6), 1.0))
    return total**0.5
""",
    "norm_after_clipping": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
        return sum((g * g).sum() for g in grads).sqrt()
""",
    "scales_up_too": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        for g in grads:
            g.mul_(max_norm / (total.item() + 1e-6))
    return total
""",
    "generator_read_twice": """
def clip_grad_norm_(parameters, max_norm):
    with minitorch.no_grad():
        total = sum((p.grad * p.grad).sum() for p in parameters if p.grad is not None)
        total = total.sqrt() if hasattr(total, "sqrt") else minitorch.tensor(float(total) ** 0.5)
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for p in parameters:
            if p.grad is not None:
                p.grad.mul_(coef)
    return total
""",
    "nan_hidden": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(1.0, max_norm / (total.item() + 1e-6))
        for g in grads:
            g.mul_(coef)
    return total
""",
    "l1_norm": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    with minitorch.no_grad():
        total = sum(g.abs().sum() for g in grads)
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "new_gradients_not_in_place": """
def clip_grad_norm_(parameters, max_norm):
    params = [p for p in parameters if p.grad is not None]
    with minitorch.no_grad():
        total = sum((p.grad * p.grad).sum() for p in params).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for p in params:
            g = p.grad * coef
    return total
""",
    "none_grads_counted": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters]
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "delegates_to_nn_utils": """
from minitorch.nn.utils import clip_grad_norm_
""",
}


def _loader(
    iter_body,
    len_body="full, rest = divmod(len(self.dataset), self.batch_size)\n"
    "        return full + (1 if rest and not self.drop_last else 0)",
    init="",
):
    return f"""
class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last
        {init or "pass"}

    def __len__(self):
        {len_body}

    def __iter__(self):
        {iter_body}
"""


_ITER = """n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))"""

LOADER = {
    "last_batch_always_dropped": _loader(
        _ITER.replace(
            "if len(indices) < self.batch_size and self.drop_last:",
            "if len(indices) < self.batch_size:",
        )
    ),
    "len_rounds_down": _loader(_ITER, "return len(self.dataset) // self.batch_size"),
    "len_ignores_drop_last": _loader(_ITER, "return -(-len(self.dataset) // self.batch_size)"),
    "one_permutation_for_every_epoch": _loader(
        _ITER.replace(
            "order = minitorch.randperm(n, generator=self.generator).tolist()", "order = self.order"
        ),
        init="self.order = minitorch.randperm(len(dataset), generator=generator).tolist()",
    ),
    "generator_ignored": _loader(
        _ITER.replace("minitorch.randperm(n, generator=self.generator)", "minitorch.randperm(n)")
    ),
    "sampled_with_replacement": _loader(
        _ITER.replace(
            "order = minitorch.randperm(n, generator=self.generator).tolist()",
            "order = minitorch.randint(0, n, (n,), generator=self.generator).tolist()",
        )
    ),
    "samples_not_collated": _loader(
        _ITER.replace(
            "yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))", "yield samples"
        )
    ),
    "numpy_shuffle": _loader(
        _ITER.replace(
            "order = minitorch.randperm(n, generator=self.generator).tolist()",
            "import numpy as np\n            order = np.random.permutation(n).tolist()",
        )
    ),
    "delegates_to_minitorch": """
from minitorch.data import DataLoader
""",
    "delegates_to_default_collate": _loader(
        _ITER.replace(
            "yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))",
            "from minitorch.data import default_collate\n"
            "            yield default_collate(samples)",
        )
    ),
}


def _train(body):
    return f"""
def train(model, loader, optimizer, loss_fn, epochs):
    history = []
    {body}
    return history
"""


TRAIN = {
    "never_calls_train": _train("""for _ in range(epochs):
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "train_mode_set_once": _train("""model.train()
    for _ in range(epochs):
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "loss_tensors_added_up": _train("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total = total + loss
            batches += 1
        history.append((total / batches).item())"""),
    "loss_tensors_kept_in_a_list": _train("""for _ in range(epochs):
        model.train()
        losses = []
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss)
        history.append(sum(l.item() for l in losses) / len(losses))"""),
    "last_batch_loss": _train("""for _ in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        history.append(loss.item())"""),
    "zero_grad_after_backward": _train("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.zero_grad()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "no_zero_grad": _train("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "step_before_backward": _train("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            optimizer.step()
            loss.backward()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "sum_not_mean": _train("""for _ in range(epochs):
        model.train()
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        history.append(total)"""),
    "tensors_returned": _train("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.detach()
            batches += 1
        history.append(total / batches)"""),
}

MUTANTS = {
    "03.1": NAMED_PARAMETERS,
    "03.2": LINEAR,
    "03.3": CROSS_ENTROPY,
    "03.4": SGD,
    "03.5": ADAM,
    "03.6": CLIP,
    "03.7": LOADER,
    "03.8": TRAIN,
}

CORRECT = {
    "03.3": {
        "shift_not_detached": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
    },
    "03.4": {
        "buffer_started_at_zero": _sgd(
            _SGD_LOOP
            + """
                    if momentum:
                        state = self.state.setdefault(p, {})
                        buf = state.setdefault("momentum_buffer", minitorch.zeros_like(p))
                        buf.mul_(momentum).add_(g)
                        g = buf
                    p.sub_(lr * g)"""
        ),
    },
}


# --- a second, independent round of wrong answers (edge sizes, aliasing, state, order) ---
_NEW_NAMED_PARAMETERS = {
    "seen_set_per_module": """
def named_parameters(module, prefix=""):
    def walk(mod, prefix):
        seen = set()
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{prefix}.{name}" if prefix else name), param
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, f"{prefix}.{name}" if prefix else name)

    yield from walk(module, prefix)
""",
    "dedup_by_name": """
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            full = f"{prefix}.{name}" if prefix else name
            if param is None or full in seen:
                continue
            seen.add(full)
            yield full, param
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, f"{prefix}.{name}" if prefix else name)

    yield from walk(module, prefix)
""",
    "last_name_wins": """
def named_parameters(module, prefix=""):
    found = {}

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            if param is not None:
                found[id(param)] = ((f"{prefix}.{name}" if prefix else name), param)
        for name, child in mod._modules.items():
            if child is not None:
                walk(child, f"{prefix}.{name}" if prefix else name)

    walk(module, prefix)
    yield from found.values()
""",
    "stack_pops_children_in_reverse": """
def named_parameters(module, prefix=""):
    seen = set()
    stack = [(module, prefix)]
    while stack:
        mod, pre = stack.pop()
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{pre}.{name}" if pre else name), param
        for name, child in mod._modules.items():
            if child is not None:
                stack.append((child, f"{pre}.{name}" if pre else name))
""",
    "names_sorted": """
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, prefix):
        for name, param in sorted(mod._parameters.items()):
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{prefix}.{name}" if prefix else name), param
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, f"{prefix}.{name}" if prefix else name)

    yield from walk(module, prefix)
""",
    "prefix_only_on_children": """
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, pre, top):
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (name if top else f"{pre}.{name}"), param
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, f"{pre}.{name}" if pre else name, False)

    yield from walk(module, prefix, True)
""",
    "delegates_via_named_modules": """
def named_parameters(module, prefix=""):
    seen = set()
    for mod_name, mod in module.named_modules(prefix=prefix):
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{mod_name}.{name}" if mod_name else name), param
""",
}

_NEW_LINEAR = {
    "bound_without_sqrt": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / in_features
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
    "uniform_from_zero": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, 0, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, 0, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
    "bias_drawn_before_weight": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
    "transposes_the_input": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = (self.weight @ x.T).T
        return out if self.bias is None else out + self.bias
""",
    "bias_none_not_registered": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            object.__setattr__(self, "bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
    "weight_detached_in_forward": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.detach().T
        return out if self.bias is None else out + self.bias
""",
    "float64_parameters": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        f64 = minitorch.float64
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features, dtype=f64))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features, dtype=minitorch.float64))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x.double() @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
}

_NEW_CROSS_ENTROPY = {
    "log_of_stable_softmax": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    e = shifted.exp()
    probs = e / e.sum(dim=1, keepdim=True)
    return -probs[minitorch.arange(logits.shape[0]), target].log().mean()
""",
    "divides_by_classes": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).sum() / logits.shape[1]
""",
    "max_without_keepdim": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
    "index_order_swapped": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    picked = shifted[target, minitorch.arange(logits.shape[0])]
    return (log_sum_exp - picked).mean()
""",
    "log_of_library_softmax": """
import minitorch.nn.functional as F


def cross_entropy(logits, target):
    probs = F.softmax(logits, dim=1)
    return -probs[minitorch.arange(logits.shape[0]), target].log().mean()
""",
    "first_column_as_target": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    return (log_sum_exp - shifted[:, 0]).mean()
""",
    "delegates_via_nll_of_log_softmax": """
import minitorch.nn.functional as F


def cross_entropy(logits, target):
    return F.nll_loss(F.log_softmax(logits, dim=1), target)
""",
}

_NEW_SGD_HEAD = """
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        with minitorch.no_grad():
"""

_NEW_SGD = {
    "scales_the_gradient_in_place": _NEW_SGD_HEAD
    + """
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    direction = p.grad
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = direction.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(direction)
                        direction = state["momentum_buffer"]
                    p.sub_(direction.mul_(lr))
""",
    "first_step_counted_twice": _NEW_SGD_HEAD
    + """
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    direction = p.grad
                    if momentum:
                        state = self.state.setdefault(p, {})
                        buf = state.setdefault("momentum_buffer", direction.clone())
                        buf.mul_(momentum).add_(direction)
                        direction = buf
                    p.sub_(lr * direction)
""",
    "nesterov_by_accident": _NEW_SGD_HEAD
    + """
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    direction = p.grad
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = direction.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(direction)
                        direction = direction + momentum * state["momentum_buffer"]
                    p.sub_(lr * direction)
""",
    "state_keyed_by_position": _NEW_SGD_HEAD
    + """
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        continue
                    direction = p.grad
                    if momentum:
                        state = self.state.setdefault(i, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = direction.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(direction)
                        direction = state["momentum_buffer"]
                    p.sub_(lr * direction)
""",
    "first_group_only": _NEW_SGD_HEAD
    + """
            group = self.param_groups[0]
            lr, momentum = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                direction = p.grad
                if momentum:
                    state = self.state.setdefault(p, {})
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = direction.clone()
                    else:
                        state["momentum_buffer"].mul_(momentum).add_(direction)
                    direction = state["momentum_buffer"]
                p.sub_(lr * direction)
""",
    "momentum_of_the_first_group_everywhere": _NEW_SGD_HEAD
    + """
            momentum = self.param_groups[0]["momentum"]
            for group in self.param_groups:
                lr = group["lr"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    direction = p.grad
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = direction.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(direction)
                        direction = state["momentum_buffer"]
                    p.sub_(lr * direction)
""",
}

_NEW_ADAM_HEAD = """
class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
"""


def _adam_new(body):
    return _NEW_ADAM_HEAD + body


_ADAM_STATE = """
                    state = self.state.setdefault(p, {})
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = minitorch.zeros_like(p)
                        state["exp_avg_sq"] = minitorch.zeros_like(p)
                    state["step"] += 1
                    t = state["step"]
                    m, v = state["exp_avg"], state["exp_avg_sq"]
"""

_NEW_ADAM = {
    "eps_scaled_by_the_correction": _adam_new(
        _ADAM_STATE
        + """
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    denom = (v.sqrt() + eps) / math.sqrt(1 - beta2**t)
                    p.sub_(lr / (1 - beta1**t) * m / denom)
"""
    ),
    "bias_correction_in_place": _adam_new(
        _ADAM_STATE
        + """
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    m.div_(1 - beta1**t)
                    v.div_(1 - beta2**t)
                    p.sub_(lr * m / (v.sqrt() + eps))
"""
    ),
    "state_recreated_every_step": _adam_new(
        """
                    state = self.state[p] = {}
                    state["step"] = 1
                    state["exp_avg"] = minitorch.zeros_like(p)
                    state["exp_avg_sq"] = minitorch.zeros_like(p)
                    t = state["step"]
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    p.sub_(lr * (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps))
"""
    ),
    "second_moment_of_the_average": _adam_new(
        _ADAM_STATE
        + """
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * m * m)
                    p.sub_(lr * (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps))
"""
    ),
    "average_weights_swapped": _adam_new(
        _ADAM_STATE
        + """
                    m.mul_(1 - beta1).add_(beta1 * g)
                    v.mul_(1 - beta2).add_(beta2 * g * g)
                    p.sub_(lr * (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps))
"""
    ),
    "correction_with_the_global_step": _NEW_ADAM_HEAD.replace(
        "            for group in self.param_groups:",
        "            self.__dict__['_t'] = self.__dict__.get('_t', 0) + 1\n"
        "            for group in self.param_groups:",
    )
    + _ADAM_STATE
    + """
                    t = self._t
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    p.sub_(lr * (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps))
""",
}

_NEW_CLIP = {
    "sum_of_norms": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum().sqrt() for g in grads)
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "no_square_root": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads)
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "returns_the_coefficient": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return coef
""",
    "nan_returned_but_not_spread": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        if math.isnan(total.item()):
            return total
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "rms_not_norm": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        count = sum(g.numel() for g in grads)
        total = (sum((g * g).sum() for g in grads) / count).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    "max_abs_not_norm": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = max(g.abs().max().item() for g in grads)
        coef = min(max_norm / (total + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return minitorch.tensor(total)
""",
    "no_grads_returns_none": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return None
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
}

_NEW_LOADER_HEAD = """
class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last
"""

_GOOD_LEN = """
    def __len__(self):
        full, rest = divmod(len(self.dataset), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)
"""

_GOOD_ITER = """
    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
"""

_NEW_LOADER = {
    "drop_last_drops_a_full_batch": _NEW_LOADER_HEAD
    + _GOOD_LEN
    + """
    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        starts = list(range(0, n, self.batch_size))
        if self.drop_last:
            starts = starts[:-1]
        for start in starts:
            samples = [self.dataset[i] for i in order[start : start + self.batch_size]]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
    "len_plus_one_when_divisible": _NEW_LOADER_HEAD
    + """
    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else n // self.batch_size + 1
"""
    + _GOOD_ITER,
    "shuffled_order_not_used": _NEW_LOADER_HEAD
    + _GOOD_LEN
    + """
    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = list(range(start, min(start + self.batch_size, n)))
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
    "fresh_generator_every_epoch": _NEW_LOADER_HEAD
    + _GOOD_LEN
    + """
    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=minitorch.Generator(0)).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
    "len_by_running_an_epoch": _NEW_LOADER_HEAD
    + """
    def __len__(self):
        return sum(1 for _ in self)
"""
    + _GOOD_ITER,
    "assumes_two_parts": _NEW_LOADER_HEAD
    + _GOOD_LEN
    + """
    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield (
                minitorch.stack([s[0] for s in samples]),
                minitorch.stack([s[1] for s in samples]),
            )
""",
    "python_random_shuffle": _NEW_LOADER_HEAD
    + _GOOD_LEN
    + """
    def __iter__(self):
        import random

        n = len(self.dataset)
        order = list(range(n))
        if self.shuffle:
            random.shuffle(order)
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
}


def _train_new(body):
    return f"""
def train(model, loader, optimizer, loss_fn, epochs):
    history = []
    {body}
    return history
"""


_NEW_TRAIN = {
    "total_not_reset_each_epoch": _train_new("""total, batches = 0.0, 0
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "one_epoch_short": _train_new("""for _ in range(1, epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    "forward_twice_per_batch": _train_new("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss_fn(model(x), y).item()
            batches += 1
        history.append(total / batches)"""),
    "sample_weighted_mean": _train_new("""for _ in range(epochs):
        model.train()
        total, count = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * x.shape[0]
            count += x.shape[0]
        history.append(total / count)"""),
    "loss_measured_before_the_step_of_the_next": _train_new("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            total += loss.item()
            batches += 1
        optimizer.step()
        history.append(total / batches)"""),
}

for _exercise, _new in {
    "03.1": _NEW_NAMED_PARAMETERS,
    "03.2": _NEW_LINEAR,
    "03.3": _NEW_CROSS_ENTROPY,
    "03.4": _NEW_SGD,
    "03.5": _NEW_ADAM,
    "03.6": _NEW_CLIP,
    "03.7": _NEW_LOADER,
    "03.8": _NEW_TRAIN,
}.items():
    assert not set(_new) & set(MUTANTS[_exercise]), _exercise
    MUTANTS[_exercise].update(_new)

CORRECT["03.1"] = {
    "explicit_stack_in_order": """
def named_parameters(module, prefix=""):
    seen = set()
    stack = [(module, prefix)]
    while stack:
        mod, pre = stack.pop()
        for name, param in mod._parameters.items():
            if param is None or id(param) in seen:
                continue
            seen.add(id(param))
            yield (f"{pre}.{name}" if pre else name), param
        children = [(c, f"{pre}.{n}" if pre else n) for n, c in mod._modules.items()]
        children = [(c, name) for c, name in children if c is not None]
        stack.extend(reversed(children))
""",
    "modules_visited_once": """
def named_parameters(module, prefix=""):
    seen, visited = set(), set()

    def walk(mod, prefix):
        if id(mod) in visited:
            return
        visited.add(id(mod))
        for name, param in mod._parameters.items():
            if param is not None and id(param) not in seen:
                seen.add(id(param))
                yield ".".join(filter(None, [prefix, name])), param
        for name, child in mod._modules.items():
            if child is not None:
                yield from walk(child, ".".join(filter(None, [prefix, name])))

    yield from walk(module, prefix)
""",
}
CORRECT["03.3"]["one_hot_mask_pick"] = """
def cross_entropy(logits, target):
    n, c = logits.shape
    m = logits.max(dim=1, keepdim=True).values.detach()
    shifted = logits - m
    one_hot = (minitorch.arange(c).reshape(1, c) == target.reshape(n, 1)).float()
    picked = (shifted * one_hot).sum(dim=1)
    return (shifted.exp().sum(dim=1).log() - picked).mean()
"""
CORRECT["03.5"] = {
    "pytorch_step_size_form": _adam_new(
        _ADAM_STATE
        + """
                    m.mul_(beta1).add_(g * (1 - beta1))
                    v.mul_(beta2).add_((g**2) * (1 - beta2))
                    step_size = lr / (1 - beta1**t)
                    denom = v.sqrt() / math.sqrt(1 - beta2**t) + eps
                    p.sub_(step_size * m / denom)
"""
    ),
}
CORRECT["03.7"] = {
    "batches_as_lists_and_ceil_len": _NEW_LOADER_HEAD
    + """
    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = list(range(n))
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        batch = []
        for i in order:
            batch.append(self.dataset[i])
            if len(batch) == self.batch_size:
                yield [minitorch.stack([s[k] for s in batch]) for k in range(len(batch[0]))]
                batch = []
        if batch and not self.drop_last:
            yield [minitorch.stack([s[k] for s in batch]) for k in range(len(batch[0]))]
""",
}
CORRECT["03.8"] = {
    "divides_by_len_loader": _train_new("""for _ in range(epochs):
        model.train()
        losses = []
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        history.append(sum(losses) / len(losses))"""),
}

# --- delegation through a Function class, a module, or a subclass of a sibling -------------
MUTANTS["03.2"]["delegates_via_the_linear_function"] = """
import minitorch.nn.functional as F


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.Linear.apply(x, self.weight, self.bias)
"""
MUTANTS["03.3"]["delegates_via_the_log_softmax_function"] = """
def cross_entropy(logits, target):
    log_probs = minitorch.ops.LogSoftmax.apply(logits, 1)
    return -log_probs[minitorch.arange(logits.shape[0]), target].mean()
"""
MUTANTS["03.3"]["delegates_via_the_log_softmax_module"] = """
def cross_entropy(logits, target):
    log_probs = nn.LogSoftmax(dim=1)(logits)
    return -log_probs[minitorch.arange(logits.shape[0]), target].mean()
"""
MUTANTS["03.5"]["delegates_by_subclassing_adamw"] = """
from minitorch import optim


class Adam(optim.AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=0.0)
"""
CORRECT["03.1"]["named_children_recursion"] = """
def named_parameters(module, prefix=""):
    seen = set()
    for name, param in module._parameters.items():
        if param is not None and id(param) not in seen:
            seen.add(id(param))
            yield (prefix + "." + name if prefix else name), param
    for child_name, child in module.named_children():
        sub = prefix + "." + child_name if prefix else child_name
        for name, param in named_parameters(child, sub):
            if id(param) not in seen:
                seen.add(id(param))
                yield name, param
"""

# --- more legitimate alternatives -------------------------------------------------------------
CORRECT["03.2"] = {
    "pytorch_kaiming_uniform_for_the_weight": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # PyTorch's own reset_parameters
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            bound = 1 / math.sqrt(in_features)
            nn.init.uniform_(self.bias, -bound, bound)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.transpose(0, 1)
        if self.bias is not None:
            y = y + self.bias
        return y
""",
}
CORRECT["03.6"] = {
    "norm_as_a_python_float": """
def clip_grad_norm_(parameters, max_norm):
    grads = []
    for p in parameters:
        if p.grad is not None:
            grads.append(p.grad)
    with minitorch.no_grad():
        total = math.sqrt(sum((g * g).sum().item() for g in grads))
        coef = min(max_norm / (total + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
}
CORRECT["03.8"]["train_mode_before_every_batch"] = _train_new("""for epoch in range(epochs):
        batch_losses = []
        for x, y in loader:
            model.train()
            optimizer.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            optimizer.step()
            batch_losses.append(float(loss.item()))
        history.append(sum(batch_losses) / len(batch_losses))""")


# --- A third round (red team): state kept on a class, in a default argument or a module
# global (a second call or a second instance goes wrong), the caller's logits, list or
# model changed in place, delegation in disguise, an unused import of a package class ---
_ROUND_3 = {
    "03.1": {
        "seen_set_as_a_default_argument": """
def named_parameters(module, prefix="", seen=set()):
    for name, param in module._parameters.items():
        if param is None or id(param) in seen:
            continue
        seen.add(id(param))
        yield (f"{prefix}.{name}" if prefix else name), param
    for name, child in module._modules.items():
        if child is not None:
            yield from named_parameters(child, f"{prefix}.{name}" if prefix else name, seen)
""",
        "none_slots_deleted_from_the_module": """
def named_parameters(module, prefix=""):
    seen = set()

    def walk(mod, prefix):
        for name in [n for n, p in mod._parameters.items() if p is None]:
            del mod._parameters[name]
        for name in [n for n, c in mod._modules.items() if c is None]:
            del mod._modules[name]
        for name, param in mod._parameters.items():
            if id(param) not in seen:
                seen.add(id(param))
                yield (f"{prefix}.{name}" if prefix else name), param
        for name, child in mod._modules.items():
            yield from walk(child, f"{prefix}.{name}" if prefix else name)

    yield from walk(module, prefix)
""",
    },
    "03.2": {
        "bound_kept_on_the_class": """
class Linear(nn.Module):
    bound = None

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        if Linear.bound is None:
            Linear.bound = 1 / math.sqrt(in_features)
        k = Linear.bound
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
        "delegates_init_to_the_default_layer_init": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        nn.init.default_layer_init_(self.weight, self.bias)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
        "delegates_init_to_the_package_reset_parameters": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        nn.Linear.reset_parameters(self)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
        "delegates_to_a_package_layer_inside": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        inner = nn.Linear(in_features, out_features, bias=bias)
        self.weight = inner.weight
        if bias:
            self.bias = inner.bias
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
    },
    "03.3": {
        "shifted_in_place_under_no_grad": """
def cross_entropy(logits, target):
    with minitorch.no_grad():
        logits.sub_(logits.max(dim=1, keepdim=True).values)
    log_sum_exp = logits.exp().sum(dim=1).log()
    picked = logits[minitorch.arange(logits.shape[0]), target]
    return (log_sum_exp - picked).mean()
""",
        "rows_cached_in_a_global": """
_rows = []


def cross_entropy(logits, target):
    if not _rows:
        _rows.append(minitorch.arange(logits.shape[0]))
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_sum_exp = shifted.exp().sum(dim=1).log()
    return (log_sum_exp - shifted[_rows[0], target]).mean()
""",
        "delegates_to_the_nll_loss_module": """
def cross_entropy(logits, target):
    shifted = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    return nn.NLLLoss()(log_probs, target)
""",
        "delegates_to_the_cross_entropy_function_class": """
import minitorch.nn.functional as F


def cross_entropy(logits, target):
    return F.CrossEntropy.apply(logits, target, None, -100, "mean", 0.0)
""",
    },
    "03.4": {
        "buffers_keyed_by_position_on_the_class": """
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    buffers = {}

    def step(self):
        with minitorch.no_grad():
            for k, group in enumerate(self.param_groups):
                lr, momentum = group["lr"], group["momentum"]
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        continue
                    g = p.grad
                    if momentum:
                        key = (k, i)
                        if key not in SGD.buffers:
                            SGD.buffers[key] = g.clone()
                        else:
                            SGD.buffers[key].mul_(momentum).add_(g)
                        self.state.setdefault(p, {})["momentum_buffer"] = SGD.buffers[key]
                        g = SGD.buffers[key]
                    p.sub_(lr * g)
""",
        "delegates_momentum_to_the_package_helper": """
from minitorch import optim

class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                grads = [p.grad for p in params]
                if group["momentum"]:
                    grads = optim.SGD._momentum(self, params, grads, group["momentum"], 0.0, False)
                for p, g in zip(params, grads):
                    p.sub_(group["lr"] * g)
""",
    },
    "03.5": {
        "step_count_kept_on_the_class": """
class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    steps = {}

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        continue
                    g = p.grad
                    state = self.state.setdefault(p, {})
                    if not state:
                        state["exp_avg"] = minitorch.zeros_like(p)
                        state["exp_avg_sq"] = minitorch.zeros_like(p)
                    Adam.steps[i] = Adam.steps.get(i, 0) + 1
                    t = state["step"] = Adam.steps[i]
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_((1 - beta1) * g)
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    m_hat = m / (1 - beta1**t)
                    v_hat = v / (1 - beta2**t)
                    p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
""",
    },
    "03.6": {
        "params_without_grads_removed_from_the_callers_list": """
def clip_grad_norm_(parameters, max_norm):
    if isinstance(parameters, list):
        parameters[:] = [p for p in parameters if p.grad is not None]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
    },
    "03.7": {
        "position_kept_on_the_loader": """
class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last

    def __len__(self):
        full, rest = divmod(len(self.dataset), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            self.order = minitorch.randperm(n, generator=self.generator).tolist()
        elif not hasattr(self, "order"):
            self.order = list(range(n))
        self.start = getattr(self, "start", 0)
        return self

    def __next__(self):
        n = len(self.dataset)
        if self.start >= n:
            raise StopIteration
        indices = self.order[self.start : self.start + self.batch_size]
        if len(indices) < self.batch_size and self.drop_last:
            raise StopIteration
        self.start += self.batch_size
        samples = [self.dataset[i] for i in indices]
        return tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
        "delegates_to_the_private_collate": """
from minitorch.data import collate

class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last

    def __len__(self):
        full, rest = divmod(len(self.dataset), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            yield tuple(collate._collate([self.dataset[i] for i in indices], "sample"))
""",
    },
    "03.8": {
        "history_as_a_default_argument": """
def train(model, loader, optimizer, loss_fn, epochs, history=[]):
    for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        history.append(total / batches)
    return history
""",
    },
}

_ROUND_3_CORRECT = {
    "03.1": {
        "list_built_then_returned": """
def named_parameters(module, prefix=""):
    found, seen = [], set()

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            if param is not None and all(param is not q for q in seen):
                seen.add(param)
                found.append((prefix + "." + name if prefix else name, param))
        for name, child in mod._modules.items():
            if child is not None:
                walk(child, prefix + "." + name if prefix else name)

    walk(module, prefix)
    return iter(found)
""",
    },
    "03.2": {
        "unused_import_of_the_package_linear": """
from minitorch.nn import Linear as ReferenceLinear  # noqa: F401


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(minitorch.empty(out_features, in_features))
        nn.init.uniform_(self.weight, -k, k)
        if bias:
            self.bias = nn.Parameter(minitorch.empty(out_features))
            nn.init.uniform_(self.bias, -k, k)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
""",
        "filled_before_wrapping_and_bias_reshaped": """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = in_features**-0.5
        weight = minitorch.empty(out_features, in_features)
        nn.init.uniform_(weight, -bound, bound)
        self.weight = nn.Parameter(weight)
        if bias:
            b = minitorch.empty(out_features)
            nn.init.uniform_(b, -bound, bound)
            self.bias = nn.Parameter(b)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = x.matmul(self.weight.transpose(-1, -2))
        if self.bias is not None:
            out = out + self.bias.reshape((1,) * (out.ndim - 1) + (-1,))
        return out
""",
    },
    "03.3": {
        "logsumexp_by_max_plus_log": """
def cross_entropy(logits, target):
    m = logits.max(dim=1).values.detach()
    lse = m + (logits - m.reshape(-1, 1)).exp().sum(dim=1).log()
    n = logits.shape[0]
    picked = logits[minitorch.arange(n), target]
    return (lse - picked).sum() / n
""",
    },
    "03.4": {
        "filtered_params_and_add_with_negative_lr": """
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                for p in filter(lambda q: q.grad is not None, group["params"]):
                    step = p.grad
                    if group["momentum"] != 0:
                        buf = self.state.setdefault(p, {}).get("momentum_buffer")
                        if buf is None:
                            buf = self.state[p]["momentum_buffer"] = p.grad.detach().clone()
                        else:
                            buf.mul_(group["momentum"]).add_(p.grad)
                        step = buf
                    p.add_(step * -group["lr"])
""",
    },
    "03.5": {
        "moments_updated_with_lerp_style_arithmetic": """
class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                lr, eps = group["lr"], group["eps"]
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state.setdefault(p, {})
                    if "step" not in st:
                        st["step"] = 0
                        st["exp_avg"] = minitorch.zeros_like(p)
                        st["exp_avg_sq"] = minitorch.zeros_like(p)
                    st["step"] += 1
                    g = p.grad
                    st["exp_avg"].add_((g - st["exp_avg"]) * (1 - beta1))
                    st["exp_avg_sq"].add_((g * g - st["exp_avg_sq"]) * (1 - beta2))
                    c1 = 1 - beta1 ** st["step"]
                    c2 = 1 - beta2 ** st["step"]
                    p.add_(-lr * (st["exp_avg"] / c1) / ((st["exp_avg_sq"] / c2).sqrt() + eps))
""",
    },
    "03.6": {
        "unused_import_of_the_package_version": """
from minitorch.nn.utils import clip_grad_norm_ as reference_clip  # noqa: F401


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return minitorch.tensor(0.0)
    with minitorch.no_grad():
        total = sum((g * g).sum() for g in grads).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total
""",
        "squares_summed_as_floats": """
def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    squares = 0.0
    for g in grads:
        squares += float((g.double() ** 2).sum().item())
    total = squares**0.5
    scale = max_norm / (total + 1e-6)
    if not scale >= 1.0:
        with minitorch.no_grad():
            for g in grads:
                g.mul_(scale)
    return minitorch.tensor(total)
""",
    },
    "03.7": {
        "unused_import_of_the_package_loader": """
from minitorch.data import DataLoader as ReferenceLoader  # noqa: F401

class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last

    def __len__(self):
        full, rest = divmod(len(self.dataset), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = minitorch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        for start in range(0, n, self.batch_size):
            indices = order[start : start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            samples = [self.dataset[i] for i in indices]
            yield tuple(minitorch.stack(list(parts)) for parts in zip(*samples))
""",
    },
    "03.8": {
        "batches_counted_with_enumerate": """
def train(model, loader, optimizer, loss_fn, epochs):
    means = []
    for epoch in range(epochs):
        model.train()
        running = 0.0
        count = 0
        for count, (inputs, targets) in enumerate(loader, start=1):
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            running += float(loss.detach().item())
        means.append(running / count)
    return means
""",
    },
}

for _table, _extra in ((MUTANTS, _ROUND_3), (CORRECT, _ROUND_3_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}


# --- A fourth round: the gradient tensors themselves. A clip that assigns new tensors to
# .grad, optimizers that scale .grad in place to make their step, and a loop that clears
# the gradients after the step, so that gradients already on the model leak into its
# first step ---
_ROUND_4 = {
    "03.4": {
        "plain_step_scales_the_gradient_in_place": _sgd(
            _SGD_LOOP
            + """
                    if momentum:
                        state = self.state.setdefault(p, {})
                        if "momentum_buffer" not in state:
                            state["momentum_buffer"] = g.clone()
                        else:
                            state["momentum_buffer"].mul_(momentum).add_(g)
                        p.sub_(lr * state["momentum_buffer"])
                    else:
                        p.sub_(g.mul_(lr))"""
        ),
    },
    "03.5": {
        "gradient_scaled_in_place_for_the_mean": """
class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def step(self):
        with minitorch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    state = self.state.setdefault(p, {})
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = minitorch.zeros_like(p)
                        state["exp_avg_sq"] = minitorch.zeros_like(p)
                    state["step"] += 1
                    t = state["step"]
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    v.mul_(beta2).add_((1 - beta2) * g * g)
                    m.mul_(beta1).add_(g.mul_(1 - beta1))
                    m_hat = m / (1 - beta1**t)
                    v_hat = v / (1 - beta2**t)
                    p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
""",
    },
    "03.6": {
        "new_gradient_tensors_assigned": """
def clip_grad_norm_(parameters, max_norm):
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return 0.0
    with minitorch.no_grad():
        total = sum((p.grad * p.grad).sum() for p in params).sqrt()
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for p in params:
            p.grad = p.grad * coef
    return total
""",
    },
    "03.8": {
        "zero_grad_after_the_step": _train_new("""for _ in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total += loss.item()
            batches += 1
        history.append(total / batches)"""),
    },
}

_ROUND_4_CORRECT = {
    "03.8": {
        "gradients_cleared_on_entry_and_after_each_step": """
def train(model, loader, optimizer, loss_fn, epochs):
    model.zero_grad()
    history = []
    for _ in range(epochs):
        model.train()
        losses = []
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            model.zero_grad()
            losses.append(loss.item())
        history.append(sum(losses) / len(losses))
    return history
""",
    },
}

for _table, _extra in ((MUTANTS, _ROUND_4), (CORRECT, _ROUND_4_CORRECT)):
    for _exercise_id, _bodies in _extra.items():
        _clash = _table.setdefault(_exercise_id, {}).keys() & _bodies.keys()
        assert not _clash, f"{_exercise_id}: mutant names used twice: {_clash}"
        _table[_exercise_id] = {**_table[_exercise_id], **_bodies}
