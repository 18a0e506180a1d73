"""``strided.backends.cudnn``: torch's cuDNN flags, for scripts that set them.

Note [No cuDNN]
strided has no cuDNN: convolutions are im2col GEMMs on cuBLASLt (Note [Convolution as a GEMM]) and
recurrent layers are strided's own kernels. So ``is_available()`` is False and ``version()`` is None, as in a
torch build without cuDNN. ``allow_tf32`` does what torch's does (Note [Convolution precision]); the other
flags are kept (a script may read back what it set) but select nothing. Training scripts commonly write
``torch.backends.cudnn.allow_tf32 = True`` or ``benchmark = True``; those lines run unchanged.

Note [Convolution precision]
torch computes float32 convolutions on TF32 tensor cores by default: ``torch.backends.cudnn.allow_tf32`` is
True, while ``torch.backends.cuda.matmul.allow_tf32``, which governs matmuls, is False. strided keeps that
split. Every GEMM of the ``convolution`` op on CUDA -- the forward and the gradient, of conv1d / 2d / 3d and
their transposes -- runs inside ``float32_matmuls(cudnn.allow_tf32)`` (Note [Full float32 scopes]), read
when the GEMM is issued; other matmuls follow the matmul flag. TF32 keeps float32's range with a 10-bit
mantissa: a convolution's result moves by about 1e-3 of its scale; set ``allow_tf32 = False`` (or
``with strided.backends.cudnn.flags(enabled=True, allow_tf32=False)``) for full float32.
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
