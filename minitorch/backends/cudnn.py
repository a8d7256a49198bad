"""``torch.backends.cudnn``: cuDNN's flags. minitorch has no cuDNN (``is_available()`` is
False); the flags keep what a program sets and change nothing."""

#: Let cuDNN benchmark convolution algorithms per input size and keep the fastest.
benchmark = False
#: Use only deterministic cuDNN algorithms.
deterministic = False
#: Use cuDNN at all.
enabled = True
#: Allow TensorFloat-32 in cuDNN convolutions.
allow_tf32 = True


def is_available() -> bool:
    """False: minitorch does not use cuDNN."""
    return False


def version() -> None:
    """cuDNN's version: None, as PyTorch says where cuDNN is not available."""
    return None
