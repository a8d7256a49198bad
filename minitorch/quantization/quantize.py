"""``quantize_dynamic``: swap a model's ``nn.Linear`` layers for int8 ones, as PyTorch does.

Which modules are swapped follows PyTorch's rules: ``qconfig_spec`` maps module types and
submodule names (``"encoder.0"``) to a ``QConfig``; a module's qconfig is its name's entry,
else its type's, else its parent's (so naming a block quantizes the Linears inside it),
and a ``qconfig`` attribute on a module wins over all of them; ``None`` leaves a module in
float. Each ``nn.Linear`` whose qconfig is not None becomes a ``DynamicQuantizedLinear``.

Where PyTorch silently leaves the model as it was, minitorch says so instead: a requested
type it can't quantize (``nn.Conv2d``), a name no submodule has, or a model that is
itself an ``nn.Linear`` (only submodules are swapped) is an error naming it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..dtypes import float16
from ..nn.linear import Linear as FloatLinear
from ..nn.module import Module
from . import dynamic
from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig
from .qtypes import is_qdtype, qint8

_NOT_GIVEN = object()


def get_default_dynamic_quant_module_mappings() -> dict[type, type]:
    """Float module type -> its dynamically quantized replacement."""
    return {FloatLinear: dynamic.Linear}


def quantize_dynamic(
    model: Module,
    qconfig_spec: set | dict | None = None,
    dtype: Any = qint8,
    mapping: dict[type, type] | None = None,
    inplace: bool = False,
) -> Module:
    """A copy of ``model`` (``model`` itself with ``inplace=True``), in eval mode, whose
    ``nn.Linear`` layers hold int8 weights (``dtype=minitorch.qint8``, the default) or
    float16 ones (``minitorch.float16``) and quantize their input at every call.

    ``qconfig_spec``: a set of module types and names to quantize with ``dtype``'s default
    qconfig, or a dict mapping them to a ``QConfig`` (``per_channel_dynamic_qconfig`` for
    one scale per output channel); by default every ``nn.Linear``.
    """
    if not isinstance(model, Module):
        raise TypeError(f"quantize_dynamic: model must be an nn.Module, got {type(model).__name__}")
    spec = _qconfig_dict(qconfig_spec, dtype)
    mapping = get_default_dynamic_quant_module_mappings() if mapping is None else mapping
    _check_mapping(mapping)
    if not isinstance(inplace, bool):
        raise TypeError(f"quantize_dynamic: inplace must be a bool, got {inplace!r}")
    if not inplace:
        model = copy.deepcopy(model)
    names = dict(model.named_modules())
    for key in spec:
        if isinstance(key, str) and key not in names:
            raise ValueError(
                f"quantize_dynamic: qconfig_spec names {key!r}, but the model has no submodule "
                f"of that name (it has {', '.join(repr(n) for n in names if n) or 'none'})"
            )
    plan: list[tuple[str, QConfig]] = []
    _plan(model, "", None, spec, mapping, plan)  # checks everything before changing anything
    for path, qconfig in plan:
        parent_path, _, name = path.rpartition(".")
        parent = _submodule(model, parent_path)
        child = parent._modules[name]
        if type(child) not in mapping:  # a module shared by two parents: swapped already
            continue
        replacement = mapping[type(child)].from_float(child, qconfig)
        replacement._forward_pre_hooks.update(child._forward_pre_hooks)
        replacement._forward_hooks.update(child._forward_hooks)
        parent._modules[name] = replacement  # (in place: setattr would move it to the end)
    return model.eval()


def _qconfig_dict(qconfig_spec: Any, dtype: Any) -> dict:
    """PyTorch's ``qconfig_spec`` forms as one dict: type or name -> QConfig (or None)."""
    if qconfig_spec is None or isinstance(qconfig_spec, (set, frozenset, list, tuple)):
        qconfig = _default_qconfig(dtype)
        keys = (FloatLinear,) if qconfig_spec is None else qconfig_spec
        spec = dict.fromkeys(keys, qconfig)
    elif isinstance(qconfig_spec, dict):
        spec = dict(qconfig_spec)
        for key, qconfig in spec.items():
            if qconfig is not None and not isinstance(qconfig, QConfig):
                raise TypeError(
                    f"quantize_dynamic: qconfig_spec[{_key_name(key)}] must be a QConfig or "
                    f"None, got {type(qconfig).__name__}"
                )
    else:
        raise TypeError(
            f"quantize_dynamic: qconfig_spec must be a set of module types/names or a dict of "
            f"them to QConfigs, got {type(qconfig_spec).__name__}"
        )
    for key in spec:
        if not (isinstance(key, str) or (isinstance(key, type) and issubclass(key, Module))):
            raise TypeError(
                f"quantize_dynamic: qconfig_spec keys must be nn.Module types (like nn.Linear) "
                f"or submodule names, got {key!r}"
            )
    return spec


def _default_qconfig(dtype: Any) -> QConfig:
    if is_qdtype(dtype, "qint8"):
        return default_dynamic_qconfig
    if dtype is float16:
        return float16_dynamic_qconfig
    raise ValueError(
        f"quantize_dynamic: minitorch quantizes nn.Linear dynamically with dtype=minitorch.qint8 "
        f"or minitorch.float16, got dtype={dtype!r}"
        + (
            " (PyTorch uses quint8 for nn.Embedding weights, which minitorch does not quantize)"
            if is_qdtype(dtype, "quint8")
            else ""
        )
    )


def _check_mapping(mapping: Any) -> None:
    if not isinstance(mapping, dict):
        raise TypeError(f"quantize_dynamic: mapping must be a dict, got {type(mapping).__name__}")
    for source, target in mapping.items():
        if not callable(getattr(target, "from_float", None)):
            raise TypeError(
                f"quantize_dynamic: mapping[{_key_name(source)}] must be a class with a "
                f"from_float method, got {target!r}"
            )


def _plan(module: Module, path: str, inherited: Any, spec: dict, mapping: dict, plan: list) -> bool:
    """Add ``(path, qconfig)`` for each module to swap under ``module``; True if any."""
    own = spec.get(path, spec.get(type(module), _NOT_GIVEN))
    qconfig = inherited if own is _NOT_GIVEN else own
    qconfig = getattr(module, "qconfig", qconfig)
    if path and type(module) in mapping and qconfig is not None:
        plan.append((path, qconfig))
        return True
    found = False
    for name, child in module.named_children():
        found |= _plan(child, f"{path}.{name}" if path else name, qconfig, spec, mapping, plan)
    if own is not _NOT_GIVEN and own is not None and not found:
        raise _nothing_to_quantize(module, path, mapping)
    return found


def _nothing_to_quantize(module: Module, path: str, mapping: dict) -> Exception:
    kind = type(module).__name__
    if not path and type(module) in mapping:
        return ValueError(
            f"quantize_dynamic: the model itself is an nn.{kind}; quantize_dynamic replaces a "
            f"model's submodules, so it would stay float (in PyTorch too); wrap it, e.g. "
            f"quantize_dynamic(nn.Sequential(model))"
        )
    where = f"the submodule {path!r}" if path else "the model"
    supported = ", ".join(f"nn.{t.__name__}" for t in mapping)
    return ValueError(
        f"quantize_dynamic: {where} ({kind}) was asked for, but minitorch has no dynamically "
        f"quantized {kind} and it holds no module that has one; dynamic quantization covers "
        f"{supported} (PyTorch's quantize_dynamic would leave it in float without a word)"
    )


def _submodule(model: Module, path: str) -> Module:
    for name in path.split(".") if path else ():
        model = model._modules[name]
    return model


def _key_name(key: Any) -> str:
    return repr(key) if isinstance(key, str) else getattr(key, "__name__", repr(key))
