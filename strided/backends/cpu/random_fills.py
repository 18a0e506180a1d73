"""CPU kernels of exponential_, geometric_, log_normal_ and cauchy_: torch's ``*_distribution<double>`` transforms of
its mt19937 stream (Note [CPU random streams]), element by element in memory order as its serial kernels; the
composites of ops/composite/random_fills.py (which CUDA runs) check the arguments, in torch's words."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from . import random_streams as streams
from .factories import _gen

__all__ = []


def _uniform(self, generator) -> np.ndarray:
    return streams.uniform(_gen(generator), self.numel(), dt.float64)


@kernel("CPU")
def exponential_(self, lambd=1, *, generator=None):
    from ...ops.composite.random_fills import check_exponential

    check_exponential(self, lambd)
    streams.fill(self, (-1.0 / lambd) * np.log1p(-_uniform(self, generator)))
    return self


@kernel("CPU")
def geometric_(self, p, *, generator=None):
    from ...ops.composite.random_fills import check_geometric

    check_geometric(self, p)
    streams.fill(self, np.ceil(np.log(_uniform(self, generator)) / np.log(1.0 - p)))
    return self


@kernel("CPU")
def log_normal_(self, mean=1, std=2, *, generator=None):
    from ...ops.composite.random_fills import check_log_normal

    check_log_normal(self, std)
    z = streams.normal(_gen(generator), self.numel(), dt.float64, 0.0, 1.0, contiguous=False)
    streams.fill(self, np.exp(streams.fma64(z, std, mean)))
    return self


@kernel("CPU")
def cauchy_(self, median=0, sigma=1, *, generator=None):
    from ...ops.composite.random_fills import check_cauchy

    check_cauchy(self, sigma)
    streams.fill(self, streams.fma64(np.tan(np.pi * (_uniform(self, generator) - 0.5)), sigma, median))
    return self
