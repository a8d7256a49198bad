"""``Function.apply``: the one choke point every tensor operation goes through.

Each op is a ``Function`` subclass with a ``forward`` that computes on raw backend
arrays (numpy or cupy) and, from chapter 02 on, a ``backward`` right next to it.
Later chapters add their layer here, in ``apply``, and nowhere else.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from . import tensor as _tensor
from .shape import broadcast_shapes


class Layout(NamedTuple):
    """How a tensor reads its storage: element ``i`` sits at ``offset + sum(i_k * strides[k])``."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


class Context:
    """Scratch space an op's forward leaves for its backward."""

    __slots__ = ("saved", "needs_input_grad", "__dict__")

    def __init__(self) -> None:
        self.saved: tuple = ()
        self.needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        self.saved = values

    @property
    def saved_tensors(self) -> tuple:
        return self.saved


class Function:
    """Base class of all ops. Subclasses define ``forward(ctx, *arrays, **params)``."""

    #: The op's name in error messages (defaults to the lower-cased class name).
    name: ClassVar[str] = ""
    #: True for elementwise ops whose tensor inputs broadcast against each other.
    broadcasting: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__.lower()

    @staticmethod
    def forward(ctx: Context, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op: check devices, compute on the backend, wrap the results as tensors."""
        Tensor = _tensor.Tensor
        tensors = [a for a in args if isinstance(a, Tensor)]
        if len(tensors) > 1:
            check_same_device(cls.name, tensors)
        ctx = Context()
        try:
            return cls._compute(ctx, args, kwargs)
        except (ValueError, TypeError) as err:
            if cls.broadcasting:  # explain a shape mismatch in terms of broadcasting
                broadcast_shapes(*(t.shape for t in tensors), op=cls.name)
            raise RuntimeError(f"{cls.name}: {err} ({describe_inputs(args)})") from err

    @classmethod
    def _compute(cls, ctx: Context, args: tuple, kwargs: dict) -> Any:
        """Default: raw arrays in, fresh contiguous tensors out."""
        Tensor = _tensor.Tensor
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        out = cls.forward(ctx, *raw, **kwargs)
        if isinstance(out, tuple):
            return tuple(Tensor._from_array(o) for o in out)
        return Tensor._from_array(out)


class ViewFunction(Function):
    """An op that copies nothing: ``forward`` maps the input's Layout to the output's Layout.

    The result shares the input's storage, so writing through either is seen by both.
    """

    @classmethod
    def _compute(cls, ctx: Context, args: tuple, kwargs: dict) -> Any:
        base, *rest = args
        layout = cls.forward(ctx, base.layout, *rest, **kwargs)
        return base._view(*layout)


def check_same_device(op: str, tensors: list) -> None:
    """Raise a clear error when an op's tensors live on different devices."""
    first = tensors[0].device
    for t in tensors[1:]:
        if t.device != first:
            raise RuntimeError(
                f"{op}: expected all tensors on the same device, but found {first} and "
                f"{t.device}; move one with .to('{first}') or .to('{t.device}')"
            )


def describe_inputs(args: tuple) -> str:
    """``inputs: Tensor(shape=(2, 3), dtype=float32, device=cpu), 2.0`` for error messages."""
    parts = []
    for a in args:
        if isinstance(a, _tensor.Tensor):
            parts.append(f"Tensor(shape={a.shape}, dtype={a.dtype.name}, device={a.device})")
        else:
            parts.append(repr(a) if len(repr(a)) < 40 else type(a).__name__)
    return "inputs: " + ", ".join(parts)
