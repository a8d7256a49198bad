"""minitorch: a small, real, PyTorch-shaped deep learning framework, built chapter by chapter."""

from . import autograd, data, nn, ops, optim, shape
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
from .device import cuda, device
from .dtypes import (
    bool,
    double,
    dtype,
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
    set_default_dtype,
    uint8,
)
from .function import Context, Function, Layout, ViewFunction
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
from .printing import get_printoptions, set_printoptions
from .random import Generator, initial_seed, manual_seed
from .serialization import SerializationError, load, save
from .shape import broadcast_shapes
from .storage import Storage
from .tensor import Tensor

__version__ = "0.1.0"
