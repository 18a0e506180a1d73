"""Complex tensors in the CUDA factorization kernels (Note [Complex linear algebra on CUDA]).

Note [Complex linear algebra on CUDA]
The fused CUDA kernels of the factorization ops (Note [Linear-algebra kernels] in ops/composite/linalg_solvers.py:
linalg_lu.cu, linalg_triangular.cu, linalg_jacobi.cu, linalg_householder.cu) are real. A complex tensor takes one
of two other roads, each computing what the CPU backend computes (Note [Complex linear algebra on the CPU] in
linalg/_common.py), so CUDA results agree with the CPU's and torch's up to rounding:

* on the device, the ops' composite kernels, which run on complex values with the conjugate transposes: the LU
  factorization, the triangular solve and Cholesky -- what solve, inv, det, slogdet, lu_factor, lu_solve, cholesky,
  cholesky_solve and matrix_exp are built on. Nothing is read back; each column step is a few launches.
* on a host copy, through the CPU kernels (NumPy's LAPACK: zheevd, zgesdd, zgeqrf / zungqr), as ``linalg.eig``
  (Note [eig on the host]): the Hermitian eigensolver, the SVD and Householder QR -- eigh, svd, qr, geqrf and what
  builds on them (pinv, lstsq, matrix_rank, cond, polar, the spectral and nuclear norms). The copy to the host
  synchronizes with the device, and a CUDA graph capture cannot contain it. torch runs cuSOLVER's complex routines
  on the device there; strided has no complex Jacobi or Householder kernel yet.
"""

from __future__ import annotations

from ....device import CPU
from ....dispatch.keys import DispatchKey
from ....dispatch.library import KERNEL_TABLES, kernel
from ....tensor import Tensor
from ...meta.common import new_output
from ..copies import copy_

__all__ = ["on_device", "on_host", "host_copy"]


def on_device(name: str, *args):
    """The composite kernel of op ``name`` on the CUDA tensors ``args`` (LU, triangular solve, Cholesky)."""
    return KERNEL_TABLES[DispatchKey.CompositeExplicitAutograd][name](*args)


def host_copy(t: Tensor) -> Tensor:
    """A CPU copy of the CUDA tensor ``t`` for a kernel that runs on the host (eig, LDL, the complex factorizations
    here): the copy synchronizes with the device (non_blocking=False)."""
    host = new_output(tuple(t.shape), t.dtype, CPU)
    copy_(host, t)
    return host


def _to_device(x, device):
    if not isinstance(x, Tensor):
        return x
    out = new_output(tuple(x.shape), x.dtype, device, tuple(x.stride()))
    if out.numel():
        copy_(out, x)
    return out


def on_host(name: str, self: Tensor, *args):
    """The CPU kernel of op ``name`` on a host copy of the CUDA tensor ``self``; its outputs copied to the device
    with the CPU's layout (eigh, svd, QR, geqrf)."""
    results = KERNEL_TABLES[DispatchKey.CPU][name](host_copy(self), *args)
    outs = tuple(_to_device(r, self.device) for r in results)
    return type(results)(outs) if type(results) is not tuple else outs


@kernel("CUDA")
def geqrf(self):
    """LAPACK's geqrf: the composite's reflectors on the device (real), the CPU's zgeqrf on a host copy
    (complex)."""
    if self.dtype.is_complex:
        return on_host("geqrf", self)
    return on_device("geqrf", self)
