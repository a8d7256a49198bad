"""``torch.backends.cuda``: cuBLAS's flags (``matmul.allow_tf32``), kept and unused."""

from __future__ import annotations


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: whether matrix products may use reduced precision."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self) -> str:
        return f"<minitorch.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


def is_built() -> bool:
    """Whether minitorch can use CUDA at all: through cupy, when it is installed."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True
