"""``minitorch.nn``: modules, layers, losses, initialisation and utilities."""

from . import functional, init, parallel, utils
from .activation import (
    ELU,
    GELU,
    Dropout,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .channel_dropout import Dropout2d
from .containers import ModuleDict, ModuleList, Sequential
from .conv import AdaptiveAvgPool2d, AvgPool2d, Conv2d, Embedding, MaxPool2d
from .conv_transpose import ConvTranspose2d
from .group_norm import GroupNorm
from .lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyConv2d,
    LazyLinear,
    LazyModuleMixin,
    UninitializedBuffer,
    UninitializedParameter,
)
from .linear import Flatten, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .multihead_attention import MultiheadAttention
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .parallel import DataParallel
from .parameter import Parameter
from .pixel_shuffle import PixelShuffle, PixelUnshuffle
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
