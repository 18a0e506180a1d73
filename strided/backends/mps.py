"""``strided.backends.mps``: torch's Apple-GPU queries, for the device-selection code scripts start with.

Note [Backends strided lacks]
``torch.backends`` also describes back ends strided does not have: Apple's MPS GPU, Intel's MKL and oneDNN
(mkldnn), OpenMP. Scripts ask about them before choosing a device (``"cuda" if torch.cuda.is_available() else
"mps" if torch.backends.mps.is_available() else "cpu"``) or set their flags; those lines run unchanged here
and get the answers of a torch build without them: ``is_available()`` is False everywhere. strided's CPU
kernels run on NumPy and the BLAS it loaded (Note [BLAS thread control]); its threads are that library's.
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether the MPS device can be used: never in strided (Note [Backends strided lacks])."""
    return False


def is_built() -> bool:
    """Whether strided was built with MPS support: it was not (Note [Backends strided lacks])."""
    return False
