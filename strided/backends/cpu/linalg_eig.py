"""CPU kernels of ``linalg_eig`` and ``_linalg_eigvals`` through NumPy's LAPACK (``numpy.linalg.eig`` is geev,
the routine torch's CPU kernel calls; Note [LAPACK on the CPU] in linalg_factorizations.py).

Note [eig on the CPU]
geev normalizes each right eigenvector to unit 2-norm with its largest component real, and orders the
eigenvalues as the Schur form leaves them, so the results are torch's up to rounding (torch promises no phase:
callers compare phase-invariant quantities). NumPy returns a real array when every eigenvalue of a real input is
real; the outputs are complex either way (Note [eig outputs] in backends/meta/linalg_eig.py). Non-finite input
raises torch's error in ``linalg_eig``; ``_linalg_eigvals`` (eigvals without gradients) does not check, as torch,
and gives NaN for such a matrix (NumPy refuses it where LAPACK's result would be arbitrary).
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta.linalg_eig import check_eig, eig_outputs
from .common import as_numpy, store

__all__ = ["eig_host"]


def _eig(a: np.ndarray, vectors: bool):
    """geev over the batch of square ``a`` (finite), in ``a``'s precision."""
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), np.zeros(a.shape, a.dtype)
    if vectors:
        return np.linalg.eig(a)
    return np.linalg.eigvals(a), None


def eig_host(self, op: str, vectors: bool = True):
    """The kernel body on a CPU tensor ``self`` (the CUDA kernel runs it on its host copy)."""
    dtype = check_eig(op, self)
    outs = eig_outputs(self, dtype, vectors)
    w_out, v_out = outs if vectors else (outs, None)
    a = as_numpy(self)
    finite = np.isfinite(a).all(axis=(-2, -1)) if a.size else np.ones(a.shape[:-2], bool)
    if vectors and not finite.all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if not finite.all():  # eigvals: the non-finite matrices give NaN, the others their values
        a = np.where(finite[..., None, None], a, 0)
    w, v = _eig(a, vectors)
    if not finite.all():
        w = np.where(finite[..., None], w, complex(np.nan, np.nan))
    store(w_out, w)
    if vectors:
        store(v_out, v)
        return w_out, v_out
    return w_out


@kernel("CPU")
def linalg_eig(self):
    return eig_host(self, "linalg.eig")


@kernel("CPU")
def _linalg_eigvals(self):
    return eig_host(self, "linalg.eigvals", vectors=False)
