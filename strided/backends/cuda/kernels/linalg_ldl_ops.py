"""CUDA kernels of ``linalg_ldl_factor_ex`` and ``linalg_ldl_solve``: the CPU's sytf2 / sytrs on a host copy, as
``linalg_eig`` (Note [eig on the host]): the checks run on the device tensors, the inputs are copied to the host
(a synchronizing D2H copy), the CPU kernels compute (Note [Bunch-Kaufman LDL] in backends/cpu/linalg_ldl.py: the
same bits as on the CPU) and the results are copied into device outputs of torch's layout on the current stream.
torch's CUDA LDL (cuSOLVER's sytrf) runs on the device; Bunch-Kaufman's column-by-column pivot search is
sequential, and strided has no device kernel for it yet. A CUDA graph capture cannot contain the D2H copy."""

from __future__ import annotations

from ....dispatch.library import kernel
from ...cpu import linalg_ldl as cpu
from ...meta.linalg_ldl import check_ldl_factor, check_ldl_solve, ldl_factor_outputs, ldl_solve_output
from ..copies import copy_
from .linalg_complex import host_copy

__all__ = []


@kernel("CUDA")
def linalg_ldl_factor_ex(self, *, hermitian=False, check_errors=False):
    check_ldl_factor(self)
    outs = ldl_factor_outputs(self)
    for dst, src in zip(outs, cpu.linalg_ldl_factor_ex(host_copy(self), hermitian=hermitian)):
        if dst.numel():
            copy_(dst, src)
    return outs


@kernel("CUDA")
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    out = ldl_solve_output(LD, B, check_ldl_solve(LD, pivots, B))
    if out.numel():
        copy_(out, cpu.linalg_ldl_solve(host_copy(LD), host_copy(pivots), host_copy(B), hermitian=hermitian))
    return out
