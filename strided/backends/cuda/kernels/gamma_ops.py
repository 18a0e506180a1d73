"""CUDA kernels for the gamma-family ops with an int parameter: ``polygamma(n, self)``, its in-place
form and ``mvlgamma(self, p)`` (lgamma and digamma are floating unary ops of ``pointwise_ops``).

The device functions are in ``elementwise.cuh`` (Note [digamma and polygamma] in
``strided/backends/cpu/gamma_functions.py``); the int parameter is a 64-bit scalar operand.
"""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import pointwise_unary as meta_u
from ..elementwise import opmath, run

__all__ = []


def _polygamma(out, self, n):
    """polygamma(n, self) into ``out`` (``self`` itself in place); n = 0 and 1 are digamma and trigamma."""
    c = opmath(out.dtype)
    if n <= 1:
        return run("ew_digamma(x0)" if n == 0 else "ew_trigamma(x0)", out, (self,), (c,), dense=out is not self)
    return run("ew_polygamma(x0, x1)", out, (self, n), (c, dt.int64), dense=out is not self)


@kernel("CUDA")
def polygamma(n, self):
    return _polygamma(meta_u.polygamma(n, self), self, n)


@kernel("CUDA")
def polygamma_(self, n):
    return _polygamma(meta_u.polygamma_(self, n), self, n)


@kernel("CUDA")
def mvlgamma(self, p):
    out = meta_u.mvlgamma(self, p)
    return run("ew_mvlgamma(x0, x1)", out, (self, p), (opmath(out.dtype), dt.int64))
