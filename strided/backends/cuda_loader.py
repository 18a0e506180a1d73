"""Entry points into the CUDA backend that the device-neutral code may call.

Importing ``strided.backends.cuda`` loads cuda-bindings; these functions do it only when CUDA
memory is first asked for, so ``import strided`` never touches the driver.
"""

from __future__ import annotations


def _backend():
    try:
        from . import cuda
    except ImportError as e:
        raise RuntimeError(
            f"CUDA is not available: the CUDA backend could not be loaded ({type(e).__name__}: {e}). "
            "Install strided with the 'cuda' extra on a machine with an NVIDIA driver."
        ) from None
    return cuda


def cuda_allocate(nbytes: int, device):
    return _backend().allocate_storage(nbytes, device)


def pinned_allocate(nbytes: int):
    return _backend().allocate_pinned_storage(nbytes)
