"""Run PyTorch code on minitorch: ``import torch`` gives minitorch.

``python -m minitorch.as_torch program.py [args...]`` runs a PyTorch program unchanged,
with minitorch standing in for PyTorch: ``import torch`` is ``minitorch``,
``import torch.nn.functional as F`` is ``minitorch.nn.functional``, and every other
``torch.X.Y`` is ``minitorch.X.Y``. ``install()`` does the same inside a running process
(a notebook, a test). It is the measure of the course's promise that what a learner
builds runs real PyTorch code: what minitorch lacks fails at the import or the call
that needs it, with minitorch's own error.

How minitorch spells itself when it stands in for torch (decided in issue 40):

- **values print as torch's**: under this mapping minitorch *is* ``torch``, so what a
  program prints about its data reads as PyTorch's output does: ``str(dtype)`` and
  ``repr(dtype)`` are ``torch.float32``, shapes are ``torch.Size([2, 3])``,
  ``t.type()`` is ``'torch.FloatTensor'``, ``torch.return_types.max(...)``
  (``use_torch_names``). A tutorial's printed output is then the same under both;
- **code keeps its own name**: classes and modules stay minitorch's (``type(t)`` is
  ``<class 'minitorch.tensor.Tensor'>``, ``torch.__name__`` is ``'minitorch'``, and
  tracebacks and error messages name ``minitorch`` files and ops), so that a learner
  always sees which framework ran and where its source is.

Without the mapping (``import minitorch``), everything is spelled ``minitorch.``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
from types import ModuleType

#: PyTorch modules minitorch has no counterpart of, and what it offers instead.
_INSTEAD = {
    "export": "minitorch.jit.trace / minitorch.jit.script and ScriptModule.save",
    "_inductor": "minitorch.compile(model)",
}


def _real_name(alias: str) -> str:
    """``torch.nn.functional`` -> ``minitorch.nn.functional``."""
    return "minitorch" + alias[len("torch") :]


class _Loader(importlib.abc.Loader):
    """Hands out the already imported minitorch module for a ``torch`` name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # import machinery set the alias's spec: put it back


class TorchFinder(importlib.abc.MetaPathFinder):
    """A meta-path finder mapping ``torch`` and ``torch.*`` onto ``minitorch``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = _real_name(fullname)
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as err:
            if err.name is None or not real.startswith(err.name):
                raise  # a module minitorch's own code failed to find
            part = fullname.split(".")[1] if "." in fullname else ""
            instead = _INSTEAD.get(part)
            hint = f"; use {instead} instead" if instead else ""
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: minitorch (standing in for torch) has no "
                f"{real!r}{hint}",
                name=fullname,
            ) from None
        return importlib.machinery.ModuleSpec(fullname, _Loader(module))


def install() -> None:
    """Map ``torch`` onto minitorch in this process (idempotent)."""
    if not any(isinstance(f, TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchFinder())
    loaded = sys.modules.get("torch")
    if loaded is not None and not loaded.__name__.startswith("minitorch"):
        raise RuntimeError(
            "as_torch.install: the real torch is imported already; install the mapping "
            "before anything imports torch"
        )
    use_torch_names()
    import minitorch

    sys.modules.setdefault("torch", minitorch)


def use_torch_names() -> None:
    """Print as ``torch``: dtypes as ``torch.float32``, shapes as ``torch.Size([2, 3])``
    (``Tensor.shape`` and ``Tensor.size()`` return ``minitorch.Size``, a tuple)."""
    from . import dtypes, size

    dtypes.display_name = "torch"
    size.use_sizes()


def run(path: str, argv: list[str]) -> None:
    """Run the program at ``path`` as ``__main__`` (with ``sys.argv = [path, *argv]``)."""
    install()
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python -m minitorch.as_torch program.py [args...]", file=sys.stderr)
        raise SystemExit(2)
    run(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    main()
