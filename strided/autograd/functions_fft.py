"""Helpers that derivatives.yaml formulas call for the FFT ops (torch's FunctionsManual.cpp).

Note [FFT gradients]
Each transform is linear, so its backward is its adjoint applied to ``grad`` (Note [Complex gradients]):
``_fft_c2c``'s is the transform the other way with the same normalization (the DFT matrix's conjugate
transpose; the scale is symmetric). ``_fft_r2c`` onesided is a c2c transform of the real input with the
redundant half dropped, so its backward pads ``grad`` with zeros back to the full length, transforms
backward and keeps the real part. ``_fft_c2r`` fills the missing half by conjugate symmetry before
an inverse c2c transform, so its backward is the onesided ``_fft_r2c`` of ``grad`` with the entries that
stand for two (indices ``1 .. n - (n // 2 + 1)`` of the last dim) doubled. The padding and doubling are
``cat`` and ``narrow`` (layout ops that take complex tensors), so the formulas differentiate again.
"""

from __future__ import annotations

from ..backends.meta.common import wrap_dim
from ..ops import bound as ops

__all__ = ["fft_r2c_backward", "fft_c2r_backward", "_fft_c2c_symint"]


def _fft_c2c_symint(self, dim, normalization, forward):
    """``_fft_c2c`` under torch's name in its formula (the formula namespace has no private operators)."""
    return ops._fft_c2c(self, dim, normalization, forward)


def fft_r2c_backward(grad, dim, normalization, onesided, last_dim_size):
    """torch's fft_r2c_backward: the real part of the inverse c2c transform of ``grad`` zero-padded to the
    input's ``last_dim_size`` entries in the last transformed dim (Note [FFT gradients])."""
    if not onesided:
        return ops.real(ops._fft_c2c(grad, dim, normalization, False))
    last = wrap_dim(dim[-1], grad.dim())
    zero_length = last_dim_size - grad.size(last)
    if zero_length > 0:
        sizes = list(grad.shape)
        sizes[last] = zero_length
        grad = ops.cat([grad, grad.new_zeros(sizes)], last)
    return ops.real(ops._fft_c2c(grad, dim, normalization, False))


def fft_c2r_backward(grad, dim, normalization):
    """torch's fft_c2r_backward: the onesided r2c transform of ``grad``, the entries whose conjugate
    twins the forward filled in counted twice (Note [FFT gradients])."""
    g = ops._fft_r2c(grad, dim, normalization, True)
    last = wrap_dim(dim[-1], grad.dim())
    half = g.size(last)
    double_length = grad.size(last) - half
    if double_length <= 0:
        return g
    parts = [ops.narrow(g, last, 0, 1), ops.narrow(g, last, 1, double_length) * 2.0]
    if 1 + double_length < half:
        parts.append(ops.narrow(g, last, 1 + double_length, half - 1 - double_length))
    return ops.cat(parts, last)
