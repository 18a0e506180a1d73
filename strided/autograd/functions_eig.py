"""``linalg_eig_backward``: torch's gradient of the nonsymmetric eigendecomposition (FunctionsManual.cpp).

Note [eig gradient]
For A = V diag(L) V^{-1} (arXiv:1701.00392, eq. 4.77), with gL, gV the conjugate-Wirtinger gradients of L and V
(Note [Complex gradients] in functions_complex.py) and E_ij = conj(L_j - L_i) off the diagonal, 1 on it:

    gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / E) V^H

(the diagonal of the middle matrix is gL exactly). An eigenvector is defined up to a phase e^{i phi}; a loss that
depends on that phase has Im(diag(V^H gV)) != 0, and torch refuses it (its allclose, rtol = atol = 1e-2), here
too. The complex products and the solve are written over the (re, im) parts of the complex matrices, with real
matmuls and ``strided.linalg.solve`` on the real 2n x 2n form [[Re M, -Im M], [Im M, Re M]] of M = V^H: these run
on every backend (Note [Complex operators] lists no complex GEMM or solve on CUDA), and they are ops, so the
gradient is differentiable again. A real input keeps the real part (``handle_r_to_c`` in derivatives.yaml).
Repeated eigenvalues give inf / NaN, as in torch.
"""

from __future__ import annotations

from .. import dtypes as dt
from ..ops import bound as ops

__all__ = ["linalg_eig_backward"]

_PHASE_ERROR = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


def _parts(z):
    """(re, im) real tensors of ``z`` (a real ``z`` has a zero imaginary part)."""
    if z.dtype.is_complex:
        return ops.real(z), ops.imag(z)
    return z, ops.zeros_like(z)


def _mm(a, b):
    """The complex matrix product of (re, im) pairs."""
    (ar, ai), (br, bi) = a, b
    return ar @ br - ai @ bi, ar @ bi + ai @ br


def _solve(m, b):
    """X with M X = B for the complex (re, im) pairs M (*, n, n) and B (*, n, k), through the real 2n form."""
    from ..linalg import solve

    (mr, mi), (br, bi) = m, b
    n = mr.shape[-1]
    big = ops.cat([ops.cat([mr, -mi], -1), ops.cat([mi, mr], -1)], -2)
    x = solve(big, ops.cat([br, bi], -2))
    return x[..., :n, :], x[..., n:, :]


def _check_phase(imag_diag) -> None:
    """torch's ``allclose(Im(diag(V^H gV)), 0, rtol=1e-2, atol=1e-2)`` (NaN fails it too)."""
    if imag_diag.numel() and not bool(ops.all(ops.abs(imag_diag) <= 1e-2)):
        raise RuntimeError(_PHASE_ERROR)


def linalg_eig_backward(gL, gV, L, V):
    """torch's ``linalg_eig_backward`` for the nonsymmetric case (Note [eig gradient]); gL / gV may be None."""
    if gL is None and gV is None:
        return None
    n = L.shape[-1]
    vr, vi = _parts(V)
    vh = (vr.mT, -vi.mT)
    eye = ops.eye(n, n, dtype=dt.bool, device=V.device)
    if gV is None:
        zero = ops.zeros_like(vr)
        gr, gi = _parts(gL)
        middle = (ops.where(eye, gr.unsqueeze(-1), zero), ops.where(eye, gi.unsqueeze(-1), zero))
    else:
        hr, hi = _mm(vh, _parts(gV))
        _check_phase(hi.diagonal(0, -2, -1))
        scale = hr.diagonal(0, -2, -1).unsqueeze(-2)
        pr, pi = _mm(vh, (vr * scale, vi * scale))  # V^H V diag(Re(V^H gV))
        hr, hi = hr - pr, hi - pi
        lr, li = _parts(L)
        c = ops.where(eye, 1.0, lr.unsqueeze(-2) - lr.unsqueeze(-1))  # E = c + i d = conj(L_j - L_i)
        d = ops.where(eye, 0.0, li.unsqueeze(-1) - li.unsqueeze(-2))
        den = c * c + d * d
        hr, hi = (hr * c + hi * d) / den, (hi * c - hr * d) / den
        if gL is not None:
            gr, gi = _parts(gL)
            hr, hi = ops.where(eye, gr.unsqueeze(-1), hr), ops.where(eye, gi.unsqueeze(-1), hi)
        middle = (hr, hi)
    xr, xi = _solve(vh, _mm(middle, vh))
    return ops.complex(xr, xi)
