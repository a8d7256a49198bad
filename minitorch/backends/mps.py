"""``torch.backends.mps``: Apple's Metal GPUs, which minitorch does not use."""


def is_available() -> bool:
    """False: minitorch runs on the CPU (numpy) and CUDA GPUs (cupy) only."""
    return False


def is_built() -> bool:
    return False
