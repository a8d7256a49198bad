"""The Tensor: a view (shape, strides, offset) into a flat Storage on some device."""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .backend import array_module_of
from .checks import (
    as_bool,
    as_callable,
    as_tensor,
    check_fill_value,
    describe,
    register_tensor_class,
)
from .device import CPU, as_device, device
from .dtypes import (
    as_dtype,
    bfloat16,
    dtype,
    float32,
    float64,
    from_numpy_dtype,
    int64,
    is_floating,
)
from .dtypes import bool as bool_
from .hooks import RemovableHandle
from .printing import format_tensor
from .shape import Layout, contiguous_strides, normalize_dim, numel
from .state import conversion_hooks as _conversion_hooks
from .storage import Storage, strided_view


def _cpu_storage(flat: np.ndarray) -> Storage:
    """``Storage(flat)`` for a 1-d numpy array, without re-checking what we know."""
    storage = object.__new__(Storage)
    storage.array = flat
    storage.device = CPU
    storage.version = 0
    return storage


class Tensor:
    """An n-dimensional array that ops (and, from chapter 02, autograd) understand.

    A tensor owns no memory of its own: it reads ``storage`` through a ``layout`` of shape,
    strides and offset. Views (transpose, slicing, expand, view) are new layouts over the same
    storage, so they are free; compute ops write fresh contiguous storage.
    """

    __array_priority__ = 1000  # numpy scalars on the left defer to our __radd__ etc.

    # Autograd state. Class-level defaults keep tensor creation cheap; a tensor sets its own
    # value only when it differs (see minitorch.function and minitorch.autograd).
    _grad: Tensor | None = None  # the accumulated gradient (leaves, and retain_grad())
    grad_fn: Any = None  # the graph node that made this tensor (None for leaves)
    _requires_grad = False
    _output_nr = 0  # which output of grad_fn this tensor is
    _base: Tensor | None = None  # the tensor a view looks into
    _hooks: dict | None = None  # gradient hooks of a leaf
    _acc_ref: Any = None  # weak reference to the leaf's AccumulateGrad node
    _retains_grad = False
    _post_acc_hooks: dict | None = None  # hooks called after .grad was accumulated

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("create tensors with minitorch.tensor(data), minitorch.zeros(shape), ...")

    # --- construction -------------------------------------------------------------------
    @classmethod
    def _from_array(cls, array: Any, requires_grad: bool = False) -> Tensor:
        """Wrap a backend array as a new tensor with its own contiguous storage."""
        if type(array) is np.ndarray and array.flags.c_contiguous:
            storage = _cpu_storage(array.ravel())  # every op's output: kept lean
        else:
            if isinstance(array, (np.generic, int, float, bool)):
                array = np.asarray(array)
            if not array.flags.c_contiguous:
                array = array_module_of(array).ascontiguousarray(array)
            storage = Storage(array.reshape(-1))
        t = object.__new__(cls)
        t._storage = storage
        t._data = array
        t._strides = None  # computed on first use
        t._offset = 0
        if requires_grad:
            t.requires_grad = requires_grad
        return t

    @classmethod
    def _alias(cls, storage: Storage, data: Any) -> Tensor:
        """A new tensor object over an existing storage and backend array (no history)."""
        t = object.__new__(cls)
        t._storage = storage
        t._data = data
        t._strides = None
        t._offset = 0
        return t

    def _view(self, shape: tuple, strides: tuple, offset: int) -> Tensor:
        """A tensor that reads this tensor's storage with another layout (no copy): a plain
        Tensor, also for a Parameter's view (``weight[:3]`` is no parameter, as in PyTorch)."""
        t = object.__new__(Tensor)
        t._storage = self._storage
        t._data = strided_view(self._storage, tuple(shape), tuple(strides), offset)
        t._strides = tuple(strides)
        t._offset = offset
        return t

    # --- metadata -----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of one dim."""
        if dim is None:
            return self.shape
        return self.shape[normalize_dim(dim, self.ndim, "size")]

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements: how far to move in storage to step one index along each dim."""
        if self._strides is None:
            self._strides = contiguous_strides(self.shape)
        if dim is None:
            return self._strides
        return self._strides[normalize_dim(dim, self.ndim, "stride")]

    def storage_offset(self) -> int:
        return self._offset

    def untyped_storage(self) -> Storage:
        """The storage this tensor looks into (shared with all of its views)."""
        return self._storage

    def data_ptr(self) -> int:
        """Address of this tensor's first element."""
        return self._storage.data_ptr() + self._offset * self.element_size()

    @property
    def layout(self) -> Layout:
        return Layout(self.shape, self.stride(), self._offset)

    @property
    def dtype(self) -> dtype:
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> device:
        return self._storage.device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return numel(self.shape)

    def element_size(self) -> int:
        return self._data.itemsize

    def is_contiguous(self) -> bool:
        """True when the layout is row-major with no gaps (size-1 dims may have any stride)."""
        if self.numel() == 0:
            return True
        expected = contiguous_strides(self.shape)
        layout = zip(self.stride(), expected, self.shape, strict=True)
        return all(s == e or n == 1 for s, e, n in layout)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    # --- autograd -----------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op made (created by the user, or not requiring grad)."""
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = as_bool(value, "requires_grad_", "requires_grad")
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach()."
                )
            return
        if value and not is_floating(self._data.dtype):
            raise RuntimeError(
                "only Tensors of floating point dtype can require gradients "
                f"(this one is {self.dtype.name})"
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (leaves only) and return self."""
        self.requires_grad = requires_grad
        return self

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (see ``autograd.backward``)."""
        if gradient is not None and not isinstance(gradient, Tensor):
            raise TypeError(
                f"backward: gradient must be a Tensor or None, but got {describe(gradient)}"
            )
        from .autograd.engine import backward  # chapter 02 (it imports this module)

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """The same values (sharing storage) cut off from the graph; never requires grad."""
        t = Tensor._alias(self._storage, self._data)
        t._strides = self._strides
        t._offset = self._offset
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor off from the graph, in place: it becomes a leaf."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError(
                f"detach_: can't detach views in-place (this tensor of shape {self.shape} is a "
                "view of a tensor that requires grad). Use detach() instead."
            )
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """A detached tensor over the same storage (what optimizers update in place)."""
        return self.detach()

    @data.setter
    def data(self, other: Tensor) -> None:
        ops.set_(self, other)

    def set_(self, source: Tensor) -> Tensor:
        """Make this tensor look at ``source``'s storage with ``source``'s layout (the tensor
        object, and so its identity as a Parameter, stays the same). Like ``t.data = source``."""
        return ops.set_(self, source)

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient: set by backward on leaves (and ``retain_grad()``)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return  # leaves keep their gradient anyway
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook: Any) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; if it returns a
        tensor, that replaces the gradient. Returns a handle with ``.remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        as_callable(hook, "register_hook", "hook")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = {}
            hooks = self._hooks
        else:
            node = self.grad_fn
            if node._pre_hooks is None:
                node._pre_hooks = {}
            hooks = node._pre_hooks.setdefault(self._output_nr, {})
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> RemovableHandle:
        """Call ``hook(tensor)`` after backward has accumulated into this leaf's ``.grad``
        (the point where a gradient is ready: DDP starts its all-reduce here)."""
        as_callable(hook, "register_post_accumulate_grad_hook", "hook")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return RemovableHandle(self._post_acc_hooks, hook)

    @property
    def _version(self) -> int:
        return self._storage.version

    # --- conversion ---------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a numpy array sharing memory with this tensor (cpu only)."""
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        if self.device.type != "cpu":
            raise TypeError(
                f"numpy: can't convert a {self.device} tensor to numpy; copy it to the host "
                "first with .cpu()"
            )
        if _conversion_hooks:
            _notify_conversion(self, "numpy", self._data)
        return self._data

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        array = self.cpu()._data
        return array if dtype is None else array.astype(dtype)

    def tolist(self) -> Any:
        out = self._data.tolist()
        if _conversion_hooks:
            _notify_conversion(self, "tolist", out)
        return out

    def item(self) -> int | float | bool:
        return self._item("item")

    def _item(self, kind: str) -> int | float | bool:
        """The single value as a Python scalar; ``kind`` says which conversion asked."""
        if self.numel() != 1:
            raise RuntimeError(
                f"item: a Tensor with {self.numel()} elements cannot be converted to a Python "
                f"scalar (shape {self.shape})"
            )
        out = self._data.reshape(()).item()
        if _conversion_hooks:
            _notify_conversion(self, kind, out)
        return out

    def to(self, *args: Any, dtype: Any = None, device: Any = None) -> Tensor:
        """``t.to("cuda")``, ``t.to(minitorch.float64)``, ``t.to(other)`` or keywords."""
        target_dtype, target_device = parse_to(args, dtype, device, "to")
        target_dtype = target_dtype or self.dtype
        target_device = target_device or self.device
        if target_dtype is self.dtype and target_device == self.device:
            return self
        return ops.ToCopy.apply(self, target_dtype, target_device)

    def cpu(self) -> Tensor:
        return self.to(device="cpu")

    def cuda(self, index: int = 0) -> Tensor:
        return self.to(device=f"cuda:{index}")

    def float(self) -> Tensor:
        return self.to(float32)

    def double(self) -> Tensor:
        return self.to(float64)

    def half(self) -> Tensor:
        return self.to(as_dtype("float16"))

    def bfloat16(self) -> Tensor:
        return self.to(bfloat16)

    def long(self) -> Tensor:
        return self.to(int64)

    def int(self) -> Tensor:
        return self.to(as_dtype("int32"))

    def bool(self) -> Tensor:
        return self.to(bool_)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(as_tensor(other, "type_as", "other").dtype)

    # --- python protocol ----------------------------------------------------------------
    def __repr__(self) -> str:
        extras = []
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return format_tensor(self._data, self.dtype, self.device, extras)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.numel()} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self._item("bool"))

    def __float__(self) -> float:
        return float(self._item("float"))

    def __int__(self) -> int:
        return int(self._item("int"))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self._item("int"))

    __hash__ = object.__hash__

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A copy with storage of its own (``copy.deepcopy(model)``); leaves only, as in
        PyTorch: a tensor some op made would lose its history. A Parameter stays one."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment (this one has grad_fn "
                f"{type(self.grad_fn).__name__}); copy .detach() instead"
            )
        new = Tensor._from_array(self._data.copy())
        new.__class__ = type(self)
        new._requires_grad = self._requires_grad
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        return new

    def __reduce_ex__(self, protocol: int) -> tuple:
        """Pickling, for passing tensors between processes (DataLoader workers, spawn):
        the values (a contiguous host copy), device, requires_grad and class. Model files
        never use pickle (``minitorch.save``)."""
        if self.grad_fn is not None and self._requires_grad:
            raise RuntimeError(
                "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                "autograd does not support crossing process boundaries. If you just want to "
                "transfer the data, call detach() on the tensor before serializing"
            )
        host = np.ascontiguousarray(self.cpu()._data)
        return (_rebuild, (type(self), host, str(self.device), self._requires_grad))

    # --- indexing -----------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Tensor:
        return ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        ops.setitem(self, index, value)

    # --- arithmetic (each goes through Function.apply in minitorch.ops) -----------------
    def __add__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return ops.div(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return ops.pow(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return ops.remainder(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return ops.floor_divide(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return ops.neg(self)

    def __abs__(self) -> Tensor:
        return ops.abs(self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return ops.ge(self, other)

    # ``& | ^ ~`` are bitwise (logical on bool tensors), as in PyTorch
    def __invert__(self) -> Tensor:
        return ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return ops.bitwise_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return ops.bitwise_or(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return ops.bitwise_xor(self, other)

    def __iand__(self, other: Any) -> Tensor:
        return ops.bitwise_(self, other, "and")

    def __ior__(self, other: Any) -> Tensor:
        return ops.bitwise_(self, other, "or")

    def __ixor__(self, other: Any) -> Tensor:
        return ops.bitwise_(self, other, "xor")

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its number; any other refuses a
        format spec, as in PyTorch."""
        if self.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        if format_spec:
            raise TypeError(
                f"unsupported format string passed to Tensor.__format__: {format_spec!r} "
                f"(only a 0-d tensor formats as a number; this one has shape {tuple(self.shape)}; "
                "format t.item() or t.tolist())"
            )
        return str(self)

    # --- named ops ----------------------------------------------------------------------
    def add(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def sub(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def mul(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def div(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def pow(self, other: Any) -> Tensor:
        return ops.pow(self, other)

    def matmul(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def exp(self) -> Tensor:
        return ops.exp(self)

    def log(self) -> Tensor:
        return ops.log(self)

    def sqrt(self) -> Tensor:
        return ops.sqrt(self)

    def abs(self) -> Tensor:
        return ops.abs(self)

    def tanh(self) -> Tensor:
        return ops.tanh(self)

    def sigmoid(self) -> Tensor:
        return ops.sigmoid(self)

    def relu(self) -> Tensor:
        return ops.relu(self)

    def sign(self) -> Tensor:
        return ops.sign(self)

    def softmax(self, dim: int) -> Tensor:
        return ops.softmax(self, dim)

    def log_softmax(self, dim: int) -> Tensor:
        return ops.log_softmax(self, dim)

    def maximum(self, other: Any) -> Tensor:
        return ops.maximum(self, other)

    def minimum(self, other: Any) -> Tensor:
        return ops.minimum(self, other)

    def sum(self, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        return ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return ops.mean(self, dim, keepdim)

    def max(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return ops.max(self, dim, keepdim)

    def min(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return ops.min(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return ops.argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return ops.argmin(self, dim, keepdim)

    def all(self) -> Tensor:
        return ops.all(self)

    def any(self) -> Tensor:
        return ops.any(self)

    # --- more elementwise maths (minitorch.ops.unary) -------------------------------------
    def sin(self) -> Tensor:
        return ops.sin(self)

    def cos(self) -> Tensor:
        return ops.cos(self)

    def tan(self) -> Tensor:
        return ops.tan(self)

    def asin(self) -> Tensor:
        return ops.asin(self)

    def acos(self) -> Tensor:
        return ops.acos(self)

    def atan(self) -> Tensor:
        return ops.atan(self)

    def sinh(self) -> Tensor:
        return ops.sinh(self)

    def cosh(self) -> Tensor:
        return ops.cosh(self)

    def asinh(self) -> Tensor:
        return ops.asinh(self)

    def acosh(self) -> Tensor:
        return ops.acosh(self)

    def atanh(self) -> Tensor:
        return ops.atanh(self)

    arcsin, arccos, arctan = asin, acos, atan
    arcsinh, arccosh, arctanh = asinh, acosh, atanh

    def log1p(self) -> Tensor:
        return ops.log1p(self)

    def expm1(self) -> Tensor:
        return ops.expm1(self)

    def log2(self) -> Tensor:
        return ops.log2(self)

    def log10(self) -> Tensor:
        return ops.log10(self)

    def reciprocal(self) -> Tensor:
        return ops.reciprocal(self)

    def rsqrt(self) -> Tensor:
        return ops.rsqrt(self)

    def square(self) -> Tensor:
        return ops.square(self)

    def floor(self) -> Tensor:
        return ops.floor(self)

    def ceil(self) -> Tensor:
        return ops.ceil(self)

    def round(self, decimals: int = 0) -> Tensor:
        return ops.round(self, decimals=decimals)

    def trunc(self) -> Tensor:
        return ops.trunc(self)

    fix = trunc

    def frac(self) -> Tensor:
        return ops.frac(self)

    def remainder(self, other: Any) -> Tensor:
        return ops.remainder(self, other)

    def fmod(self, other: Any) -> Tensor:
        return ops.fmod(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return ops.floor_divide(self, other)

    def isnan(self) -> Tensor:
        return ops.isnan(self)

    def isinf(self) -> Tensor:
        return ops.isinf(self)

    def isfinite(self) -> Tensor:
        return ops.isfinite(self)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return ops.clamp(self, min, max)

    clip = clamp

    def clamp_min(self, min: Any) -> Tensor:  # noqa: A002
        return ops.clamp(self, min=min)

    def clamp_max(self, max: Any) -> Tensor:  # noqa: A002
        return ops.clamp(self, max=max)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return ops.clamp_(self, min, max)

    clip_ = clamp_

    def norm(
        self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
    ) -> Tensor:
        """The ``p``-norm of all elements, or along ``dim`` (``torch.norm``)."""
        return ops.norm(self, p, dim, keepdim, dtype)

    def equal(self, other: Any) -> bool:
        return ops.equal(self, other)

    def allclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> bool:
        return ops.allclose(self, other, rtol, atol, equal_nan)

    def isclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> Tensor:
        return ops.isclose(self, other, rtol, atol, equal_nan)

    # --- picking and masking (minitorch.ops.selection) ------------------------------------
    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return ops.masked_fill(self, mask, value)

    def tril(self, diagonal: int = 0) -> Tensor:
        return ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return ops.triu(self, diagonal)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        return ops.topk(self, k, dim, largest, sorted)

    def multinomial(
        self, num_samples: int, replacement: bool = False, *, generator: Any = None
    ) -> Tensor:
        return ops.multinomial(self, num_samples, replacement, generator=generator)

    def split(self, split_size: Any, dim: int = 0) -> tuple:
        return ops.split(self, split_size, dim)

    # --- views and copies ---------------------------------------------------------------
    def view(self, *shape: Any) -> Tensor:
        return ops.view(self, *shape)

    def reshape(self, *shape: Any) -> Tensor:
        return ops.reshape(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return ops.view(self, as_tensor(other, "view_as", "other").shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return ops.reshape(self, as_tensor(other, "reshape_as", "other").shape)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return ops.transpose(self, dim0, dim1)

    def permute(self, *dims: Any) -> Tensor:
        return ops.permute(self, *dims)

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t: expects a tensor with <= 2 dims, got shape {self.shape}")
        return self if self.ndim < 2 else ops.transpose(self, 0, 1)

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return ops.permute(self, *reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return ops.transpose(self, -2, -1)

    def expand(self, *sizes: Any) -> Tensor:
        return ops.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return ops.expand(self, as_tensor(other, "expand_as", "other").shape)

    def squeeze(self, dim: int | None = None) -> Tensor:
        return ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return ops.unsqueeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return ops.flatten(self, start_dim, end_dim)

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        return ops.as_strided(self, size, stride, storage_offset)

    def contiguous(self) -> Tensor:
        return self if self.is_contiguous() else ops.clone(self)

    def clone(self) -> Tensor:
        return ops.clone(self)

    # --- in place -----------------------------------------------------------------------
    def copy_(self, src: Any) -> Tensor:
        """Write ``src`` (broadcast to this shape, cast to this dtype) into this tensor's memory."""
        return ops.copy_(self, src)

    def fill_(self, value: Any) -> Tensor:
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError(
                f"fill_: only supports a 0-dim value tensor, but got one of shape {value.shape}"
            )
        if not isinstance(value, (Tensor, int, float, bool, complex, np.number, np.bool_)):
            raise TypeError(f"fill_: value must be a number, but got {describe(value)}")
        check_fill_value(value, self.dtype, "fill_")
        return ops.copy_(self, value)

    def zero_(self) -> Tensor:
        return ops.copy_(self, 0)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return ops.add_(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return ops.sub_(self, other, alpha=alpha)

    def mul_(self, other: Any) -> Tensor:
        return ops.mul_(self, other)

    def div_(self, other: Any) -> Tensor:
        return ops.div_(self, other)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return ops.copy_(self, ops.masked_fill(self, mask, value))

    def exp_(self) -> Tensor:
        return ops.inplace_unary(self, "exp")

    def log_(self) -> Tensor:
        return ops.inplace_unary(self, "log")

    def sqrt_(self) -> Tensor:
        return ops.inplace_unary(self, "sqrt")

    def abs_(self) -> Tensor:
        return ops.inplace_unary(self, "abs")

    def neg_(self) -> Tensor:
        return ops.inplace_unary(self, "neg")

    def tanh_(self) -> Tensor:
        return ops.inplace_unary(self, "tanh")

    def sigmoid_(self) -> Tensor:
        return ops.inplace_unary(self, "sigmoid")

    def relu_(self) -> Tensor:
        return ops.inplace_unary(self, "relu")

    def pow_(self, exponent: Any) -> Tensor:
        return ops.pow_(self, exponent)

    def clamp_min_(self, min: Any) -> Tensor:  # noqa: A002
        return ops.clamp_(self, min, None)

    def clamp_max_(self, max: Any) -> Tensor:  # noqa: A002
        return ops.clamp_(self, None, max)

    def scatter_(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None) -> Tensor:
        return ops.scatter_(self, dim, index, src, value=value)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with draws uniform on [a, b), in place (``nn.init.uniform_`` calls this)."""
        return self.copy_(self._draw(ops.Rand, "uniform_", generator) * (b - a) + a)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with normal draws of this mean and std, in place (``nn.init.normal_``)."""
        return self.copy_(self._draw(ops.Randn, "normal_", generator) * std + mean)

    def _draw(self, op: Any, name: str, generator: Any) -> Tensor:
        """Fresh draws of ``op`` (``ops.Rand``, ``ops.Randn``) in this tensor's shape and dtype."""
        if not self.dtype.is_floating_point:
            raise TypeError(f"{name}: expected a floating point tensor, but got dtype={self.dtype}")
        return op.apply(self.shape, generator, self.dtype, self.device, False)

    # --- PyTorch's other spellings (minitorch.ops.compose) ---------------------------------
    def eq(self, other: Any) -> Tensor:
        return ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return ops.ge(self, other)

    def logical_and(self, other: Any) -> Tensor:
        return ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        return ops.logical_or(self, other)

    def logical_not(self) -> Tensor:
        return ops.logical_not(self)

    def where(self, condition: Any, other: Any) -> Tensor:
        return ops.where(condition, self, other)

    def neg(self) -> Tensor:
        return ops.neg(self)

    negative = neg
    multiply = mul
    subtract = sub
    divide = true_divide = div

    def mm(self, mat2: Any) -> Tensor:
        return ops.mm(self, mat2)

    def bmm(self, mat2: Any) -> Tensor:
        return ops.bmm(self, mat2)

    def mv(self, vec: Any) -> Tensor:
        return ops.mv(self, vec)

    def dot(self, other: Any) -> Tensor:
        return ops.dot(self, other)

    def var(
        self,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        return ops.var(self, dim, unbiased, keepdim, correction=correction)

    def std(
        self,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        return ops.std(self, dim, unbiased, keepdim, correction=correction)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        return ops.chunk(self, chunks, dim)

    def repeat(self, *sizes: Any) -> Tensor:
        return ops.repeat(self, *sizes)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return ops.index_select(self, dim, index)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None) -> Tensor:
        return ops.scatter(self, dim, index, src, value=value)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        return ops.sort(self, dim, descending, stable)

    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        return ops.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return ops.copy_(self, ops.masked_scatter(self, mask, source))

    def msort(self) -> Tensor:
        return ops.msort(self)

    def take(self, index: Tensor) -> Tensor:
        return ops.take(self, index)

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        return ops.take_along_dim(self, indices, dim)

    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        return ops.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        return ops.copy_(self, ops.index_add(self, dim, index, source, alpha=alpha))

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return ops.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return ops.copy_(self, ops.index_copy(self, dim, index, source))

    def index_fill(self, dim: int, index: Tensor, value: Any) -> Tensor:
        return ops.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index: Tensor, value: Any) -> Tensor:
        return ops.copy_(self, ops.index_fill(self, dim, index, value))

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return ops.indexed.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return ops.copy_(self, ops.indexed.scatter_add(self, dim, index, src))

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple:
        return ops.tensor_split(self, indices_or_sections, dim)

    def unbind(self, dim: int = 0) -> tuple:
        return ops.unbind(self, dim)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        return ops.argsort(self, dim, descending, stable)

    def narrow(self, dim: int, start: Any, length: int) -> Tensor:
        return ops.narrow(self, dim, start, length)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return ops.roll(self, shifts, dims)

    def unique(
        self,
        sorted: bool = True,  # noqa: A002 - PyTorch's name
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ) -> Any:
        return ops.unique(self, sorted, return_inverse, return_counts, dim)

    def bitwise_and(self, other: Any) -> Tensor:
        return ops.bitwise_and(self, other)

    def bitwise_or(self, other: Any) -> Tensor:
        return ops.bitwise_or(self, other)

    def bitwise_xor(self, other: Any) -> Tensor:
        return ops.bitwise_xor(self, other)

    def bitwise_not(self) -> Tensor:
        return ops.bitwise_not(self)

    def nelement(self) -> int:
        return self.numel()

    def type(self, dtype: Any = None) -> Any:
        """``'torch.FloatTensor'`` with no argument; a copy as ``dtype`` with one."""
        return ops.to_type(self, dtype)

    def new_ones(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return ops.new_like(self, 1.0, size, dtype, device, requires_grad, "new_ones")

    def new_zeros(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return ops.new_like(self, 0.0, size, dtype, device, requires_grad, "new_zeros")

    def new_empty(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return ops.new_like(self, 0.0, size, dtype, device, requires_grad, "new_empty")

    def new_full(
        self,
        size: Any,
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        return ops.new_like(self, fill_value, (size,), dtype, device, requires_grad, "new_full")

    def new_tensor(
        self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return ops.factory.tensor(
            data,
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        )

    # ``t += x`` writes into t, as in PyTorch (the in-place methods above).
    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_


def _rebuild(cls: type, array: np.ndarray, device_name: str, requires_grad: bool) -> Tensor:
    """Unpickle a tensor (``Tensor.__reduce_ex__``)."""
    t = Tensor._from_array(array)
    if device_name != "cpu":
        t = t.to(device_name)
    t.__class__ = cls
    t._requires_grad = requires_grad
    return t


def _notify_conversion(t: Tensor, kind: str, result: Any) -> None:
    """Tell the conversion observers (chapter 05's tracer) that ``t`` became Python data."""
    for hook in list(_conversion_hooks.values()):
        hook(t, kind, result)


def _check_grad(t: Tensor, g: Any) -> None:
    """``t.grad = g`` takes only a gradient that fits ``t``, as in PyTorch."""
    if not isinstance(g, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(g).__name__}")
    if g is t:
        raise RuntimeError("can't assign Variable as its own grad")
    if g.shape != t.shape:
        raise RuntimeError(
            f"assigned grad has data of a different size: the tensor has shape {t.shape}, "
            f"the gradient {g.shape}"
        )
    if g.dtype != t.dtype:
        raise RuntimeError(
            f"assigned grad has data of a different type: the tensor is {t.dtype.name}, "
            f"the gradient {g.dtype.name}"
        )
    if g.device != t.device:
        raise RuntimeError(
            f"assigned grad has data located on a different device: the tensor is on "
            f"{t.device}, the gradient on {g.device}"
        )


register_tensor_class(Tensor)

# Tensor's methods call ops, and ops make Tensors: the modules that compute are imported
# once the class exists (they import it from here).
from . import ops  # noqa: E402


def parse_to(args: tuple, dtype: Any, device: Any, op: str) -> tuple[Any, Any]:
    """``to``'s arguments (``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(tensor)``, keywords) as (dtype or None, device or None), checked."""
    if len(args) > 2:
        raise TypeError(
            f"{op}: expected at most a device and a dtype, but got {len(args)} "
            f"positional arguments {args!r:.80}"
        )
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, (str, type(CPU))):
            device = arg
        else:
            dtype = arg
    return (
        None if dtype is None else as_dtype(dtype, op),
        None if device is None else as_device(device, op),
    )
