"""``minitorch.backends``, as ``torch.backends``: the switches PyTorch programs set for
its vendor libraries (``cudnn.benchmark = True``, ``cuda.matmul.allow_tf32``).

minitorch has none of those libraries (its GPU path is cupy and chapter 07's kernels), so
the flags are plain attributes that keep what a program sets and change nothing, as they
change nothing in PyTorch on a machine without them; ``is_available()`` says False.
"""

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
