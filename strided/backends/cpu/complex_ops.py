"""CPU kernels of the complex ops: ``conj_physical``, ``angle``, ``polar``, ``complex`` (NumPy's complex
arithmetic; half inputs of ``angle`` computed in float32, Note [CPU compute dtype])."""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import complex_ops as meta
from .common import as_numpy, operand
from .pointwise import apply_ufunc, quiet, store_result

__all__ = []


@kernel("CPU")
def conj_physical(self):
    """The conjugate, materialized; a copy of a real tensor (torch returns ``self`` itself there)."""
    out = meta.conj_physical(self)
    fn = np.conjugate if self.dtype.is_complex else (np.logical_or if self.dtype.name == "bool" else np.positive)
    args = (as_numpy(self),) * (2 if fn is np.logical_or else 1)  # NumPy's positive has no bool loop: x | x
    return apply_ufunc(fn, out, *args)


def _real_angle(x):
    """torch's angle of a real value: pi below zero, nan for nan, else 0 (also for -0.0)."""
    return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0))


@kernel("CPU")
def angle(self):
    out = meta.angle(self)
    x = operand(self, self.dtype if self.dtype.is_complex else out.dtype)
    return store_result(out, np.angle(x) if self.dtype.is_complex else _real_angle(x))


@kernel("CPU")
def polar(abs, angle):  # noqa: A002 - torch's argument names
    out = meta.polar(abs, angle)
    r, theta = as_numpy(abs), as_numpy(angle)
    return quiet(_store_parts, out, lambda: r * np.cos(theta), lambda: r * np.sin(theta))


@kernel("CPU")
def complex(real, imag):  # noqa: A001 - the op's name
    out = meta.complex(real, imag)
    return _store_parts(out, lambda: as_numpy(real), lambda: as_numpy(imag))


def _store_parts(out, re, im):
    """Write the real and imaginary parts (broadcast) into a complex ``out``."""
    dst = as_numpy(out)
    if dst.size:
        np.copyto(dst.real, re())
        np.copyto(dst.imag, im())
    return out
