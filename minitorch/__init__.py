"""minitorch: a small, real, PyTorch-shaped deep learning framework, built chapter by chapter."""

# The Tensor class first: the op modules it imports at its end build on it.
from .tensor import Tensor  # isort: skip
from . import (
    amp,
    autograd,
    backend,
    cuda,  # the GPU (is_available, device_count) and chapter 07's kernels
    data,
    jit,  # chapter 05: the IR, trace/script, passes, save/load
    nn,
    onnx,  # chapter 05: export to ONNX (needs the optional onnx extra only to export)
    ops,
    optim,
    shape,
)
from .amp import autocast
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .creation import (
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .device import device
from .dtypes import (
    bfloat16,
    bool,
    double,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .function import Context, Function, Layout, ViewFunction
from .jit.compile import compile  # noqa: A004 - torch.compile's name
from .ops import (
    abs,
    add,
    all,
    any,
    argmax,
    argmin,
    as_strided,
    broadcast_to,
    cat,
    clone,
    div,
    eq,
    exp,
    expand,
    flatten,
    ge,
    gt,
    le,
    log,
    log_softmax,
    lt,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    ne,
    neg,
    permute,
    pow,
    relu,
    reshape,
    sigmoid,
    sign,
    softmax,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    tanh,
    transpose,
    unsqueeze,
    view,
    where,
)
from .ops.foreach import (
    _foreach_add,
    _foreach_add_,
    _foreach_addcdiv_,
    _foreach_addcmul_,
    _foreach_clone,
    _foreach_copy_,
    _foreach_lerp_,
    _foreach_maximum_,
    _foreach_mul_,
    _foreach_neg,
    _foreach_sqrt,
    _foreach_zero_,
)
from .printing import get_printoptions, set_printoptions
from .random import Generator, initial_seed, manual_seed
from .serialization import SerializationError, load, save
from .shape import broadcast_shapes
from .storage import Storage

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``minitorch.distributed`` on first use, as ``torch.distributed`` is reachable after
    ``import torch`` (imported lazily: most programs never start a process group);
    ``minitorch.mine``, which runs the learner's own pieces (see its docstring); and
    ``minitorch.quantization`` / ``minitorch.ao.quantization`` (``torch.quantization``)."""
    if name in ("distributed", "mine", "quantization", "ao"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minitorch' has no attribute {name!r}")


# ``MINITORCH_MINE=exercises/``: this process runs on the learner's own pieces from here on.
if __import__("os").environ.get("MINITORCH_MINE"):
    from .mine import _from_environment

    _from_environment()
