"""``get_num_threads`` / ``set_num_threads``: the CPU BLAS thread count (via threadpoolctl if present,
otherwise the OpenBLAS/MKL environment, which NumPy reads at start)."""

from __future__ import annotations

import os

__all__ = ["get_num_threads", "set_num_threads"]

_ENV_KEYS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_num_threads = None


def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def get_num_threads() -> int:
    """The number of threads CPU matrix kernels use."""
    if _num_threads is not None:
        return _num_threads
    for key in _ENV_KEYS:
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    return os.cpu_count() or 1


def set_num_threads(n: int) -> None:
    """Set the number of threads CPU matrix kernels use (torch.set_num_threads)."""
    global _num_threads
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n!r}")
    ctl = _controller()
    if ctl is not None:
        ctl.limit(limits=n, user_api="blas")
    for key in _ENV_KEYS:
        os.environ[key] = str(n)
    _num_threads = n
