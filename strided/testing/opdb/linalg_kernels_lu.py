"""OpInfo: ``_linalg_lu_factor`` (Note [Linear-algebra kernels]), checked by the factorization's defining properties
rather than against a reference bit for bit: A[perm] = L U, |L| <= 1 with pivoting, ``perm`` the composition of the
LAPACK-style ``pivots``, and the identity order without pivoting. Sizes reach the CUDA kernels' whole-matrix and
blocked paths (Note [Fused LU])."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]

_DTYPES = (dt.float32, dt.float64)
_NAME = "_linalg_lu_factor"


def _samples(d, rng):
    yield SampleInput((make_arg((5, 5), d, rng=rng),), name="square")
    yield SampleInput((make_arg((3, 6, 6), d, rng=rng, noncontiguous=True),), name="batched, noncontig")
    yield SampleInput((make_arg((7, 3), d, rng=rng),), {"pivot": True}, name="tall")
    yield SampleInput((make_arg((3, 7), d, rng=rng),), name="wide")
    yield SampleInput((make_arg((1, 1), d, rng=rng),), name="1x1")
    yield SampleInput((make_arg((2, 70, 70), d, rng=rng),), name="blocked")
    yield SampleInput((make_arg((0, 4, 4), d, rng=rng),), name="empty batch")
    dominant = rng.uniform(-1.0, 1.0, (2, 9, 9)) + 20 * np.eye(9)
    yield SampleInput((from_numpy(dominant.astype(d.numpy_dtype)), False), name="no pivoting")


def _check(result, sample):
    A = np.asarray(sample.args[0].numpy(force=True), dtype=np.float64)
    pivot = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("pivot", True)
    LU, pivots, perm, info = result
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    assert tuple(LU.shape) == A.shape and LU.is_contiguous() and LU.dtype is sample.args[0].dtype
    assert tuple(pivots.shape) == (*batch, k) and pivots.dtype is dt.int32
    assert tuple(perm.shape) == (*batch, m) and perm.dtype is dt.int64
    assert tuple(info.shape) == batch and info.dtype is dt.int32
    LU, pivots, perm, info = (np.asarray(t.numpy(force=True)) for t in result)
    assert np.all(info == 0), f"{sample}: info {info} for nonsingular input"
    eps = 1e-5 if sample.args[0].dtype is dt.float32 else 1e-12
    for i in np.ndindex(*batch):
        order = np.arange(m)
        for j, p in enumerate(pivots[i]):
            assert j + 1 <= p <= m, f"{sample}: pivot {p} at step {j}"
            order[[j, p - 1]] = order[[p - 1, j]]
        np.testing.assert_array_equal(perm[i], order, err_msg=f"{sample}: perm is not the pivots' row order")
        if not pivot:
            np.testing.assert_array_equal(order, np.arange(m), err_msg=f"{sample}: rows swapped without pivoting")
        L = np.tril(LU[i][:, :k], -1) + np.eye(m, k)
        U = np.triu(LU[i][:k, :])
        if pivot:
            assert np.abs(L).max() <= 1 + eps, f"{sample}: a multiplier above 1 with partial pivoting"
        np.testing.assert_allclose(L @ U, A[i][perm[i]], rtol=0, atol=eps * max(m, n) * np.abs(A[i]).max(),
                                   err_msg=f"{sample}: A[perm] != L U")


def _errors(rng):
    yield err((make_arg((4,), dt.float32, rng=rng),), RuntimeError,
              f"{_NAME}: The input tensor A must have at least 2 dimensions, but got 1")
    yield err((make_arg((3, 3), dt.int32, rng=rng),), RuntimeError,
              f"{_NAME}: expected a float32 or float64 tensor, got strided.int32")
    yield err((make_arg((3, 3), dt.float16, rng=rng),), RuntimeError,
              f"{_NAME}: expected a float32 or float64 tensor, got strided.float16")


OPS = [
    OpInfo(_NAME, _samples, ref=None, dtypes=_DTYPES, check=_check, errors=_errors),
]
