"""``minitorch.ao.quantization``: the same names as ``minitorch.quantization``."""

from ..quantization import *  # noqa: F403
from ..quantization import __all__  # noqa: F401
