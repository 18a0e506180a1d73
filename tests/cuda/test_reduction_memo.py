"""CUDA reductions through the plan memo (Note [Reduction plan memo]).

Each case runs three times with fresh data, so the first call (planning, then the memo entry) and
the later ones (the kept plan) are both checked against NumPy, on the layouts that take each path:
inner rows, outer columns (plain and 4-column vectors, with an aligned and a misaligned view of the
same sizes and strides), split rows with a workspace and a combine launch, a reduced dim of size 0,
index-returning reductions, and an input copied contiguous first (whose plan is not kept).
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda import reduction
from strided.tensor import make_tensor

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _cuda(arr):
    return st.from_numpy(np.ascontiguousarray(arr)).to("cuda")


def _check(fn, ref, make, rtol=1e-4, atol=1e-3):
    rng = np.random.default_rng(0)
    for _ in range(3):
        arr = rng.standard_normal(make[0]).astype(np.float32)
        t = make[1](arr)
        got = fn(t).cpu().numpy()
        np.testing.assert_allclose(got, ref(make[2](arr)), rtol=rtol, atol=atol)


def _plain(shape):
    return shape, _cuda, lambda a: a


def _transposed(shape):  # (n, m) data seen as its transpose: the reduced rows are strided
    return shape, lambda a: _cuda(a).t(), lambda a: a.T


def _offset(rows, cols, k):
    """(rows, cols) fp32 from element ``k`` of a flat buffer: same sizes and strides for any ``k``,
    aligned for the 4-column vector loads only when ``k % 4 == 0``."""
    def make(a):
        flat = _cuda(a)
        return make_tensor(flat.untyped_storage(), k, (rows, cols), (cols, 1), flat.dtype)
    return (rows * cols + k,), make, lambda a: a[k:k + rows * cols].reshape(rows, cols)


@pytest.mark.parametrize("name,make,fn,ref", [
    ("inner rows", _plain((64, 1000)), lambda t: t.sum(1), lambda a: a.sum(1)),
    ("outer columns", _plain((1000, 96)), lambda t: t.sum(0), lambda a: a.sum(0)),
    ("mean over both", _plain((300, 70)), lambda t: t.mean((0, 1)), lambda a: a.mean()),
    ("split rows", _plain((1 << 22,)), lambda t: t.sum(), lambda a: a.sum(dtype=np.float64)),
    ("amax transposed", _transposed((200, 300)), lambda t: t.amax(1), lambda a: a.max(1)),
    ("argmax", _plain((50, 333)), lambda t: t.argmax(1), lambda a: a.argmax(1)),
    ("var", _plain((40, 500)), lambda t: t.var(1), lambda a: a.var(1, ddof=1)),
])
def test_repeat_calls_match_numpy(name, make, fn, ref):
    _check(fn, ref, make, atol=1e-2 if name == "split rows" else 1e-3)


def test_aligned_and_misaligned_views_of_one_geometry():
    rows, cols = 1024, 1024  # >= 2**20 elements: the outer path may use 4-column vectors when aligned
    for k in (0, 1, 4, 3):
        _check(lambda t: t.sum(0), lambda a: a.sum(0), _offset(rows, cols, k), rtol=1e-4, atol=1e-2)


def test_empty_reduced_dim_writes_identities_every_call():
    for _ in range(3):
        x = st.empty(4, 0, device="cuda")
        assert x.sum(1).cpu().tolist() == [0.0] * 4
        assert x.prod(1).cpu().tolist() == [1.0] * 4


def test_copied_input_plan_is_not_kept():
    # neither the reduced nor the kept dim is contiguous and there are >= 2**18 elements: the input
    # is copied contiguous before reducing, and that plan (for the copy) is not kept under its key
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1400, 800)).astype(np.float32)
    t = _cuda(a)[::2, ::2]  # (700, 400), strides (1600, 2)
    for _ in range(3):
        np.testing.assert_allclose(t.sum(1).cpu().numpy(), a[::2, ::2].sum(1), rtol=1e-4, atol=1e-3)
    assert not any(k[5] == t._sizes and k[6] == t._strides for k in reduction._PLANS)
