"""Sums over the trailing axes of a contiguous float array, at torch's speed and accuracy (Note [Blocked sums]).

Note [Blocked sums]
``np.add.reduce`` over the last axis of a C-contiguous float32 / float64 array is NumPy's pairwise sum, row by
row, whose loop the compiler does not vectorize: 3-4x torch's single-threaded time for a (512, 1024) row sum
(89 against 29 µs on the CI machine), and the same for a whole-array sum. ``einsum("ij->i")`` runs NumPy's SIMD
sum-of-products loop instead (one accumulator per vector lane, several vectors unrolled) -- torch's time -- but
each lane adds its share of a row in sequence, so on rows of 100,000 its error grew to 20x torch's (2e-6
relative against 1e-7). Here each row is cut into blocks of ``_BLOCK`` elements: ``einsum`` sums every block
(a few dozen additions per lane), and NumPy's pairwise sum adds the blocks' sums -- the cascade torch's CPU sum
uses, at its speed (32 / 672 / 281 µs against torch's 29 / 595 / 250 at (512, 1024), (64, 100000), (1024,
4096)) and its accuracy (1-2e-7 relative in float32, as torch's). Only for arrays of at least ``_MIN_SIZE``
elements: below that NumPy's own loop is as fast. Sums of other dtypes or layouts stay NumPy's.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["sum_trailing", "blocked_row_sums", "fast_sum"]

_BLOCK = 1024
_MIN_SIZE = 4096
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def blocked_row_sums(m: np.ndarray) -> np.ndarray:
    """The row sums of a 2-D float array whose rows are contiguous (Note [Blocked sums])."""
    rows, cols = m.shape
    k = cols // _BLOCK
    if k <= 1:
        return np.einsum("ij->i", m)
    head = np.einsum("ijk->ij", m[:, :k * _BLOCK].reshape(rows, k, _BLOCK))
    total = np.add.reduce(head, axis=1)
    if cols > k * _BLOCK:
        total += np.einsum("ij->i", m[:, k * _BLOCK:])
    return total


def sum_trailing(a: np.ndarray, axes, keepdims: bool) -> np.ndarray | None:
    """``np.add.reduce(a, axis=axes, keepdims=keepdims)`` by blocks when ``axes`` are ``a``'s last axes, ``a`` is a
    C-contiguous float32 / float64 array of at least ``_MIN_SIZE`` elements; None otherwise (the caller reduces)."""
    if a.dtype not in _FLOATS or a.size < _MIN_SIZE or not a.flags.c_contiguous:
        return None
    nd = a.ndim
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    k = len(axes)
    if k == 0 or sorted(ax % nd for ax in axes) != list(range(nd - k, nd)):
        return None
    lead = a.shape[:nd - k]
    sums = blocked_row_sums(a.reshape(math.prod(lead), -1))
    return sums.reshape(lead + (1,) * k if keepdims else lead)


def fast_sum(a: np.ndarray, axes, keepdims: bool) -> np.ndarray:
    """``np.sum(a, axis=axes, keepdims=keepdims)``, by blocks where Note [Blocked sums] applies."""
    total = sum_trailing(a, axes, keepdims)
    return np.add.reduce(a, axis=axes, keepdims=keepdims) if total is None else total
