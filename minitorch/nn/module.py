"""``nn.Module``: registers parameters, buffers and submodules by attribute assignment.

Everything a training loop needs from a model (``parameters()`` for the optimizer,
``train()``/``eval()``, ``state_dict()`` for checkpoints, ``to(device)``) is a walk over
the tree of modules that these registrations build.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..autograd import no_grad
from ..checks import as_bool, as_callable, describe
from ..dtypes import float16, float32, float64
from ..hooks import RemovableHandle
from ..tensor import Tensor, parse_to
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _IncompatibleKeys(IncompatibleKeys):
    """``load_state_dict``'s result, printed as PyTorch prints it."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class of every layer and model. Subclasses define ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    # --- registration -------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() is called; "
                f"call super().__init__() first in {type(self).__name__}.__init__"
            )
        params, buffers, modules = self._parameters, self._buffers, self._modules
        if isinstance(value, Parameter):
            self._forget(name, keep=params)
            params[name] = value
        elif isinstance(value, Module):
            self._forget(name, keep=modules)
            modules[name] = value
        elif name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter {name!r} "
                    "(nn.Parameter or None expected)"
                )
            params[name] = None
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as child module {name!r}")
            modules[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r}")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Drop ``name`` from every registry but ``keep``: a module assigned over a module
        (``model.fc = nn.Linear(...)``) keeps its place in the order, as in PyTorch."""
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        _check_name("register_parameter", "parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter: {name!r} must be a Parameter or None, but got "
                f"{describe(param)}"
            )
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is part of the module's state but not trained (e.g. running means)."""
        _check_name("register_buffer", "buffer", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer: {name!r} must be a Tensor or None, but got {describe(tensor)}"
            )
        self._forget(name)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child called ``name`` (``None`` keeps an empty slot)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(
                f"add_module: {type(module).__name__} ({module!r:.40}) is not a Module subclass"
            )
        if not isinstance(name, str):
            raise TypeError(
                f"add_module: module name should be a string, got {type(name).__name__}"
            )
        _check_name("add_module", "module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"add_module: attribute {name!r} already exists")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # --- walking the tree ---------------------------------------------------------------
    def named_modules(self, prefix: str = "", memo: set | None = None) -> Iterator[tuple]:
        if not isinstance(prefix, str):
            raise TypeError(f"named_modules: prefix must be a str, but got {describe(prefix)}")
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(f"{prefix}.{name}" if prefix else name, memo)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, child in self._modules.items():
            if child is not None:
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool) -> Iterator[tuple]:
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple]:
        """``(dotted name, parameter)`` for every parameter, each shared one once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple]:
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and on self, e.g. to initialise."""
        as_callable(fn, "Module.apply", "fn")
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # --- modes and gradients ------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode: dropout drops, batch norm uses batch statistics and updates its means."""
        if not isinstance(mode, bool):
            raise ValueError("train: mode must be a bool")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: the same as ``train(False)``."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        as_bool(set_to_none, "Module.zero_grad", "set_to_none")
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad = param.grad.detach() * 0

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        as_bool(requires_grad, "Module.requires_grad_", "requires_grad")
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # --- devices and dtypes -------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move/cast every parameter and buffer in place (the Parameter objects stay the same).

        The target is checked before anything moves, so a bad one leaves the module as it was.
        """
        dtype, _ = parse_to(args, kwargs.get("dtype"), kwargs.get("device"), "Module.to")
        if set(kwargs) - {"dtype", "device"}:
            raise TypeError(f"Module.to: unexpected keyword arguments {sorted(kwargs)}")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"Module.to: only accepts floating point dtypes, but got dtype={dtype} (it would "
                "turn the parameters into integers)"
            )
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None:
                    moved = param.detach().to(*args, **kwargs)
                    param.set_(moved)
                    if param.grad is not None:
                        param.grad = param.grad.to(*args, **kwargs)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    module._buffers[name] = buffer.to(*args, **kwargs)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, index: int = 0) -> Module:
        return self.to(f"cuda:{index}")

    def float(self) -> Module:
        return self._cast_floating(float32)

    def double(self) -> Module:
        return self._cast_floating(float64)

    def half(self) -> Module:
        return self._cast_floating(float16)

    def _cast_floating(self, dtype: Any) -> Module:
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None and param.is_floating_point():
                    param.set_(param.detach().to(dtype))
            for name, buffer in module._buffers.items():
                if buffer is not None and buffer.is_floating_point():
                    module._buffers[name] = buffer.to(dtype)
        return self

    # --- state dict ---------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Every parameter and persistent buffer by dotted name (what a checkpoint stores)."""
        state: OrderedDict = OrderedDict()
        for module_prefix, module in self.named_modules(prefix.rstrip(".")):
            dotted = f"{module_prefix}." if module_prefix else ""
            for name, param in module._parameters.items():
                if param is not None:
                    state[dotted + name] = param if keep_vars else param.detach()
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    state[dotted + name] = buffer if keep_vars else buffer.detach()
        return state

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's tensors, in place.

        With ``strict=True`` (the default) missing or unexpected keys are an error that
        lists them; a shape mismatch is always an error. A lazy module's uninitialised
        parameters and buffers take the checkpoint's shapes, as in PyTorch.
        """
        as_bool(strict, "load_state_dict", "strict")
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"load_state_dict: expected state_dict to be dict-like, but got "
                f"{describe(state_dict)}"
            )
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        for key, target in own.items():
            if key in state_dict:
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    problems.append(f"{key}: expected a Tensor, got {type(value).__name__}")
                elif isinstance(target, (UninitializedParameter, UninitializedBuffer)):
                    pass  # a lazy module's tensor takes the checkpoint's shape (below)
                elif tuple(value.shape) != tuple(target.shape):
                    problems.append(
                        f"size mismatch for {key}: copying a param with shape {value.shape} "
                        f"from checkpoint, the shape in current model is {target.shape}"
                    )
        if strict and missing:
            problems.insert(0, "Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        if strict and unexpected:
            problems.insert(
                0, "Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected))
            )
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(problems)
            )
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    if isinstance(target, (UninitializedParameter, UninitializedBuffer)):
                        target.materialize(tuple(state_dict[key].shape))
                    target.copy_(state_dict[key].to(device=target.device))
        return _IncompatibleKeys(missing, unexpected)

    # --- calling ------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward() method")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args)`` runs before forward; it may return replacement args."""
        as_callable(hook, "register_forward_pre_hook", "hook")
        return RemovableHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args, output)`` runs after forward; it may return a new output."""
        as_callable(hook, "register_forward_hook", "hook")
        return RemovableHandle(self._forward_hooks, hook)

    # --- printing -----------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's line in ``repr``."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child_repr}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = f"{type(self).__name__}(" + (f"{extra}" if extra else "")
        return head + "\n" + "\n".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        names.update(self._parameters, self._buffers, self._modules)
        return sorted(names)


def _check_name(op: str, kind: str, name: Any) -> None:
    """A parameter, buffer or child name: a non-empty string without dots (dots separate
    the levels of ``state_dict`` keys)."""
    if not isinstance(name, str):
        raise TypeError(f"{op}: {kind} name should be a string, but got {describe(name)}")
    if "." in name or name == "":
        raise KeyError(f'{op}: {kind} name can\'t contain "." or be empty, got {name!r}')
