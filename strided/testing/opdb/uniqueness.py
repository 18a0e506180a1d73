"""OpInfos: _unique2, unique_dim, unique_consecutive (``ops/composite/uniqueness.py``), against NumPy.
Their output lengths are data: meta raises. NaN (each NaN its own value, as torch) is tested against
torch in tests/backend/test_uniqueness.py, since NumPy's unique merges NaNs."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]


def _t(values, d):
    from ...factories import tensor

    return tensor(np.asarray(values), dtype=d)


def _vals(d):
    if d is dt.bool:
        return [[True, False], [True, True], [False, False]]
    return [[3, 1], [1, 3], [3, 1], [0, 2]]


def _flat_samples(d, rng):
    for flags in ((False, False), (True, True), (True, False)):
        yield SampleInput((_t(_vals(d), d), True, *flags), name=f"2-D, inverse/counts {flags}")
    yield SampleInput((_t(_vals(d), d).t(), True, True, True), name="noncontiguous")
    yield SampleInput((_t(np.zeros((0, 2)), d), True, True, True), name="zero-size")


def _unique2_ref(a, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    u, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
    return (u, inv.reshape(a.shape) if return_inverse else np.zeros(0, np.int64),
            cnt if return_counts else np.zeros(0, np.int64))


def _dim_samples(d, rng):
    for dim in (0, 1, -1):
        yield SampleInput((_t(_vals(d), d), dim, True, True, True), name=f"dim {dim}")
    yield SampleInput((_t(_vals(d), d), 0), name="values only")


def _unique_dim_ref(a, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    u, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    return (u, inv.reshape(-1) if return_inverse else np.zeros(0, np.int64),
            cnt if return_counts else np.zeros(0, np.int64))


def _consecutive_samples(d, rng):
    v = _t(_vals(d), d)
    yield SampleInput((v, True, True), name="flat")
    yield SampleInput((v, True, True, 0), name="dim 0")
    yield SampleInput((v.t(), False, True, 1), name="dim 1, noncontiguous")


def _consecutive_ref(a, return_inverse=False, return_counts=False, dim=None):
    rows = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    n = rows.shape[0]
    first = np.ones(n, bool)
    if n > 1:
        diff = rows[1:] != rows[:-1]
        first[1:] = diff.reshape(n - 1, -1).any(1)
    starts = np.flatnonzero(first)
    u = rows[starts] if dim is None else np.moveaxis(rows[starts], 0, dim)
    inv = (np.cumsum(first) - 1).reshape(a.shape if dim is None else (n,))
    cnt = np.diff(np.append(starts, n))
    return (u, inv if return_inverse else np.zeros(0, np.int64), cnt if return_counts else np.zeros(0, np.int64))


OPS = [
    OpInfo("_unique2", _flat_samples, ref=_unique2_ref, dtypes=ALL_DTYPES, data_dependent=True),
    OpInfo("unique_dim", _dim_samples, ref=_unique_dim_ref, dtypes=ALL_DTYPES, data_dependent=True,
           errors=lambda rng: iter([err((_t([[1, 2]], dt.int64), 2), IndexError,
                                        "Dimension out of range (expected to be in range of [-2, 1], but got 2)")])),
    OpInfo("unique_consecutive", _consecutive_samples, ref=_consecutive_ref, dtypes=ALL_DTYPES, data_dependent=True),
]
