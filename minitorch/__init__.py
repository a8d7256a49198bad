"""minitorch: a small, real, PyTorch-shaped deep learning framework, built chapter by chapter."""

# The Tensor class first: the op modules it imports at its end build on it.
from .tensor import Tensor  # isort: skip
from . import (
    accelerator,  # torch.accelerator: the GPU when there is one
    amp,
    autograd,
    backend,
    backends,  # torch.backends' flags (cudnn.benchmark, ...): kept, no effect
    cpu,  # torch.cpu: the CPU as a device module (cpu.amp.autocast)
    cuda,  # the GPU (is_available, device_count) and chapter 07's kernels
    data,
    distributions,  # torch.distributions: Categorical, Normal
    jit,  # chapter 05: the IR, trace/script, passes, save/load
    linalg,
    multiprocessing,  # Python's, plus spawn with PyTorch's signature
    nn,
    onnx,  # chapter 05: export to ONNX (needs the optional onnx extra only to export)
    ops,
    optim,
    shape,
    utils,  # utils.data: PyTorch's path to minitorch.data
)
from .amp import autocast
from .amp.autocast_mode import get_autocast_dtype, is_autocast_enabled
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_default_device,
    linspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    set_default_device,
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
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    qint8,
    quint8,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from .function import Context, Function, ViewFunction
from .jit.compile import compile  # noqa: A004 - torch.compile's name
from .ops import (
    abs,
    acos,
    acosh,
    add,
    all,
    allclose,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    argmax,
    argmin,
    as_strided,
    asin,
    asinh,
    atan,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    cat,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    clone,
    cos,
    cosh,
    div,
    eq,
    equal,
    exp,
    expand,
    expm1,
    fix,
    flatten,
    floor,
    floor_divide,
    fmod,
    frac,
    ge,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    log,
    log1p,
    log2,
    log10,
    log_softmax,
    lt,
    matmul,
    max,
    maximum,
    mean,
    meshgrid,
    min,
    minimum,
    mul,
    narrow,
    ne,
    neg,
    norm,
    permute,
    pow,
    reciprocal,
    relu,
    remainder,
    reshape,
    roll,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    softmax,
    sqrt,
    square,
    squeeze,
    stack,
    sub,
    sum,
    tan,
    tanh,
    transpose,
    trunc,
    unique,
    unsqueeze,
    view,
    where,
)
from .ops.compose import (
    argsort,
    bmm,
    chunk,
    column_stack,
    dot,
    dstack,
    gather,
    hstack,
    index_select,
    is_floating_point,
    is_tensor,
    mm,
    mv,
    numel,
    row_stack,
    scatter,
    sort,
    std,
    var,
    vstack,
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
from .ops.indexed import (
    index_add,
    index_copy,
    index_fill,
    masked_scatter,
    msort,
    scatter_add,
    take,
    take_along_dim,
    tensor_split,
    unbind,
)
from .ops.selection import masked_fill, multinomial, split, topk, tril, triu
from .printing import get_printoptions, set_printoptions
from .random import Generator, initial_seed, manual_seed
from .serialization import SerializationError, load, save
from .shape import Layout, broadcast_shapes
from .size import Size
from .storage import Storage
from .threads import (
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``minitorch.distributed`` on first use, as ``torch.distributed`` is reachable after
    ``import torch`` (imported lazily: most programs never start a process group);
    ``minitorch.mine``, which runs the learner's own pieces (see its docstring); and
    ``minitorch.quantization`` / ``minitorch.ao.quantization`` (``torch.quantization``);
    ``minitorch.fx`` and ``minitorch._dynamo`` (``torch.fx.symbolic_trace``,
    ``torch._dynamo.explain``); ``minitorch.testing`` (``assert_close``)."""
    if name in ("distributed", "mine", "quantization", "ao", "fx", "_dynamo", "testing"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minitorch' has no attribute {name!r}")


# ``MINITORCH_MINE=exercises/``: this process runs on the learner's own pieces from here on.
if __import__("os").environ.get("MINITORCH_MINE"):
    from .mine import _from_environment

    _from_environment()
