"""``set_num_threads`` / ``get_num_threads``: how many threads one op may use.

minitorch computes with numpy, whose matrix products run on its BLAS library's thread
pool; the other ops are single-threaded. So the thread count is the BLAS pool's size,
set through ``threadpoolctl`` when it is installed (scikit-learn brings it along). Without
it the count is remembered and reported, and the pool keeps the size it was started with
(``OMP_NUM_THREADS`` and friends, read when numpy is imported).
"""

from __future__ import annotations

import os

_threads: int | None = None
_interop = 1


def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for intra-op parallelism (numpy's BLAS pool)."""
    global _threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    controller = _controller()
    if controller is not None:
        controller.limit(limits=n, user_api="blas")
    _threads = n


def get_num_threads() -> int:
    """The number of threads an op may use: what ``set_num_threads`` set, else the BLAS
    pool's size (or the number of CPUs, when it can't be asked)."""
    if _threads is not None:
        return _threads
    controller = _controller()
    if controller is not None:
        pools = [info["num_threads"] for info in controller.info() if info["user_api"] == "blas"]
        if pools:
            return pools[0]
    return os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    """PyTorch's pool for running independent ops at once; minitorch runs ops one after
    another, so the number is only remembered."""
    global _interop
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _interop = n


def get_num_interop_threads() -> int:
    return _interop
