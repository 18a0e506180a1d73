"""Complex scatter_reduce and put on CUDA against the CPU backend (which matches torch's CPU): torch's CUDA reduces
complex values by sum only and refuses prod, mean, amax and amin in its words; put writes or accumulates."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 2e-5, "complex128": 1e-12}


def _rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_reduce_sum_matches_the_cpu(dim, include_self, dtype):
    a, b = _rand((3, 4), dtype, 1), _rand((3, 5), dtype, 2)
    i = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [0, 2, 2, 0]]) % (3 if dim == 0 else 4)
    out = []
    for dev in ("cuda", "cpu"):
        x = st.from_numpy(a.copy()).to(dev)
        r = x.scatter_reduce(dim, st.from_numpy(i).to(dev), st.from_numpy(b.copy()).to(dev), "sum",
                             include_self=include_self)
        y = x.clone()
        y.scatter_reduce_(dim, st.from_numpy(i).to(dev), st.from_numpy(b.copy()).to(dev), "sum",
                          include_self=include_self)
        out.append((r.cpu().numpy(), y.cpu().numpy()))
    for got, want in zip(*out):
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_other_complex_reductions_are_refused_in_torchs_words(reduce):
    x = st.zeros(2, 3, dtype=st.complex64, device="cuda")
    i = st.tensor([[0, 1, 0]], device="cuda")
    with pytest.raises(NotImplementedError, match=re.escape(
            "\"cuda_scatter_gather_base_kernel_func\" not implemented for 'ComplexFloat'")):
        x.scatter_reduce(1, i, st.ones(1, 3, dtype=st.complex64, device="cuda"), reduce)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_put_matches_the_cpu(accumulate, dtype):
    a, src = _rand((4, 5), dtype, 3), _rand((6,), dtype, 4)
    idx = np.array([1, 7, 19, -1, 3, 7]) if accumulate else np.array([1, 7, 19, -2, 3, 8])
    out = []
    for dev in ("cuda", "cpu"):
        x = st.from_numpy(a.copy()).to(dev)
        x.put_(st.from_numpy(idx).to(dev), st.from_numpy(src.copy()).to(dev), accumulate=accumulate)
        out.append(x.cpu().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=TOL[dtype], atol=TOL[dtype])
