"""``linalg_eigvals``: torch's CompositeImplicitAutograd kernel (BatchLinearAlgebra.cpp).

Note [eigvals through eig]
The eigenvalues alone have no derivative formula: with gradients needed, ``linalg_eigvals`` is
``linalg_eig(A).eigenvalues``, whose backward (``linalg_eig_backward``) uses the eigenvectors; otherwise it is
``_linalg_eigvals``, which computes no eigenvectors and, as torch, does not refuse non-finite input.
"""

from __future__ import annotations

from ...dispatch.dispatcher import grad_mode
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def linalg_eigvals(self):
    if grad_mode.enabled and self._requires_grad:
        return ops.linalg_eig(self)[0]
    return ops._linalg_eigvals(self)
