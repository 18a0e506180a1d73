"""CPU kernels of the FFT ops through ``numpy.fft`` (pocketfft, as torch's CPU backend without MKL).

NumPy 2 transforms float32 / complex64 in single precision and float64 / complex128 in double, so each
result is computed in its input's precision, as torch's. The normalization mode maps onto NumPy's
``norm`` names, which mean the same scale per direction (Note [FFT ops] in backends/meta/fft.py).
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import fft as meta
from .common import as_numpy, store

__all__ = []

# torch's fft_norm_mode (0 none, 1 by_root_n, 2 by_n) as NumPy's norm, for a forward / an inverse transform
_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


@kernel("CPU")
def _fft_r2c(self, dim, normalization, onesided):
    out = meta._fft_r2c(self, dim, normalization, onesided)
    if out.numel():
        axes = meta.fft_dims(self, dim, "_fft_r2c")
        transform = np.fft.rfftn if onesided else np.fft.fftn
        store(out, transform(as_numpy(self), axes=axes, norm=_FORWARD_NORM.get(normalization, "backward")))
    return out


@kernel("CPU")
def _fft_c2r(self, dim, normalization, last_dim_size):
    out = meta._fft_c2r(self, dim, normalization, last_dim_size)
    if out.numel():
        axes = meta.fft_dims(self, dim, "_fft_c2r")
        s = [self._sizes[d] for d in axes[:-1]] + [last_dim_size]
        x = as_numpy(self)
        # the imaginary parts of the zero- (and Nyquist-) frequency entries are ignored, as pocketfft's c2r
        store(out, np.fft.irfftn(x, s=s, axes=axes, norm=_INVERSE_NORM.get(normalization, "forward")))
    return out


@kernel("CPU")
def _fft_c2c(self, dim, normalization, forward):
    out = meta._fft_c2c(self, dim, normalization, forward)
    axes = meta.fft_dims(self, dim, "_fft_c2c")
    x = as_numpy(self)
    if not out.numel() or not axes:
        return store(out, x)
    if forward:
        return store(out, np.fft.fftn(x, axes=axes, norm=_FORWARD_NORM.get(normalization, "backward")))
    return store(out, np.fft.ifftn(x, axes=axes, norm=_INVERSE_NORM.get(normalization, "forward")))
