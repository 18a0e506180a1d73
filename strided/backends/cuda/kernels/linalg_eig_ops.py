"""CUDA kernels of ``linalg_eig`` and ``_linalg_eigvals``: LAPACK's geev on a host copy (Note [eig on the host]).

Note [eig on the host]
torch has no GPU algorithm for the nonsymmetric eigenproblem: its CUDA ``linalg_eig`` calls MAGMA's geev, which
is a CPU routine (the Hessenberg QR iteration is sequential), on a host copy of the matrix, and torch documents
that ``linalg.eig`` synchronizes the device with the CPU. strided does the same: the checks run on the device
tensor (torch's words, the device named), the matrix is copied to the host (a synchronizing D2H copy), the CPU
kernel computes the results (Note [eig on the CPU] in backends/cpu/linalg_eig.py: the same values as on the CPU,
phases included), and they are copied into device outputs of torch's layout (Note [eig outputs]) on the current
stream. A CUDA graph capture cannot contain the D2H copy, as in torch.
"""

from __future__ import annotations

from ....dispatch.library import kernel
from ...cpu.linalg_eig import eig_host
from ...meta.linalg_eig import check_eig, eig_outputs
from ..copies import copy_
from .linalg_complex import host_copy

__all__ = []


def _on_host(self, op: str, vectors: bool):
    dtype = check_eig(op, self)
    results = eig_host(host_copy(self), op, vectors)
    results = results if vectors else (results,)
    outs = eig_outputs(self, dtype, vectors)
    outs = outs if vectors else (outs,)
    for dst, src in zip(outs, results):
        if dst.numel():
            copy_(dst, src)
    return outs if vectors else outs[0]


@kernel("CUDA")
def linalg_eig(self):
    return _on_host(self, "linalg.eig", True)


@kernel("CUDA")
def _linalg_eigvals(self):
    return _on_host(self, "linalg.eigvals", False)
