"""``strided.backends.cudnn``: torch's cuDNN flags, for scripts that set them.

Note [No cuDNN]
strided has no cuDNN: convolutions are im2col GEMMs on cuBLASLt (Note [Convolution as a GEMM]),
whose precision ``strided.backends.cuda.matmul`` governs, and recurrent layers are strided's own
kernels. So ``is_available()`` is False and ``version()`` is None, as in a torch build without
cuDNN, and the flags below are kept (a script may read back what it set) but select nothing, as
torch's do when cuDNN is unavailable. Training scripts commonly write
``torch.backends.cudnn.allow_tf32 = True`` or ``benchmark = True``; those lines run unchanged.
"""

from __future__ import annotations

import contextlib

__all__ = ["is_available", "version", "is_acceptable", "flags"]

# torch's defaults (torch/backends/cudnn/__init__.py)
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether cuDNN can be used: never in strided (Note [No cuDNN])."""
    return False


def version() -> None:
    """cuDNN's version: None, as torch's when cuDNN is unavailable."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: False without cuDNN (torch's answer then)."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags inside a ``with`` block and restore them after (torch.backends.cudnn.flags)."""
    module = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: module[n] for n in names}
    module.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        module.update(saved)
